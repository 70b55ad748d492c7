"""Custom layouts (placeholders rendered on executors), shared-folder replace, naming convention override."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pendulum
import pytest
from bucket_utils import read_rows, stored_schema

import lakeload
from lakeload.errors import LakeloadError

pytestmark = pytest.mark.usefixtures("spark")
USERS = [{"id": 1, "CamelCase": "x", "pets": [{"n": 1}]}, {"id": 2, "CamelCase": "y", "pets": []}]


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_date_tokens_extra_placeholders_and_callbacks(bucket: Path, pipelines_dir: Path) -> None:
    dest = lakeload.destinations.filesystem(
        bucket_url=str(bucket),
        layout="{table_name}/{YYYY}/{MM}/{DD}/{env}/{owner}/{load_id}.{file_id}",
        extra_placeholders={"env": "prod", "owner": lambda schema, table, load_id, file_id, ext: f"{schema}-{table[:4]}"},
        current_datetime=pendulum.datetime(2026, 11, 21, 19, 56),
    )
    p = lakeload.pipeline("layouts", destination=dest, dataset_name="ds", pipelines_dir=str(pipelines_dir))
    info = p.run(USERS, table_name="users")
    load_id = info.load_ids[0]
    data = [f for f in files(bucket / "ds") if not f.startswith(("_dlt", "init"))]
    assert [f.rsplit(".", 3)[0] for f in data] == [
        f"users/2026/11/21/prod/layouts-user/{load_id}",
        f"users__pets/2026/11/21/prod/layouts-user/{load_id}",
    ]
    assert all(f.endswith(".jsonl.gz") for f in data)  # {ext} appended
    assert any(f.startswith("_dlt_loads/layouts__") for f in files(bucket / "ds"))  # state ignores the layout
    assert len(read_rows(bucket, "ds", "users/2026/11/21/prod/layouts-user")) == 2


def test_shared_folder_layout_replace_deletes_only_that_tables_files(bucket: Path, pipelines_dir: Path) -> None:
    dest = lakeload.destinations.filesystem(bucket_url=str(bucket), layout="{table_name}.{load_id}.{file_id}.{ext}")
    p = lakeload.pipeline("shared", destination=dest, dataset_name="ds", pipelines_dir=str(pipelines_dir))
    p.run([{"id": 1}], table_name="other")
    p.run(USERS, table_name="users", write_disposition="replace")
    second = p.run(USERS[:1], table_name="users", write_disposition="replace").load_ids[0]
    names = [f for f in files(bucket / "ds") if "/" not in f and f != "init"]
    assert sorted(n.split(".")[0] for n in names) == ["other", "users", "users__pets"]
    assert all(second in n for n in names if not n.startswith("other"))


def test_unpicklable_callback_is_refused_before_loading(bucket: Path, pipelines_dir: Path) -> None:
    import threading

    lock = threading.Lock()
    dest = lakeload.destinations.filesystem(
        bucket_url=str(bucket), layout="{table_name}/{x}/{load_id}.{file_id}.{ext}",
        extra_placeholders={"x": lambda *args: str(lock)},
    )
    p = lakeload.pipeline("bad_cb", destination=dest, dataset_name="ds", pipelines_dir=str(pipelines_dir))
    with pytest.raises(LakeloadError, match="executors"):
        p.run(USERS, table_name="users")
    assert p.storage.list_packages("extracted") == p.storage.list_packages("normalized") == []  # failed before work


def test_case_sensitive_naming_convention(bucket: Path, pipelines_dir: Path) -> None:
    dest = lakeload.destinations.filesystem(bucket_url=str(bucket), naming_convention="sql_cs_v1")
    p = lakeload.pipeline("cs", destination=dest, dataset_name="ds", pipelines_dir=str(pipelines_dir))
    p.run(USERS, table_name="Users")
    schema = stored_schema(bucket, "ds")
    assert schema["normalizers"]["names"] == "sql_cs_v1"
    assert list(schema["tables"]["Users"]["columns"])[:2] == ["id", "CamelCase"]
    other: Any = lakeload.pipeline("cs", destination=lakeload.destinations.filesystem(bucket_url=str(bucket)),
                                   dataset_name="ds", pipelines_dir=str(pipelines_dir))
    with pytest.raises(LakeloadError, match="sql_cs_v1"):
        other.run(USERS, table_name="Users")

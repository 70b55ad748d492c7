"""A normalized package file damaged before its load is never published (issue 32, item 3).

The loader compares every file with its `package.json` entry (size; for Parquet the magic bytes, the footer
and its rows) before it links or copies anything, so the table folder and `_dlt_loads` stay as they were and
the error names the file and the fix (drop the package, run again).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakeload
from lakeload.errors import DamagedPackageFileError, LoadError
from lakeload.kernel.filesystem.layout import Layout
from lakeload.kernel.load.copy import CopyPayload, copy_files
from lakeload.kernel.load.file_check import damage
from lakeload.kernel.spark import working as wio

USERS = [{"id": i, "name": f"user {i}", "pets": [{"name": f"pet {i}"}]} for i in range(5)]
LOAD_ID = "1795923201.5"


def parquet_file(path: Path, rows: int) -> dict[str, Any]:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"n": list(range(rows))}), path)
    return {"path": path.name, "table": "users", "file_id": "0000000001", "ext": "parquet", "rows": rows,
            "bytes": path.stat().st_size}


def truncate(path: Path, keep: float = 0.5) -> None:
    os.truncate(path, int(path.stat().st_size * keep))


def test_an_intact_file_passes_and_each_kind_of_damage_is_named(tmp_path: Path) -> None:
    path = tmp_path / "a.parquet"
    entry = parquet_file(path, 20)
    assert damage(str(path), entry) is None
    assert damage(str(path), dict(entry, rows=21)) == "its Parquet footer counts 20 rows where normalize wrote 21"
    data = path.read_bytes()
    path.write_bytes(data[:-1] + b"X")  # same size, last magic byte overwritten
    assert "'PAR1' are missing" in str(damage(str(path), entry))
    path.write_bytes(data[:-8] + (len(data)).to_bytes(4, "little") + b"PAR1")  # a footer longer than the file
    assert "footer is longer than the file" in str(damage(str(path), entry))
    path.write_bytes(data[: len(data) // 2])
    assert damage(str(path), entry) == f"it holds {len(data) // 2} bytes where normalize wrote {len(data)}"
    assert "'PAR1' are missing" in str(damage(str(path), dict(entry, bytes=None)))  # no size recorded: the footer
    path.write_bytes(data[:4] + b"\0" * (len(data) - 12) + data[-8:])  # magic and length kept, footer zeroed
    assert "footer cannot be read" in str(damage(str(path), entry))
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_bytes(b'{"n": 1}\n{"n": 2}\n')
    assert damage(str(jsonl), {"ext": "jsonl", "rows": 2, "bytes": 18}) is None
    assert damage(str(jsonl), {"ext": "jsonl", "rows": 2, "bytes": 27}) == "it holds 18 bytes where normalize wrote 27"
    assert "cannot be read (FileNotFoundError" in str(damage(str(tmp_path / "gone.parquet"), entry))


def test_a_copy_task_checks_a_file_of_a_working_bucket_before_copying_it(tmp_path: Path) -> None:
    """Packages in a working bucket are not on the driver's disk: the copy task checks what it downloaded."""
    store = wio.WorkingStore("memory://lakeload-damaged")
    package_dir = "memory://lakeload-damaged/p/1795923201.5/normalized"
    entry = parquet_file(tmp_path / "users.parquet", 10)
    truncate(tmp_path / "users.parquet")
    remote = wio.join(package_dir, entry["path"])
    with wio.local_target(remote, store) as local:
        Path(local).write_bytes((tmp_path / "users.parquet").read_bytes())
    payload = CopyPayload(
        bucket_url=(tmp_path / "bucket").as_uri(), fs_kwargs={}, dataset_path=str(tmp_path / "bucket" / "ds"),
        package_dir=package_dir, layout=Layout.parse(), schema_name="events", load_id=LOAD_ID,
        package_timestamp="2026-11-29T03:00:00+00:00", is_local=True, working=store,
    )
    with pytest.raises(DamagedPackageFileError, match=f"Package file {remote} .*drop_pending_packages"):
        copy_files(payload, [entry])
    assert not (tmp_path / "bucket").exists()


def pipeline(bucket: Path, pipelines_dir: Path) -> Any:
    return lakeload.pipeline("damaged", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                             pipelines_dir=str(pipelines_dir))


def published(bucket: Path) -> list[str]:
    return sorted(str(p.relative_to(bucket)) for p in bucket.rglob("*") if p.is_file())


@pytest.mark.usefixtures("spark")
@pytest.mark.parametrize(("file_format", "where"), [("parquet", "beside"), ("jsonl", "beside"), ("parquet", "other_disk")])
def test_a_damaged_file_of_a_pending_package_is_not_published(
    tmp_path: Path, request: pytest.FixtureRequest, file_format: str, where: str
) -> None:
    """`beside`: the driver links the files; `other_disk`: Spark tasks copy them (no hard link reaches it)."""
    bucket = tmp_path / "bucket" if where == "beside" else request.getfixturevalue("other_disk")
    pipelines_dir = tmp_path / "pipelines"
    p = pipeline(bucket, pipelines_dir)
    p.run([{"id": 100, "name": "earlier", "pets": []}], table_name="users", loader_file_format=file_format)
    before = published(bucket)
    load_id = p.extract(USERS, table_name="users", loader_file_format=file_format).loads_ids[0]
    p.normalize()  # the package is pending: normalized, not loaded
    package_dir = pipelines_dir / "damaged" / "load" / "normalized" / load_id
    files = json.loads((package_dir / "package.json").read_text())["files"]
    users = next(f for f in files if f["table"] == "users")
    truncate(package_dir / users["path"])
    for _ in range(2):  # a later load notices too: the package stays pending and fails the same way
        with pytest.raises(LoadError) as failed:
            p.load()
        assert isinstance(failed.value.__cause__, DamagedPackageFileError)
        message = str(failed.value)
        assert str(package_dir / users["path"]) in message and "table 'users'" in message
        assert "drop_pending_packages()" in message and "is damaged" in message
        assert published(bucket) == before  # no data file of the package (nor users__pets'), no _dlt_loads record
    p.drop_pending_packages()
    p.run(USERS, table_name="users", loader_file_format=file_format)
    with p.sql_client() as client:
        counts = {t: client.execute_sql(f"SELECT count(*) FROM {t}")[0][0] for t in ("users", "users__pets")}
    assert counts == {"users": 6, "users__pets": 5}
    assert len(list((bucket / "ds" / "_dlt_loads").iterdir())) == 2


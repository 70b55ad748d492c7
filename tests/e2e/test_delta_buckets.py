"""Delta tables in real buckets on loopback servers (S3 on moto, Azure on Azurite): every disposition."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from servers.fixtures import fresh_prefix
from test_buckets import destination

import lakeload
from lakeload.delta import get_delta_tables
from lakeload.errors import PipelineStepFailed

pytestmark = pytest.mark.usefixtures("spark")


def users(disposition: Any, name: str = "users", **hints: Any) -> Any:
    @lakeload.resource(name=name, table_format="delta", write_disposition=disposition, **hints)
    def resource(data: list[dict[str, Any]]) -> Any:
        yield from data

    return resource


def snapshot(p: lakeload.Pipeline, table: str, *columns: str) -> list[tuple[Any, ...]]:
    data = get_delta_tables(p, table)[table].to_pyarrow_table().to_pylist()
    return sorted(tuple(r[c] for c in columns) for r in data)


@pytest.mark.parametrize("backend", ["s3", "az"])
def test_delta_dispositions_on_bucket(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    p = lakeload.pipeline("delta_" + backend, destination=destination(backend, request, fresh_prefix()), dataset_name="ds",
                          pipelines_dir=str(tmp_path / "pipes"))
    part = {"day": {"partition": True}}
    p.run(users("append", columns=part)([{"id": 1, "day": "d0", "pets": ["a", "b"]}]))
    p.run(users("append", columns=part)([{"id": 2, "day": "d0", "pets": ["c"], "score": 1.5}]))
    assert snapshot(p, "users", "id", "score") == [(1, None), (2, 1.5)]
    assert snapshot(p, "users__pets", "value") == [("a",), ("b",), ("c",)]
    p.run(users("replace", columns={"day": {"partition": True}})([{"id": 3, "day": "d1", "pets": ["x", "y"]}]))
    assert snapshot(p, "users", "id") == [(3,)] and get_delta_tables(p)["users"].version() == 3  # create, add column, append, replace
    merge = users("merge", primary_key="id", columns={"day": {"partition": True}, "gone": {"hard_delete": True, "data_type": "bool"}})
    items = users("merge", "items", primary_key="id")  # unpartitioned: its removals are found in pyarrow tasks
    p.run([merge([{"id": 3, "day": "d1", "pets": ["x"]}, {"id": 4, "day": "d2", "pets": ["z"]}]),
           items([{"id": 1, "pets": ["a", "b"]}, {"id": 2, "pets": ["c"]}])])
    p.run([merge([{"id": 4, "day": "d2", "gone": True}]), items([{"id": 1, "pets": ["n"]}])])
    assert snapshot(p, "users", "id", "day") == [(3, "d1")]
    assert snapshot(p, "users__pets", "value") == [("x",)]  # y removed from the list, z deleted with its record
    assert snapshot(p, "items__pets", "value") == [("c",), ("n",)]
    assert dict(p.dataset().row_counts()) == {"users": 1, "users__pets": 1, "items": 2, "items__pets": 2} | {
        k: v for k, v in dict(p.dataset().row_counts()).items() if k.startswith("_dlt")
    }
    frame = p.dataset().users.spark()
    assert [(r["id"], r["day"]) for r in frame.collect()] == [(3, "d1")]
    with p.sql_client() as client:
        assert client.execute_sql("SELECT u.id, p.value FROM users u JOIN users__pets p ON p._dlt_parent_id = u._dlt_id") == [
            (3, "x")
        ]


def test_delta_on_sftp_is_refused_and_the_package_stays(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    p = lakeload.pipeline("delta_sftp", destination=destination("sftp", request, fresh_prefix()), dataset_name="ds",
                          pipelines_dir=str(tmp_path / "pipes"))
    with pytest.raises(PipelineStepFailed, match="sftp.*table_format=\"delta\""):
        p.run(users("append")([{"id": 1}]))
    assert p.storage.list_packages("normalized")

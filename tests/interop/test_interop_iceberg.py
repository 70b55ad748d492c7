"""dlt 1.31 and lakeload share Iceberg tables both ways: each continues (upserts into, appends to) a table the other
wrote, nested tables included, and each reads what the other wrote (dlt through its own pyiceberg catalog, the
newest metadata file in the bucket; lakeload through its embedded catalog)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.usefixtures("spark"), pytest.mark.slow]
pytest.importorskip("pyiceberg")

DATASET = "shop"


def _records(ids: range, version: int) -> list[dict[str, Any]]:
    return [{"id": i, "name": f"v{version}-{i}", "tags": [f"t{i}.{k}.v{version}" for k in range(1 + i % 3)]} for i in ids]


def _pipeline(lib: Any, root: Path, bucket: Path, name: str) -> Any:
    return lib.pipeline(name, destination=lib.destinations.filesystem(str(bucket)), pipelines_dir=str(root / name),
                        dataset_name=DATASET)


def _merge(lib: Any, data: Any) -> Any:
    return lib.resource(data, name="users", write_disposition="merge", primary_key="id", table_format="iceberg")


def _read(pipeline: Any, get_tables: Any) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    tables = get_tables(pipeline)
    users = tables["users"].scan().to_arrow().to_pylist()
    tags = tables["users__tags"].scan().to_arrow().to_pylist()
    by_id = {u["_dlt_id"]: u["id"] for u in users}
    return sorted((u["id"], u["name"]) for u in users), sorted((by_id[t["_dlt_root_id"]], t["value"]) for t in tags)


def test_dlt_and_lakeload_upsert_one_iceberg_table_in_turn(tmp_path: Path) -> None:
    import dlt
    from dlt.common.libs.pyiceberg import get_iceberg_tables as dlt_tables

    import lakeload
    from lakeload.iceberg import get_iceberg_tables

    bucket = tmp_path / "bucket"
    ours, theirs = _pipeline(lakeload, tmp_path, bucket, "ll"), _pipeline(dlt, tmp_path, bucket, "dl")
    expected: dict[int, dict[str, Any]] = {}
    for lib, pipeline, ids, version in ((lakeload, ours, range(0, 6), 0), (dlt, theirs, range(3, 9), 1),
                                         (lakeload, ours, range(7, 11), 2), (dlt, theirs, range(0, 2), 3)):
        records = _records(ids, version)
        pipeline.run(_merge(lib, records))
        expected.update({r["id"]: r for r in records})
    users = sorted((i, r["name"]) for i, r in expected.items())
    tags = sorted((i, t) for i, r in expected.items() for t in r["tags"])
    assert _read(theirs, dlt_tables) == (users, tags)  # dlt reads every load, its own and lakeload's
    assert _read(ours, get_iceberg_tables) == (users, tags)
    with ours.sql_client() as client:
        assert client.execute_sql("SELECT count(*), count(DISTINCT id) FROM users") == [(11, 11)]


def test_dlt_appends_to_a_lakeload_iceberg_table_and_lakeload_appends_after(tmp_path: Path) -> None:
    import dlt

    import lakeload

    bucket = tmp_path / "bucket"
    ours, theirs = _pipeline(lakeload, tmp_path, bucket, "ll"), _pipeline(dlt, tmp_path, bucket, "dl")
    ours.run([{"id": 1, "at": "2026-01-01T00:00:00Z"}], table_name="events", table_format="iceberg")
    theirs.run([{"id": 2, "at": "2026-01-02T00:00:00Z"}], table_name="events", table_format="iceberg")
    ours.run([{"id": 3, "at": "2026-01-03T00:00:00Z", "extra": "x"}], table_name="events", table_format="iceberg")
    with ours.sql_client() as client:
        assert client.execute_sql("SELECT id, extra FROM events ORDER BY id") == [(1, None), (2, None), (3, "x")]

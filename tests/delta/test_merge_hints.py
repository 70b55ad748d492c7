"""Delta merges whose hint columns (hard_delete, dedup_sort, merge_key) get no data in a load: read as null.

The usual case is the seed's own: `columns={"deleted": {"hard_delete": True}}` while the first loads have no
`deleted` key. dlt 1.31 keeps such a column in the schema without a data type and leaves it out of the Delta
table until values arrive; lakeload does the same (the second test checks it against dlt itself).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

import lakeload

pytestmark = pytest.mark.usefixtures("spark")


def make_pipeline(bucket: Path, pipelines_dir: Path) -> lakeload.Pipeline:
    return lakeload.pipeline(
        "hints", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds", pipelines_dir=str(pipelines_dir)
    )


def users_resource(module: Any, **hints: Any) -> Any:
    @module.resource(name="users", write_disposition="merge", primary_key="id", table_format="delta",
                     columns={"deleted": {"hard_delete": True}, **hints})
    def users(data: list[dict[str, Any]]) -> Any:
        yield from data

    return users


def read(bucket: Path, table: str) -> list[dict[str, Any]]:
    return DeltaTable(str(bucket / "ds" / table)).to_pyarrow_table().to_pylist()


def stored_users_columns(bucket: Path) -> list[list[tuple[str, str | None]]]:
    """The `users` columns (name, data type) of every `_dlt_version` record, oldest first."""
    found = []
    for path in sorted((bucket / "ds" / "_dlt_version").iterdir(), key=lambda p: p.name.split("__")[1]):
        schema = json.loads(json.loads(path.read_text())["schema"])
        found.append([(n, c.get("data_type")) for n, c in schema["tables"]["users"]["columns"].items()])
    return found


def test_hard_delete_column_absent_from_the_first_loads_then_deletes_root_and_nested_rows(
    bucket: Path, pipelines_dir: Path
) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    users = users_resource(lakeload)
    p.run(users([{"id": i, "name": f"u{i}", "pets": [{"n": i}, {"n": i + 10}]} for i in (1, 2, 3)]))
    assert "deleted" not in DeltaTable(str(bucket / "ds" / "users")).schema().to_arrow().names  # type: ignore[union-attr]
    p.run(users([{"id": 2, "name": "again", "pets": [{"n": 22}]}]))  # still no `deleted`: a plain upsert
    assert sorted((r["id"], r["name"]) for r in read(bucket, "users")) == [(1, "u1"), (2, "again"), (3, "u3")]
    p.run(users([{"id": 1, "deleted": True}, {"id": 3, "deleted": False, "name": "kept"}, {"id": 4, "name": "u4"}]))
    got = read(bucket, "users")
    assert sorted((r["id"], r["name"], r["deleted"]) for r in got) == [(2, "again", None), (3, "kept", False), (4, "u4", None)]
    ids = {r["_dlt_id"]: r["id"] for r in got}
    pets = read(bucket, "users__pets")
    assert sorted((ids[r["_dlt_root_id"]], r["n"]) for r in pets) == [(2, 22)]  # 1 deleted; 3 and 4 came without pets
    assert all(r["_dlt_parent_id"] in ids for r in pets)
    p.run(users([{"id": 5, "name": "u5", "pets": [{"n": 5}]}]))  # and later loads go on
    assert sorted(r["id"] for r in read(bucket, "users")) == [2, 3, 4, 5]
    assert sorted(r["n"] for r in read(bucket, "users__pets")) == [5, 22]
    assert not p.storage.list_packages("normalized")


def test_schema_and_delta_table_match_dlt(bucket: Path, pipelines_dir: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The hint-only column stays out of the Delta table until it has values, then moves to the end of the
    schema's columns, in lakeload's and in dlt's bucket alike."""
    import dlt

    monkeypatch.setenv("DLT_DATA_DIR", str(tmp_path / "dlt_data"))
    loads = ([{"id": 1}, {"id": 2}], [{"id": 1, "deleted": True}, {"id": 3}], [{"id": 4}, {"id": 2, "deleted": False}])
    results = {}
    for name, module in (("lakeload", lakeload), ("dlt", dlt)):
        root = tmp_path / name
        pipe = module.pipeline("hints", destination=module.destinations.filesystem(str(root / "bucket")),
                               dataset_name="ds", pipelines_dir=str(root / "pipelines"))
        users, seen = users_resource(module), []
        for data in loads:
            pipe.run(users(data))
            table = DeltaTable(str(root / "bucket" / "ds" / "users"))
            rows = sorted((r["id"], r.get("deleted")) for r in table.to_pyarrow_table().to_pylist())
            seen.append((table.schema().to_arrow().names, rows))  # type: ignore[union-attr]
        results[name] = (seen, stored_users_columns(root / "bucket"))
    assert results["lakeload"] == results["dlt"]
    assert results["lakeload"][0][-1] == (["id", "_dlt_load_id", "_dlt_id", "deleted"], [(2, False), (3, None), (4, None)])
    assert os.listdir(tmp_path / "lakeload" / "bucket" / "ds" / "_dlt_version")


def test_dedup_sort_and_merge_key_columns_without_data(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    users = users_resource(lakeload, ts={"dedup_sort": "desc"}, region={"merge_key": True})
    p.run(users([{"id": 1, "v": "a"}, {"id": 1, "v": "b"}, {"id": 2, "v": "c"}]))  # no ts: the later record wins
    p.run(users([{"id": 2, "v": "d"}, {"id": 3, "v": "e"}]))  # no region: only the primary key matches
    assert sorted((r["id"], r["v"]) for r in read(bucket, "users")) == [(1, "b"), (2, "d"), (3, "e")]


def test_spark_frame_without_the_hard_delete_column(bucket: Path, pipelines_dir: Path, spark: Any) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    hints = {"write_disposition": "merge", "primary_key": "id", "table_format": "delta",
             "columns": {"deleted": {"hard_delete": True}}}
    p.run(spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string"), table_name="users", **hints)
    p.run(spark.createDataFrame([(2, "c"), (3, "d")], "id long, name string"), table_name="users", **hints)
    assert sorted((r["id"], r["name"]) for r in read(bucket, "users")) == [(1, "a"), (2, "c"), (3, "d")]
    p.run(spark.createDataFrame([(1, True), (3, False)], "id long, deleted boolean"), table_name="users", **hints)
    assert sorted((r["id"], r["name"], r["deleted"]) for r in read(bucket, "users")) == [(2, "c", None), (3, None, False)]

"""The Delta log through delta-rs: idempotent commits, schema evolution, partition checks, conflicts."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from lakeload.delta.commit import DeltaTarget, app_id, txn_version
from lakeload.errors import DeltaConflictError, DestinationError

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def add_file(root: Path, name: str, table: pa.Table) -> dict:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return {"path": name, "size": os.path.getsize(path), "partition_values": {}, "modification_time": int(time.time() * 1000),
            "stats": json.dumps({"numRecords": table.num_rows})}


def target(root: Path, schema: pa.Schema = SCHEMA, partition_by: tuple[str, ...] = ()) -> DeltaTarget:
    t = DeltaTarget("users", str(root), {}, schema, partition_by)
    t.open()
    return t


def test_txn_versions_grow_with_load_ids() -> None:
    assert txn_version("1732200000.123456") == 1732200000123456
    assert txn_version("1732200000.5") < txn_version("1732200000.500001")
    assert app_id("p") == "lakeload-p"


def test_commit_is_recorded_and_detected(tmp_path: Path) -> None:
    t = target(tmp_path)
    assert t.table is None and not t.committed("lakeload-p", 5)
    t.commit([add_file(tmp_path, "a.parquet", pa.table({"id": [1], "name": ["a"]}))], [], "append", "lakeload-p", 5)
    again = target(tmp_path)
    assert again.committed("lakeload-p", 5) and not again.committed("lakeload-p", 6)
    assert not again.committed("lakeload-other", 5)
    again.commit([add_file(tmp_path, "b.parquet", pa.table({"id": [2], "name": ["b"]}))], [], "append", "lakeload-p", 6)
    assert DeltaTable(str(tmp_path)).version() == 1 and target(tmp_path).committed("lakeload-p", 6)


def test_new_columns_evolve_the_table(tmp_path: Path) -> None:
    target(tmp_path).commit([add_file(tmp_path, "a.parquet", pa.table({"id": [1], "name": ["a"]}))], [], "append", "x", 1)
    wider = SCHEMA.append(pa.field("score", pa.float64()))
    t = target(tmp_path, wider)
    assert t.table_schema().names == ["id", "name", "score"]
    t.commit([add_file(tmp_path, "b.parquet", pa.table({"id": [2], "name": ["b"], "score": [1.5]}))], [], "append", "x", 2)
    rows = sorted(DeltaTable(str(tmp_path)).to_pyarrow_table().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "name": "a", "score": None}, {"id": 2, "name": "b", "score": 1.5}]


def test_overwrite_replaces_in_one_version_and_keeps_history(tmp_path: Path) -> None:
    target(tmp_path).commit([add_file(tmp_path, "a.parquet", pa.table({"id": [1], "name": ["a"]}))], [], "append", "x", 1)
    target(tmp_path).commit([add_file(tmp_path, "b.parquet", pa.table({"id": [2], "name": ["b"]}))], [], "overwrite", "x", 2)
    table = DeltaTable(str(tmp_path))
    assert table.version() == 1 and table.to_pyarrow_table().to_pylist() == [{"id": 2, "name": "b"}]
    table.load_as_version(0)
    assert table.to_pyarrow_table().to_pylist() == [{"id": 1, "name": "a"}]


def test_partition_columns_cannot_change(tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int64()), ("day", pa.string())])
    first = target(tmp_path, schema, ("day",))
    first.commit([], [], "append", "x", 1)
    with pytest.raises(DestinationError, match=r"partitioned by \['day'\], the schema asks for \['id'\]"):
        target(tmp_path, schema, ("id",)).check_partitions()
    with pytest.raises(DestinationError, match=r"the schema asks for \[\]"):
        target(tmp_path, schema).check_partitions()
    target(tmp_path, schema, ("day",)).check_partitions()


def test_stale_remove_is_a_clean_conflict(tmp_path: Path) -> None:
    first = add_file(tmp_path, "a.parquet", pa.table({"id": [1], "name": ["a"]}))
    target(tmp_path).commit([first], [], "append", "x", 1)
    one, two = target(tmp_path), target(tmp_path)
    removal = [{"path": "a.parquet", "size": first["size"], "partition_values": {}}]
    one.commit([add_file(tmp_path, "b.parquet", pa.table({"id": [1], "name": ["b"]}))], removal, "append", "p1", 1)
    with pytest.raises(DeltaConflictError, match="Another writer committed to Delta table 'users'.*pipeline.load"):
        two.commit([add_file(tmp_path, "c.parquet", pa.table({"id": [1], "name": ["c"]}))], removal, "append", "p2", 1)
    assert DeltaTable(str(tmp_path)).to_pyarrow_table().to_pylist() == [{"id": 1, "name": "b"}]
    assert not target(tmp_path).committed("p2", 1)


def test_errors_hide_storage_secrets(tmp_path: Path) -> None:
    t = DeltaTarget("users", "s3://no-such-bucket-xyz/t", {"AWS_SECRET_ACCESS_KEY": "supersecretvalue",
                    "AWS_ENDPOINT_URL": "http://127.0.0.1:9/supersecretvalue", "AWS_ALLOW_HTTP": "true"}, SCHEMA)
    assert "supersecret" not in repr(t)
    with pytest.raises(DestinationError) as err:
        t.table = None
        t.commit([], [], "append", "x", 1)
    assert "supersecretvalue" not in str(err.value)

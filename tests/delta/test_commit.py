"""The Delta log through delta-rs: commits marked by load, schema evolution, partition checks, conflicts."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from lakeload.delta.commit import DeltaTarget
from lakeload.delta.marks import REMOVALS, LoadMark, txn_version
from lakeload.errors import DeltaConflictError, DeltaWriteConflict, DestinationError

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


def mark(load_id: str, pipeline: str = "p") -> LoadMark:
    return LoadMark(pipeline, load_id)


def test_marks_name_the_pipeline_the_step_and_the_load() -> None:
    assert txn_version("1732200000.123456") == 1732200000123456
    first = mark("1732200000.5")
    assert first.app == "lakeload-p/1732200000.5" and first.version == 1732200000500000
    assert first.of_step(REMOVALS).app == "lakeload-p.removals/1732200000.5"
    assert first.legacy_app == "lakeload-p"


def test_commit_is_recorded_and_detected(tmp_path: Path) -> None:
    t = target(tmp_path)
    assert t.table is None and not t.committed(mark("5"))
    t.commit([add_file(tmp_path, "a.parquet", pa.table({"id": [1], "name": ["a"]}))], [], "append", mark("5"))
    again = target(tmp_path)
    assert again.committed(mark("5")) and not again.committed(mark("6"))
    assert not again.committed(mark("5", "other")) and not again.committed(mark("5").of_step(REMOVALS))
    again.commit([add_file(tmp_path, "b.parquet", pa.table({"id": [2], "name": ["b"]}))], [], "append", mark("6"))
    assert DeltaTable(str(tmp_path)).version() == 1 and target(tmp_path).committed(mark("6"))


def test_a_load_older_than_the_last_commit_is_not_taken_as_committed(tmp_path: Path) -> None:
    """The same pipeline name from two working folders, or a clock that stepped back: a load whose id is older
    than the table's last load of that pipeline has not committed until its own mark is there."""
    target(tmp_path).commit([add_file(tmp_path, "new.parquet", pa.table({"id": [2], "name": ["b"]}))], [], "append",
                            mark("1732203600.0"))
    older = target(tmp_path)
    assert not older.committed(mark("1732200000.0"))
    older.commit([add_file(tmp_path, "old.parquet", pa.table({"id": [1], "name": ["a"]}))], [], "append", mark("1732200000.0"))
    again = target(tmp_path)
    assert again.committed(mark("1732200000.0")) and again.committed(mark("1732203600.0"))
    assert sorted(r["id"] for r in DeltaTable(str(tmp_path)).to_pyarrow_table().to_pylist()) == [1, 2]


def test_a_commit_of_an_older_lakeload_counts_only_at_its_exact_version(tmp_path: Path) -> None:
    """Packages left pending by a lakeload whose application id named only the pipeline."""
    from deltalake.transaction import CommitProperties, Transaction

    first = add_file(tmp_path, "a.parquet", pa.table({"id": [1], "name": ["a"]}))
    target(tmp_path).commit([first], [], "append")
    table = DeltaTable(str(tmp_path))
    table.create_write_transaction([], "append", table.schema(), commit_properties=CommitProperties(
        app_transactions=[Transaction("lakeload-p", txn_version("1732203600.0"))]))
    assert target(tmp_path).committed(mark("1732203600.0"))
    assert not target(tmp_path).committed(mark("1732200000.0"))


def test_a_strict_commit_lands_only_on_the_snapshot_it_read(tmp_path: Path) -> None:
    """A merge's commit says what it read: another writer's commit since (even one that only adds files) fails it,
    nothing of it lands, and its mark is not there."""
    target(tmp_path).commit([add_file(tmp_path, "a.parquet", pa.table({"id": [1], "name": ["a"]}))], [], "append")
    mine, other = target(tmp_path), target(tmp_path)
    other.commit([add_file(tmp_path, "b.parquet", pa.table({"id": [2], "name": ["b"]}))], [], "append", mark("2", "q"))
    with pytest.raises(DeltaWriteConflict, match="Another writer committed to Delta table 'users' after this load read it"):
        mine.commit([add_file(tmp_path, "c.parquet", pa.table({"id": [2], "name": ["c"]}))], [], "append", mark("3"), strict=True)
    assert sorted(r["name"] for r in DeltaTable(str(tmp_path)).to_pyarrow_table().to_pylist()) == ["a", "b"]
    assert not target(tmp_path).committed(mark("3"))


def test_strict_commits_of_one_load_build_on_each_other(tmp_path: Path) -> None:
    """After a strict commit the target holds its new version (a new column added first included), so the same
    load's next strict commit lands on it, and a foreign commit in between still fails it."""
    target(tmp_path).commit([add_file(tmp_path, "a.parquet", pa.table({"id": [1], "name": ["a"]}))], [], "append")
    wider = SCHEMA.append(pa.field("score", pa.float64()))
    t = target(tmp_path, wider)
    t.commit([add_file(tmp_path, "b.parquet", pa.table({"id": [2], "name": ["b"], "score": [1.0]}))], [], "append",
             mark("2"), strict=True)
    t.commit([add_file(tmp_path, "c.parquet", pa.table({"id": [3], "name": ["c"], "score": [2.0]}))], [], "append",
             mark("2").of_step(REMOVALS), strict=True)
    assert t.table is not None and t.table.version() == DeltaTable(str(tmp_path)).version() == 3
    target(tmp_path).commit([add_file(tmp_path, "d.parquet", pa.table({"id": [4], "name": ["d"]}))], [], "append")
    with pytest.raises(DeltaWriteConflict):
        t.commit([add_file(tmp_path, "e.parquet", pa.table({"id": [5], "name": ["e"]}))], [], "append", mark("9"), strict=True)
    assert sorted(r["id"] for r in DeltaTable(str(tmp_path)).to_pyarrow_table().to_pylist()) == [1, 2, 3, 4]


def test_a_strict_schema_change_fails_on_a_foreign_commit_too(tmp_path: Path) -> None:
    target(tmp_path).commit([add_file(tmp_path, "a.parquet", pa.table({"id": [1], "name": ["a"]}))], [], "append")
    wider = SCHEMA.append(pa.field("score", pa.float64()))
    mine = target(tmp_path, wider)
    target(tmp_path).commit([add_file(tmp_path, "b.parquet", pa.table({"id": [2], "name": ["b"]}))], [], "append")
    with pytest.raises(DeltaWriteConflict):
        mine.commit([add_file(tmp_path, "c.parquet", pa.table({"id": [3], "name": ["c"], "score": [1.0]}))], [], "append",
                    mark("3"), strict=True)
    assert DeltaTable(str(tmp_path)).schema().to_arrow().names == ["id", "name"]  # type: ignore[attr-defined]


def test_new_columns_evolve_the_table(tmp_path: Path) -> None:
    target(tmp_path).commit([add_file(tmp_path, "a.parquet", pa.table({"id": [1], "name": ["a"]}))], [], "append", mark("1"))
    wider = SCHEMA.append(pa.field("score", pa.float64()))
    t = target(tmp_path, wider)
    assert t.table_schema().names == ["id", "name", "score"]
    t.commit([add_file(tmp_path, "b.parquet", pa.table({"id": [2], "name": ["b"], "score": [1.5]}))], [], "append", mark("2"))
    rows = sorted(DeltaTable(str(tmp_path)).to_pyarrow_table().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "name": "a", "score": None}, {"id": 2, "name": "b", "score": 1.5}]


def test_overwrite_replaces_in_one_version_and_keeps_history(tmp_path: Path) -> None:
    target(tmp_path).commit([add_file(tmp_path, "a.parquet", pa.table({"id": [1], "name": ["a"]}))], [], "append", mark("1"))
    target(tmp_path).commit([add_file(tmp_path, "b.parquet", pa.table({"id": [2], "name": ["b"]}))], [], "overwrite", mark("2"))
    table = DeltaTable(str(tmp_path))
    assert table.version() == 1 and table.to_pyarrow_table().to_pylist() == [{"id": 2, "name": "b"}]
    table.load_as_version(0)
    assert table.to_pyarrow_table().to_pylist() == [{"id": 1, "name": "a"}]


def test_partition_columns_cannot_change(tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int64()), ("day", pa.string())])
    first = target(tmp_path, schema, ("day",))
    first.commit([], [], "append", mark("1"))
    with pytest.raises(DestinationError, match=r"partitioned by \['day'\], the schema asks for \['id'\]"):
        target(tmp_path, schema, ("id",)).check_partitions()
    with pytest.raises(DestinationError, match=r"the schema asks for \[\]"):
        target(tmp_path, schema).check_partitions()
    target(tmp_path, schema, ("day",)).check_partitions()


def test_stale_remove_is_a_clean_conflict(tmp_path: Path) -> None:
    first = add_file(tmp_path, "a.parquet", pa.table({"id": [1], "name": ["a"]}))
    target(tmp_path).commit([first], [], "append", mark("1"))
    one, two = target(tmp_path), target(tmp_path)
    removal = [{"path": "a.parquet", "size": first["size"], "partition_values": {}}]
    one.commit([add_file(tmp_path, "b.parquet", pa.table({"id": [1], "name": ["b"]}))], removal, "append", mark("1", "p1"))
    with pytest.raises(DeltaConflictError, match="Another writer committed to Delta table 'users'.*pipeline.load"):
        two.commit([add_file(tmp_path, "c.parquet", pa.table({"id": [1], "name": ["c"]}))], removal, "append", mark("1", "p2"))
    assert DeltaTable(str(tmp_path)).to_pyarrow_table().to_pylist() == [{"id": 1, "name": "b"}]
    assert not target(tmp_path).committed(mark("1", "p2"))


def test_errors_hide_storage_secrets(tmp_path: Path) -> None:
    t = DeltaTarget("users", "s3://no-such-bucket-xyz/t", {"AWS_SECRET_ACCESS_KEY": "supersecretvalue",
                    "AWS_ENDPOINT_URL": "http://127.0.0.1:9/supersecretvalue", "AWS_ALLOW_HTTP": "true"}, SCHEMA)
    assert "supersecret" not in repr(t)
    with pytest.raises(DestinationError) as err:
        t.table = None
        t.commit([], [], "append", mark("1"))
    assert "supersecretvalue" not in str(err.value)

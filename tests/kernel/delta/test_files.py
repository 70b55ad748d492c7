"""Delta data files written by executor code, committed with delta-rs and read back (no Spark needed)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from lakeload.delta.commit import DeltaTarget
from lakeload.delta.marks import LoadMark
from lakeload.kernel.delta.files import (
    DeltaFileSpec,
    FileStats,
    conform,
    delta_schema,
    partition_dir,
    partition_value,
    write_files,
)
from lakeload.kernel.delta.read import SnapshotSpec, read_file

UTC = dt.timezone.utc


def spec_for(root: Path, schema: pa.Schema, partition_by: tuple[str, ...] = ()) -> DeltaFileSpec:
    return DeltaFileSpec("file://" + str(root), {}, str(root), schema, partition_by, prefix="1.5-append")


def test_types_are_made_delta_compatible() -> None:
    schema = pa.schema(
        [
            ("ts", pa.timestamp("ns", tz="Etc/UTC")),
            ("t", pa.time64("us")),
            ("w", pa.decimal256(76, 0)),
            ("b", pa.binary(4)),
            ("n", pa.int64(), False),
        ]
    )
    out = delta_schema(schema)
    assert out.field("ts").type == pa.timestamp("us", tz="UTC")
    assert out.field("t").type == pa.string() and out.field("w").type == pa.string()
    assert out.field("b").type == pa.binary()
    assert all(f.nullable for f in out)


def test_conform_drops_extra_and_fills_missing_columns() -> None:
    table = pa.table({"b": [1, 2], "extra": ["x", "y"]})
    out = conform(table, pa.schema([("a", pa.string()), ("b", pa.int32())]))
    assert out.to_pylist() == [{"a": None, "b": 1}, {"a": None, "b": 2}]


def test_partition_values_and_folders_match_delta_rs(tmp_path: Path) -> None:
    """Our serialization and escaping equal what delta-rs itself writes for the same values."""
    values = ["a b", "x/y", None, "é%", "k=v"]
    stamp = dt.datetime(2024, 1, 1, 1, 2, 3, 456789, tzinfo=UTC)
    theirs = tmp_path / "theirs"
    write_deltalake(str(theirs), pa.table({"k": values, "n": [1, 2, 3, 4, 5]}), partition_by=["k"])
    logged = DeltaTable(str(theirs)).get_add_actions(flatten=True)
    expected = {(r["partition.k"], r["path"].split("/")[0]) for r in pa.table(logged).to_pylist()}
    ours = {(partition_value(v), partition_dir(("k",), {"k": partition_value(v)})) for v in values}
    # the log path is URL-encoded once more than the folder: compare folders through the physical names
    physical = {p.name for p in theirs.iterdir() if p.name.startswith("k=")}
    assert {folder for _, folder in ours} == physical
    assert {v for v, _ in ours} == {v for v, _ in expected}
    assert partition_value(stamp) == "2024-01-01 01:02:03.456789"
    assert partition_value(dt.date(2024, 5, 6)) == "2024-05-06" and partition_value(True) == "true"


def test_stats_round_timestamps_outward_and_skip_nan() -> None:
    stats = FileStats()
    stats.add(
        pa.table(
            {
                "ts": pa.array([dt.datetime(2024, 1, 1, 0, 0, 0, 1500, tzinfo=UTC), None], pa.timestamp("us", tz="UTC")),
                "f": [1.0, float("nan")],
                "s": ["b", "a"],
            }
        )
    )
    stats.add(pa.table({"ts": pa.array([None, None], pa.timestamp("us", tz="UTC")), "f": [0.5, 2.0], "s": ["c", None]}))
    decoded = json.loads(stats.to_json())
    assert decoded["numRecords"] == 4
    assert decoded["nullCount"] == {"ts": 3, "f": 0, "s": 1}
    assert decoded["minValues"] == {"ts": "2024-01-01T00:00:00.001Z", "s": "a"}
    assert decoded["maxValues"] == {"ts": "2024-01-01T00:00:00.002Z", "s": "c"}  # max rounded up, never below a value


def test_written_partitioned_files_commit_and_read_back(tmp_path: Path) -> None:
    schema = delta_schema(pa.schema([("id", pa.int64()), ("day", pa.date32()), ("name", pa.string())]))
    root = tmp_path / "events"
    data = pa.table(
        {"id": [1, 2, 3, 4], "day": [dt.date(2024, 1, 1), dt.date(2024, 1, 2), None, dt.date(2024, 1, 1)], "name": list("abcd")}
    )
    adds = write_files(spec_for(root, schema, ("day",)), data.to_batches(max_chunksize=2), "00001-0")
    assert sorted(a["partition_values"]["day"] or "" for a in adds) == ["", "2024-01-01", "2024-01-02"]
    for add in adds:  # partition columns are not stored in the files
        folder = add["path"].split("/")[0]
        assert folder.startswith("day=")
        assert pq.read_schema(root / folder / add["path"].split("/")[1]).names == ["id", "name"]
    target = DeltaTarget("events", str(root), {}, schema, ("day",))
    target.open()
    target.commit(adds, [], "append", LoadMark("test", "10"))
    table = DeltaTable(str(root))
    assert table.metadata().partition_columns == ["day"]
    assert sorted(table.to_pyarrow_table().to_pylist(), key=lambda r: r["id"]) == sorted(data.to_pylist(), key=lambda r: r["id"])
    # our executor reader gives the same rows, partition column typed, with the file it came from
    read_schema = schema.append(pa.field("_lakeload_file", pa.string()))
    snap = SnapshotSpec("file://" + str(root), {}, str(root), read_schema, with_file=True)
    rows: list[dict] = []
    target.open()
    for f in target.files():
        for part in read_file(snap, f["path"], f["partition_values"]):
            rows += part.to_pylist()
    assert sorted((r["id"], r["day"], r["_lakeload_file"] == r["_lakeload_file"]) for r in rows) == sorted(
        (r["id"], r["day"], True) for r in data.to_pylist()
    )


def test_failed_write_leaves_no_files(tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int64())])

    def batches():  # type: ignore[no-untyped-def]
        yield pa.record_batch({"id": [1]})
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_files(spec_for(tmp_path / "t", schema), batches(), "00000-0")
    assert not any(p.is_file() for p in (tmp_path / "t").rglob("*"))


def test_files_in_escaped_partition_folders_can_be_read_and_removed(tmp_path: Path) -> None:
    """Log paths are URL-encoded by delta-rs: our add actions give physical paths, removals decode log paths."""
    from urllib.parse import unquote

    schema = delta_schema(pa.schema([("id", pa.int64()), ("k", pa.string())]))
    root = tmp_path / "t"
    adds = write_files(spec_for(root, schema, ("k",)), [pa.table({"id": [1, 2], "k": ["a b", "x/y%"]})], "00000-0")
    target = DeltaTarget("t", str(root), {}, schema, ("k",))
    target.open()
    target.commit(adds, [], "append", LoadMark("x", "1"))
    assert sorted(DeltaTable(str(root)).to_pyarrow_table().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "k": "a b"}, {"id": 2, "k": "x/y%"}
    ]
    target.open()
    files = target.files()
    assert {f["partition_values"]["k"] for f in files} == {"a b", "x/y%"}
    snap = SnapshotSpec("file://" + str(root), {}, str(root), schema)
    assert sorted(r["id"] for f in files for t in read_file(snap, f["path"], f["partition_values"]) for r in t.to_pylist()) == [1, 2]
    gone = next(f for f in files if f["partition_values"]["k"] == "a b")
    target.commit([], [{"path": unquote(gone["path"]), "size": gone["size"], "partition_values": gone["partition_values"]}],
                  "append", LoadMark("x", "2"))
    assert DeltaTable(str(root)).to_pyarrow_table().to_pylist() == [{"id": 2, "k": "x/y%"}]

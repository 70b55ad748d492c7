"""A merge's removals found and written inside one task (`executor_drops`), on real Parquet files without Spark:
the root files lose the rows whose key arrives again (null keys match null keys, as in the Spark path's null-safe
join), the nested files the rows below an incoming or matched root row, and files without such rows stay as they are."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakeload.delta.merge_tasks import spread
from lakeload.kernel.delta import drops as executor_drops
from lakeload.kernel.delta.drops import DropItem, DropPlan, drop_task
from lakeload.kernel.delta.files import DeltaFileSpec
from lakeload.kernel.delta.read import SnapshotSpec, read_file
from lakeload.kernel.delta.rewrite import RewriteListing, RewriteSpec

ROOT = pa.schema([("id", pa.int64()), ("v", pa.string()), ("_dlt_id", pa.string())])
NESTED = pa.schema([("value", pa.string()), ("_dlt_root_id", pa.string()), ("_dlt_id", pa.string())])


def _write(folder: Path, name: str, table: pa.Table) -> RewriteListing:
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, folder / name)
    return RewriteListing(name, {})


def _read_spec(folder: Path, schema: pa.Schema) -> SnapshotSpec:
    return SnapshotSpec("file://" + str(folder), {}, str(folder), schema)


def _rewrite_spec(folder: Path, schema: pa.Schema) -> RewriteSpec:
    return RewriteSpec(_read_spec(folder, schema), DeltaFileSpec("file://" + str(folder), {}, str(folder), schema, prefix="7.1-merge-kept"))


def _plan(tmp_path: Path, incoming: list[pa.Table], root_files: list[RewriteListing]) -> DropPlan:
    package = []
    for i, table in enumerate(incoming):
        path = tmp_path / "package" / f"{i}.parquet"
        path.parent.mkdir(exist_ok=True)
        pq.write_table(table, path)
        package.append(str(path))
    root, nested = tmp_path / "users", tmp_path / "users__tags"
    return DropPlan(
        root="users", key="id", incoming=package,
        root_keys=_read_spec(root, pa.schema([ROOT.field("id"), ROOT.field("_dlt_id")])), root_files=root_files,
        nested_ids={"users__tags": _read_spec(nested, pa.schema([NESTED.field("_dlt_root_id")]))},
        specs={"users": _rewrite_spec(root, ROOT), "users__tags": _rewrite_spec(nested, NESTED)},
    )


def _rows(folder: Path, schema: pa.Schema, path: str) -> list[dict[str, object]]:
    return [r for t in read_file(_read_spec(folder, schema), path, {}) for r in t.to_pylist()]


@pytest.mark.parametrize("probe_rows", [1_000_000, 2])
def test_root_and_nested_files_lose_exactly_the_matched_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, probe_rows: int) -> None:
    """(`probe_rows` 2: stored rows probed a few files at a time, as big tables are.)"""
    monkeypatch.setattr(executor_drops, "PROBE_ROWS", probe_rows)
    root, nested = tmp_path / "users", tmp_path / "users__tags"
    a = _write(root, "a.parquet", pa.table({"id": [1, 2, None], "v": ["a1", "a2", "a-null"], "_dlt_id": ["r1", "r2", "rn"]}, ROOT))
    b = _write(root, "b.parquet", pa.table({"id": [3, 4], "v": ["b3", "b4"], "_dlt_id": ["r3", "r4"]}, ROOT))
    tags = _write(nested, "t.parquet", pa.table(
        {"value": ["x1", "x2", "x3", "xn", "orphan"], "_dlt_root_id": ["r1", "r2", "r3", "rn", None], "_dlt_id": list("abcde")}, NESTED
    ))
    untouched = _write(nested, "u.parquet", pa.table({"value": ["y4"], "_dlt_root_id": ["r4"], "_dlt_id": ["f"]}, NESTED))
    # incoming: key 2 (stored in a), a null key (matches a's null key), key 9 (new); `_dlt_id`s of the new rows
    incoming = [pa.table({"id": pa.array([2, None], pa.int32()), "_dlt_id": ["n2", "nn"]}), pa.table({"id": [9], "_dlt_id": ["n9"]})]
    plan = _plan(tmp_path, incoming, [a, b])
    item = DropItem([("users", a), ("users", b), ("users__tags", tags), ("users__tags", untouched)])

    result = drop_task(plan, item)

    assert result["removes"] == {"users": ["a.parquet"], "users__tags": ["t.parquet"]}
    (root_add,), (tags_add,) = result["adds"]["users"], result["adds"]["users__tags"]
    assert _rows(root, ROOT, root_add["path"]) == [{"id": 1, "v": "a1", "_dlt_id": "r1"}]
    assert root_add["partition_values"] == {} and '"numRecords": 1' in root_add["stats"]
    # below matched stored rows r2 and rn go; the row without a root id and those of untouched roots stay
    assert [r["value"] for r in _rows(nested, NESTED, tags_add["path"])] == ["x1", "x3", "orphan"]


def test_incoming_ids_alone_clear_nested_rows_and_nothing_matching_rewrites_nothing(tmp_path: Path) -> None:
    root, nested = tmp_path / "users", tmp_path / "users__tags"
    a = _write(root, "a.parquet", pa.table({"id": [1], "v": ["a1"], "_dlt_id": ["r1"]}, ROOT))
    tags = _write(nested, "t.parquet", pa.table({"value": ["x", "y"], "_dlt_root_id": ["r1", "k5"], "_dlt_id": ["a", "b"]}, NESTED))
    plan = _plan(tmp_path, [pa.table({"id": [5], "_dlt_id": ["k5"]})], [a])  # a stored nested row below id k5

    assert drop_task(plan, DropItem([("users", a)])) == {"adds": {}, "removes": {}}
    result = drop_task(plan, DropItem([("users__tags", tags)]))
    assert result["removes"] == {"users__tags": ["t.parquet"]}
    assert [r["value"] for r in _rows(nested, NESTED, result["adds"]["users__tags"][0]["path"])] == ["x"]


def test_files_spread_over_tasks_by_bytes_largest_first() -> None:
    files = [("t", {"path": p, "size": s, "partition_values": {}}) for p, s in [("a", 10), ("b", 7), ("c", 6), ("d", 2), ("e", 1)]]
    items = spread(files, 2)
    assert [[f.path for _, f in i.files] for i in items] == [["a", "d", "e"], ["b", "c"]]
    assert len(spread(files, 8)) == 5 and len(spread(files[:1], 0)) == 1

"""A Delta table whose `_delta_log` lost commit files or holds a broken one: named, nothing written, mendable.

- the newest commit files of a table deleted: the log reads at an older version than the last completed load
  recorded; a load on top would bring back rows later loads changed, so it is refused;
- a commit file in the middle deleted, or one truncated: delta-rs cannot open the table; loads that write to it
  are refused, loads of other tables go on;
- both errors say how to mend: restore the files and load again, or drop the table and load it anew.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

import lakeload
from lakeload.errors import DeltaLogDamagedError, PipelineStepFailed


def make(bucket: Path, pipelines_dir: Path) -> lakeload.Pipeline:
    return lakeload.pipeline("damage", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                             pipelines_dir=str(pipelines_dir))


def users(value: str, count: int = 5) -> list[dict[str, Any]]:
    return [{"id": i, "v": value, "tags": [f"{value}{i}", f"{value}{i}x"]} for i in range(count)]


def merge(p: lakeload.Pipeline, rows: list[dict[str, Any]], **hints: Any) -> Any:
    return p.run(rows, table_name="users", table_format="delta", primary_key="id", write_disposition="merge", **hints)


def rows(bucket: Path, table: str) -> list[tuple[Any, ...]]:
    data = DeltaTable(str(bucket / "ds" / table)).to_pyarrow_table().to_pylist()
    return sorted((r["id"], r["v"]) if "id" in r else (r["value"],) for r in data)


def log_file(bucket: Path, table: str, version: int) -> Path:
    return bucket / "ds" / table / "_delta_log" / f"{version:020d}.json"


def test_a_table_whose_newest_commits_are_gone_is_refused_until_they_are_restored(
    bucket: Path, pipelines_dir: Path, tmp_path: Path, spark: Any
) -> None:
    p = make(bucket, pipelines_dir)
    for value in ("a", "b"):
        merge(p, users(value))
    latest = DeltaTable(str(bucket / "ds" / "users")).version()
    kept = tmp_path / "kept.json"
    shutil.move(log_file(bucket, "users", latest), kept)  # the load of "b" is gone from the root's log
    with pytest.raises(DeltaLogDamagedError) as info:
        merge(p, users("c", 3))
    message = str(info.value)
    assert isinstance(info.value, PipelineStepFailed)
    assert "'users'" in message and f"version {latest - 1}" in message and f"recorded version {latest}" in message
    assert "restore" in message and "refresh=\"drop_resources\"" in message
    assert DeltaTable(str(bucket / "ds" / "users")).version() == latest - 1  # nothing written on the older version
    shutil.move(kept, log_file(bucket, "users", latest))
    p.load()  # the pending package loads once the file is back
    assert rows(bucket, "users") == [(0, "c"), (1, "c"), (2, "c"), (3, "b"), (4, "b")]
    assert sorted(r["value"] for r in DeltaTable(str(bucket / "ds" / "users__tags")).to_pyarrow_table().to_pylist()) == sorted(
        [f"c{i}" for i in range(3)] + [f"c{i}x" for i in range(3)] + ["b3", "b3x", "b4", "b4x"])


@pytest.mark.parametrize("damage", ["gap", "truncated"])
def test_a_broken_nested_log_blocks_only_its_tree_and_drop_resources_mends_it(
    bucket: Path, pipelines_dir: Path, spark: Any, damage: str
) -> None:
    p = make(bucket, pipelines_dir)
    for value in ("a", "b", "c"):
        merge(p, users(value))
    p.run([{"k": 1}], table_name="other", table_format="delta")
    if damage == "gap":
        log_file(bucket, "users__tags", 1).unlink()
    else:
        path = log_file(bucket, "users__tags", 2)
        path.write_bytes(path.read_bytes()[:40])
    p.run([{"k": 2}], table_name="other", table_format="delta")  # a load that does not write to it goes on
    assert sorted(r["k"] for r in DeltaTable(str(bucket / "ds" / "other")).to_pyarrow_table().to_pylist()) == [1, 2]
    with pytest.raises(DeltaLogDamagedError) as info:
        merge(p, users("d"))
    message = str(info.value)
    assert "'users__tags'" in message and "_delta_log" in message and "refresh=\"drop_resources\"" in message
    assert "ParsedLogPath" not in message  # delta-rs' own dump is not the message
    p.drop_pending_packages()
    merge(p, users("d"), refresh="drop_resources")  # what the message says: the tree is loaded anew
    assert rows(bucket, "users") == [(i, "d") for i in range(5)]
    assert rows(bucket, "users__tags") == sorted((f"d{i}{x}",) for i in range(5) for x in ("", "x"))
    merge(p, users("e", 2))  # and loads go on as usual
    assert rows(bucket, "users") == [(0, "e"), (1, "e"), (2, "d"), (3, "d"), (4, "d")]

"""The Spark plans of a Delta merge: no distinct pass over keys known unique, the cleared root ids broadcast once
for all nested tables (no shuffle of the nested tables' keys)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

import lakeload
import lakeload.delta.merge as merge_module
import lakeload.delta.merge_files as merge_files_module
from lakeload.delta.spark_io import Rewrite

pytestmark = pytest.mark.usefixtures("spark")


def _plan(frame: Any) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        frame.explain()
    return out.getvalue()


def test_merge_matches_unique_keys_without_distinct_and_broadcasts_root_ids(
    bucket: Path, pipelines_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plans: dict[str, str] = {}
    real = merge_files_module.rewrite_files

    def recording(spark: Any, tables: dict[str, Rewrite], description: str, **kwargs: Any) -> Any:
        plans.update({name: _plan(t.drops if t.drops is not None else kwargs["tagged"]) for name, t in tables.items()})
        return real(spark, tables, description, **kwargs)

    monkeypatch.setattr(merge_files_module, "rewrite_files", recording)
    monkeypatch.setattr(merge_module, "DROP_TASK_ROWS", 0)  # the Spark plan, not the removals in tasks

    @lakeload.resource(name="users", write_disposition="merge", primary_key="key", table_format="delta")
    def users(data: list[dict[str, Any]]) -> Any:
        yield from data

    p = lakeload.pipeline("plans", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                          pipelines_dir=str(pipelines_dir))
    p.run(users([{"key": k, "tags": [f"t{k}", "x"], "labels": [k]} for k in range(4)]))
    p.run(users([{"key": 1, "tags": ["n"], "labels": []}, {"key": 9, "tags": [], "labels": [9]}]))
    assert set(plans) == {"users", "users__tags", "users__labels"}
    assert "HashAggregate" not in plans["users"]  # incoming keys are unique: joined as they are
    # the nested tables' rows in one join with the root ids, broadcast once (the other broadcast: the incoming
    # keys of the root table's key pass, which gives the matched rows' ids)
    nested = plans["users__tags"]
    assert nested == plans["users__labels"] and "Union" in nested
    assert "HashAggregate" not in nested and "SortMergeJoin" not in nested and nested.count("BroadcastExchange") == 2
    tags = DeltaTable(str(bucket / "ds" / "users__tags")).to_pyarrow_table().to_pylist()
    assert sorted(r["value"] for r in tags) == ["n", "t0", "t2", "t3", "x", "x", "x"]
    labels = DeltaTable(str(bucket / "ds" / "users__labels")).to_pyarrow_table().to_pylist()
    assert sorted(r["value"] for r in labels) == [0, 2, 3, 9]

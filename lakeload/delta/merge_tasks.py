"""Driver side: a Delta merge's removals in one job of pyarrow tasks (`lakeload.kernel.delta.drops`).

Chosen by `lakeload.delta.merge` for the usual upsert of a package of moderate size: one primary key column,
no partitions and no `merge_key`, every nested table linked by `_dlt_root_id`. Instead of the Spark plan (key
join, broadcast of the cleared root ids, grouping of positions, rewrite job), the stored files that may hold a
match are spread over as many tasks as the executors run at once (largest first, so their bytes balance); each
task finds its files' dropped rows and rewrites them. Measured at 1M events (2 cores): the nested tables' probe
takes ~1 CPU-second instead of ~5.6, and no query is planned.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from lakeload.delta.spark_io import snapshot_spec, task_slots
from lakeload.errors import LoadError
from lakeload.kernel.delta.drops import ROOT_ID, ROW_ID, DropItem, DropPlan, DropResult, drop_task
from lakeload.kernel.delta.rewrite import RewriteListing, RewriteSpec
from lakeload.spark.session import run_tasks

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.delta.commit import DeltaTarget
    from lakeload.delta.snapshot_files import Rewritten, SnapshotFile
    from lakeload.kernel.delta.files import DeltaFileSpec
    from lakeload.kernel.spark.working import WorkingStore


def drops_in_tasks(
    spark: SparkSession, root: DeltaTarget, key: str, incoming: list[str], root_files: list[SnapshotFile],
    nested: list[DeltaTarget], spec_of: Callable[[DeltaTarget, str], DeltaFileSpec], description: str,
    working: WorkingStore | None = None,
) -> Rewritten:
    """Rewrite the stored files of `root` (its candidate `root_files`) and of the `nested` tables without the rows
    the merge removes; per table, the add actions of the new files and the replaced files (as `files()` lists
    them). `incoming` are the package's root files; `spec_of(target, operation)` says how a table is written."""
    plan = DropPlan(
        root=root.name,
        key=key,
        incoming=incoming,
        root_keys=_read_spec(root, spec_of, [key, ROW_ID]),
        root_files=[RewriteListing(f["path"], f["partition_values"]) for f in root_files],
        nested_ids={t.name: _read_spec(t, spec_of, [ROOT_ID]) for t in nested},
        specs={
            t.name: RewriteSpec(snapshot_spec(spec_of(t, "merge"), t.table_schema(), with_file=False), spec_of(t, "merge-kept"))
            for t in [root, *nested]
        },
    )
    listed = [(root.name, f) for f in root_files] + [(t.name, f) for t in nested for f in t.files()]
    if not listed:
        return {}
    items = spread(listed, task_slots(spark))
    results: list[DropResult] = run_tasks(spark, drop_task, plan, items, description, working=working, error=LoadError)
    by_path = {(name, f["path"]): f for name, f in listed}
    done: Rewritten = {}
    for result in results:
        for table, adds in result["adds"].items():
            done.setdefault(table, ([], []))[0].extend(adds)
        for table, paths in result["removes"].items():
            done.setdefault(table, ([], []))[1].extend(by_path[(table, p)] for p in paths)
    return done


def spread(files: list[tuple[str, SnapshotFile]], slots: int) -> list[DropItem]:
    """`files` (table, log entry with `size`) in at most `slots` tasks of near-equal bytes (largest first, each
    to the lightest task).

    >>> [len(i.files) for i in spread([("t", {"path": p, "size": s, "partition_values": {}}) for p, s in [("a", 9), ("b", 5), ("c", 4)]], 2)]
    [1, 2]
    """
    count = max(1, min(slots, len(files)))
    heap = [(0, i) for i in range(count)]
    items = [DropItem([]) for _ in range(count)]
    for table, f in sorted(files, key=lambda tf: -int(tf[1].get("size") or 0)):
        load, i = heapq.heappop(heap)
        items[i].files.append((table, RewriteListing(f["path"], f["partition_values"])))
        heapq.heappush(heap, (load + int(f.get("size") or 0), i))
    return items


def _read_spec(target: DeltaTarget, spec_of: Callable[[DeltaTarget, str], DeltaFileSpec], columns: list[str]) -> Any:
    schema = pa.schema([f for f in target.table_schema() if f.name in columns])
    return snapshot_spec(spec_of(target, "merge"), schema, with_file=False)

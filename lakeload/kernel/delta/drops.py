"""Executor-safe: a Delta merge's removals found and written inside Spark tasks, for packages of moderate size.

The usual upsert (one primary key column, no partitions, no `merge_key`, every nested table linked to its
root row by `_dlt_root_id`) removes, per table, the stored rows whose key arrives again (the root) and the
stored rows below a cleared root row (nested tables). When the package is small enough for its keys to fit
in a task (`TASK_ROWS`), one `run_tasks` job does all of it: each task

1. reads the package's root key column (and its `_dlt_id`s when it has nested files),
2. for each of its root files: reads the key column, finds the matching positions (`pyarrow.compute.is_in`,
   nulls equal as in the Spark path's null-safe join) and, when any match, rewrites the file without them;
3. for its nested files: builds the set of cleared root ids (incoming ids plus the ids of matching stored root
   rows, read from the candidate root files), probes every file's `_dlt_root_id` column in one call and
   rewrites the files holding a cleared row.

No Spark join, shuffle or broadcast: only add actions and replaced paths come back. Bigger packages and the
other merges keep the Spark plan of `lakeload.delta.merge`.

Imports only pyarrow, numpy and executor-safe lakeload modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import lakeload.kernel.spark.working as wio
from lakeload.kernel.contracts import TAddAction
from lakeload.kernel.delta.files import task_tag, write_files
from lakeload.kernel.delta.read import SnapshotSpec, read_file
from lakeload.kernel.delta.rewrite import RewriteListing, RewriteSpec, kept_rows

TASK_ROWS = 2_000_000  # incoming root rows up to which the removals are found in tasks (ids: ~100 MB per task)
PROBE_ROWS = 1_000_000  # stored rows probed at once (one hashing of the value set per group)
ROOT_ID = "_dlt_root_id"
ROW_ID = "_dlt_id"


@dataclass
class DropPlan:
    """What every task of the job knows; shipped to executors (credentials stay inside the specs)."""

    root: str  # the root table's name
    key: str  # its primary key column
    incoming: list[str]  # the package's files of the root table
    root_keys: SnapshotSpec  # reads the key column and `_dlt_id` of stored root files
    root_files: list[RewriteListing]  # the stored root files that may hold a match (after pruning)
    nested_ids: dict[str, SnapshotSpec] = field(default_factory=dict)  # per nested table: reads `_dlt_root_id`
    specs: dict[str, RewriteSpec] = field(default_factory=dict)  # per table: how to rewrite its files

    def __repr__(self) -> str:
        return f"DropPlan(root={self.root!r}, tables={list(self.specs)})"


@dataclass
class DropItem:
    """One task's files: (table, file) pairs, each as in the log."""

    files: list[tuple[str, RewriteListing]]


class DropResult(TypedDict):
    """What a task returns: per table, the add actions of its new files and the log paths of those they replace."""

    adds: dict[str, list[TAddAction]]
    removes: dict[str, list[str]]


def drop_task(plan: DropPlan, item: DropItem) -> DropResult:
    """A `run_tasks` task: rewrite this task's files without the rows the merge removes."""
    incoming = _incoming(plan, with_ids=any(table != plan.root for table, _ in item.files))
    result: DropResult = {"adds": {}, "removes": {}}
    root_files = [f for table, f in item.files if table == plan.root]
    if root_files:
        drops = _positions(plan.root_keys, root_files, plan.key, incoming.column(plan.key).combine_chunks(), skip_nulls=False)
        _rewrite(plan.specs[plan.root], plan.root, list(zip(root_files, drops, strict=True)), result)
    nested: dict[str, list[RewriteListing]] = {}
    for table, f in item.files:
        if table != plan.root:
            nested.setdefault(table, []).append(f)
    if nested:
        cleared = _cleared_ids(plan, incoming)
        for table, files in nested.items():
            drops = _positions(plan.nested_ids[table], files, ROOT_ID, cleared, skip_nulls=True)
            _rewrite(plan.specs[table], table, list(zip(files, drops, strict=True)), result)
    return result


def _incoming(plan: DropPlan, with_ids: bool) -> pa.Table:
    """The package's root key column (and `_dlt_id`s when `with_ids`)."""
    wanted = [plan.key, ROW_ID] if with_ids else [plan.key]
    key_type = plan.root_keys.schema.field(plan.key).type
    parts = []
    for path in plan.incoming:
        with wio.open_input(path) as raw:
            parquet = pq.ParquetFile(raw)
            table = parquet.read(columns=[c for c in wanted if c in parquet.schema_arrow.names])
        for name in wanted:
            if name not in table.column_names:
                table = table.append_column(name, pa.nulls(table.num_rows, key_type if name == plan.key else pa.string()))
        parts.append(table.select(wanted).cast(pa.schema([(plan.key, key_type), *([(ROW_ID, pa.string())] if with_ids else [])])))
    return pa.concat_tables(parts)


def _column(spec: SnapshotSpec, listing: RewriteListing, name: str) -> pa.ChunkedArray:
    """One column of a stored data file, in the table's type (null when the file predates it)."""
    chunks = [t.column(name) for t in read_file(spec, listing.path, listing.partition_values)]
    return pa.chunked_array([c for chunked in chunks for c in chunked.chunks], spec.schema.field(name).type)


def _positions(spec: SnapshotSpec, files: list[RewriteListing], column: str, values: pa.Array, skip_nulls: bool) -> list[np.ndarray]:
    """Per stored file, the positions of its rows whose `column` is among `values`. Files are probed in groups of
    about `PROBE_ROWS` rows (the value set is hashed once per group; memory stays bounded however big the
    table). `skip_nulls`: a null matches nothing (else null = null)."""
    value_type = spec.schema.field(column).type
    values = values.cast(value_type)
    found: list[np.ndarray] = []
    group: list[pa.ChunkedArray] = []

    def probe() -> None:
        probed = pa.chunked_array([c for col in group for c in col.chunks], value_type)
        flags = pc.is_in(probed, value_set=values, skip_nulls=skip_nulls).to_numpy(zero_copy_only=False)
        ends = np.cumsum([len(c) for c in group])
        found.extend(np.flatnonzero(flags[end - len(c):end]) for c, end in zip(group, ends, strict=True))
        group.clear()

    for listing in files:
        group.append(_column(spec, listing, column))
        if sum(len(c) for c in group) >= PROBE_ROWS:
            probe()
    if group:
        probe()
    return found


def _cleared_ids(plan: DropPlan, incoming: pa.Table) -> pa.Array:
    """The `_dlt_id`s of the incoming root rows and of the stored root rows whose key arrives again (the
    candidate root files' keys probed in groups, as in `_positions`)."""
    ids = [incoming.column(ROW_ID).combine_chunks().cast(pa.string())]
    keys = incoming.column(plan.key).combine_chunks()
    group: list[pa.Table] = []

    def probe() -> None:
        both = pa.concat_tables(group)
        hits = pc.is_in(both.column(plan.key), value_set=keys, skip_nulls=False)
        ids.append(both.column(ROW_ID).filter(hits).combine_chunks().cast(pa.string()))
        group.clear()

    for listing in plan.root_files:
        for table in read_file(plan.root_keys, listing.path, listing.partition_values):
            group.append(table)
            if sum(t.num_rows for t in group) >= PROBE_ROWS:
                probe()
    if group:
        probe()
    return pa.concat_arrays(ids)


def _rewrite(spec: RewriteSpec, table: str, drops: list[tuple[RewriteListing, np.ndarray]], result: DropResult) -> None:
    """Write the kept rows of the files that lose rows (one new file per partition) and list those files."""
    touched = [(f, d) for f, d in drops if len(d)]
    if not touched:
        return
    kept = (t for f, d in touched for t in kept_rows(spec.read, f.path, f.partition_values, d))
    result["adds"].setdefault(table, []).extend(write_files(spec.write, kept, task_tag()))
    result["removes"].setdefault(table, []).extend(f.path for f, _ in touched)

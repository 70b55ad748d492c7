"""Executor-safe: rewrite data files of Delta tables without chosen rows (the copy-on-write of a merge).

The key pass of a merge (a Spark join over the key columns only) finds, per data file, the positions of the
rows that go. A task gets `(table, path, partition values, row positions)` listings, reads each listed file
once with pyarrow, drops those rows and writes what is left as new data files of its table (local or in a
bucket; one file per table and partition); it returns the add actions of the new files and the paths of the
files they replace. Whole rows never pass through Spark's JVM: only the positions do.

Imports only pyarrow, numpy and executor-safe lakeload modules.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from lakeload.delta.executor_files import DeltaFileSpec, task_tag, write_files
from lakeload.delta.executor_read import SnapshotSpec, read_file

REWRITE_SCHEMA = pa.schema([("table", pa.string()), ("kind", pa.string()), ("value", pa.string())])
# kind "add": an add action (JSON) of a new file; kind "remove": the log path of a file it replaces


@dataclass
class RewriteSpec:
    """What a rewrite task reads (the table's files, in its current schema) and how it writes; shipped to executors."""

    read: SnapshotSpec
    write: DeltaFileSpec

    def __repr__(self) -> str:
        return f"RewriteSpec(table_dir={self.write.table_dir!r})"


def kept_rows(spec: SnapshotSpec, path: str, partition_values: dict[str, str | None], drop: np.ndarray) -> Iterator[pa.Table]:
    """The rows of one data file (`path` as in the log) whose positions are not in `drop` (sorted), in order."""
    offset = 0
    for table in read_file(spec, path, partition_values):
        rows = table.num_rows
        low, high = np.searchsorted(drop, [offset, offset + rows])
        if high > low:
            keep = np.ones(rows, dtype=bool)
            keep[drop[low:high] - offset] = False
            table = table.filter(pa.array(keep))
        offset += rows
        if table.num_rows:
            yield table


def rewrite_task(specs: dict[str, RewriteSpec], listings: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The `mapInArrow` body: rewrite every listed file (`table`, `path`, `partition_values` JSON, `rows`: the
    positions to drop) without its listed rows; one new file per table and partition."""
    by_table: dict[str, list[tuple[str, str, np.ndarray]]] = {}
    for listing in listings:
        rows = listing.column("rows")
        for i, (table, path, values) in enumerate(zip(*(listing.column(c).to_pylist() for c in ("table", "path", "partition_values")), strict=True)):
            by_table.setdefault(table, []).append((path, values, np.sort(rows[i].values.to_numpy(zero_copy_only=False))))
    out: dict[str, list[str]] = {"table": [], "kind": [], "value": []}
    for table, files in by_table.items():
        spec = specs[table]
        kept = (t for path, values, drop in files for t in kept_rows(spec.read, path, json.loads(values), drop))
        actions: list[dict[str, Any]] = write_files(spec.write, kept, task_tag())
        for kind, value in [*(("add", json.dumps(a)) for a in actions), *(("remove", path) for path, _, _ in files)]:
            out["table"].append(table)
            out["kind"].append(kind)
            out["value"].append(value)
    yield pa.RecordBatch.from_pydict(out, schema=REWRITE_SCHEMA)

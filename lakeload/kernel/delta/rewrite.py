"""Executor-safe: rewrite data files of Delta tables without chosen rows (the copy-on-write of a merge), or with
one column set to a value in chosen rows (`ColumnUpdate`: an scd2 merge retiring records by their valid-to).

The key pass of a merge (a Spark join over the key columns only) finds, per data file, the positions of the
rows that go. A task gets `(table, file, row positions)` rows, reads each listed file once with pyarrow, drops
those rows and writes what is left as new data files of its table (local or in a bucket; one file per table
and partition); it returns the add actions of the new files and the paths of the files they replace. Whole
rows never pass through Spark's JVM: only the positions do.

Imports only pyarrow, numpy and executor-safe lakeload modules.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakeload.kernel.delta.files import FILE_COLUMN, DeltaFileSpec, task_tag, write_files
from lakeload.kernel.delta.read import SnapshotSpec, read_file

REWRITE_SCHEMA = pa.schema([("table", pa.string()), ("kind", pa.string()), ("value", pa.string())])
# kind "add": an add action (JSON) of a new file; kind "remove": the log path of a file it replaces


@dataclass(frozen=True)
class ColumnUpdate:
    """Set `column` to `value` in the chosen rows instead of dropping them (a Python value of the column's type).

    >>> from datetime import datetime, timezone
    >>> ColumnUpdate("_dlt_valid_to", datetime(2024, 1, 2, tzinfo=timezone.utc)).column
    '_dlt_valid_to'
    """

    column: str
    value: Any


@dataclass
class RewriteSpec:
    """What a rewrite task reads (the table's files, in its current schema) and how it writes; shipped to executors.
    `update`: the chosen rows get a column value instead of being dropped."""

    read: SnapshotSpec
    write: DeltaFileSpec
    update: ColumnUpdate | None = None

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


def updated_rows(
    spec: SnapshotSpec, path: str, partition_values: dict[str, str | None], chosen: np.ndarray, update: ColumnUpdate
) -> Iterator[pa.Table]:
    """The rows of one data file, in order, with `update.column` set to `update.value` at the positions in `chosen`
    (sorted)."""
    offset = 0
    for table in read_file(spec, path, partition_values):
        rows = table.num_rows
        low, high = np.searchsorted(chosen, [offset, offset + rows])
        if high > low:
            mask = np.zeros(rows, dtype=bool)
            mask[chosen[low:high] - offset] = True
            index = table.schema.get_field_index(update.column)
            column = table.column(index)
            value = pa.scalar(update.value, column.type)
            table = table.set_column(index, table.field(index), pc.if_else(pa.array(mask), value, column))
        offset += rows
        if table.num_rows:
            yield table


def changed_rows(spec: RewriteSpec, entry: RewriteListing, positions: np.ndarray) -> Iterator[pa.Table]:
    """One listed file's rows as the rewrite leaves them: without the rows at `positions`, or those rows updated."""
    if spec.update is None:
        return kept_rows(spec.read, entry.path, entry.partition_values, positions)
    return updated_rows(spec.read, entry.path, entry.partition_values, positions, spec.update)


@dataclass
class RewriteListing:
    """A data file a rewrite may touch (its `path` and `partition_values` as in the log); shipped to executors."""

    path: str
    partition_values: dict[str, str | None]


def rewrite_task(
    specs: dict[str, RewriteSpec], listing: dict[tuple[str, str], RewriteListing], drops: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """The `mapInArrow` body: rewrite every file listed in this task (`table`, file name, `rows`: the positions
    to drop, or to update when the table's spec has an `update`) without those rows (or with them updated); one new file per table and partition. `listing` gives each (table, file name)'s
    log path and partition values."""
    by_table: dict[str, list[tuple[RewriteListing, np.ndarray]]] = {}
    for batch in drops:
        rows = batch.column("rows")
        for i, key in enumerate(zip(batch.column("table").to_pylist(), batch.column(FILE_COLUMN).to_pylist(), strict=True)):
            by_table.setdefault(key[0], []).append((listing[key], np.sort(rows[i].values.to_numpy(zero_copy_only=False))))
    out: dict[str, list[str]] = {"table": [], "kind": [], "value": []}
    for table, files in by_table.items():
        spec = specs[table]
        kept = (t for entry, drop in files for t in changed_rows(spec, entry, drop))
        actions = write_files(spec.write, kept, task_tag())
        for kind, value in [*(("add", json.dumps(a)) for a in actions), *(("remove", entry.path) for entry, _ in files)]:
            out["table"].append(table)
            out["kind"].append(kind)
            out["value"].append(value)
    yield pa.RecordBatch.from_pydict(out, schema=REWRITE_SCHEMA)

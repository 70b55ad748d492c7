"""Executor-safe: normalize one split of Arrow items (pyarrow tables and batches, pandas frames) as dlt 1.31 does.

Extract stored the user's items as they are, in one Parquet file per item. Their Arrow schema is the table's:
each field makes one column (its name normalized, its type from `arrow_types.data_type_of`; struct, list and
map fields are `json` columns keeping their Arrow type, never flattened into child tables), in field order.
The rows keep their Arrow values and types: the file is written batch by batch with the table's column order
(columns only other items had are null), then lakeload's `_dlt_load_id` and `_dlt_id` (which dlt adds only
when configured: a deliberate difference, docs/coming-from-dlt.md). Nothing but the schema additions and
file metadata goes back to the driver. A split under a schema contract takes the record path instead.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import lakeload.kernel.spark.working as wio
from lakeload.errors import NormalizeError
from lakeload.kernel.contracts import TPackageFile
from lakeload.kernel.filesystem.safe_paths import check_table_name
from lakeload.kernel.normalize.coerce import RowCoercer
from lakeload.kernel.normalize.relational import (
    C_DLT_ID,
    C_DLT_LOAD_ID,
    C_OCCURRENCE,
    OCCURRENCE_SHIFT,
    RootTableSettings,
)
from lakeload.kernel.normalize.report import SplitReport, split_report
from lakeload.kernel.normalize.row_ids import key_ids_rows, random_ids
from lakeload.kernel.normalize.writers import TableFileWriter, complete_columns, schema_signature, write_ipc
from lakeload.schema.arrow_types import column_arrow_type, data_type_of
from lakeload.schema.typing import TColumn, TTable

if TYPE_CHECKING:
    from lakeload.kernel.normalize.plan import NormalizePlan, Split

NewWriter = Callable[[str, dict[str, TTable]], TableFileWriter]
BATCH_ROWS = 64_000
MAX_TIMESTAMP_PRECISION = 6  # the filesystem destination's (and its Parquet writer's) default and maximum


def field_names(schema: pa.Schema, naming: Any, table: str) -> dict[str, str]:
    """Field name -> column name (normalized as dlt normalizes Arrow fields); two fields that become one column
    fail, naming them and the table."""
    names = {f.name: naming.normalize_path(f.name) for f in schema}
    if len(set(names.values())) != len(names):
        clashing = sorted(n for n in names if list(names.values()).count(names[n]) > 1)
        raise NormalizeError(
            f"Table '{table}': the Arrow columns {clashing} all become one column under the {naming.name} naming "
            "convention. Rename them in the resource (e.g. with add_map and `rename_columns`) so their names differ."
        )
    return names


def fit_filesystem(hints: TColumn) -> TColumn:
    """The type hints of an Arrow field as dlt stores them for the filesystem destination: timestamps and times
    at most microseconds, the default (microseconds) and the time zone flag left out (the data is made UTC)."""
    if hints["data_type"] not in ("timestamp", "time"):
        return hints
    fitted = hints.copy()
    fitted.pop("timezone", None)
    precision = min(fitted.get("precision", MAX_TIMESTAMP_PRECISION), MAX_TIMESTAMP_PRECISION)
    if precision == MAX_TIMESTAMP_PRECISION:
        fitted.pop("precision", None)
    else:
        fitted["precision"] = precision
    return fitted


def normalize_arrow_items(plan: NormalizePlan, split: Split, new_writer: NewWriter) -> SplitReport | None:
    """The pass-1 report of a Parquet split of Arrow items (see the module docstring); None under a contract."""
    if plan.contracts is not None:
        return None
    with wio.open_input(split.path) as raw:
        parquet = pq.ParquetFile(raw)
        return _ArrowItems(plan, split, parquet.schema_arrow).run(parquet, new_writer)


class _ArrowItems:
    def __init__(self, plan: NormalizePlan, split: Split, schema: pa.Schema) -> None:
        self.plan, self.split, self.table = plan, split, split.root_table
        self.root = plan.normalizer.roots.get(self.table, RootTableSettings())
        self.names = field_names(schema, plan.naming, self.table)
        self.null_fields = [f.name for f in schema if data_type_of(f.type) is None]
        self.tables = copy.deepcopy(plan.tables)
        self.coercer = RowCoercer(self.tables, plan.naming, plan.detections, plan.default_hints)
        for f in schema:
            found = data_type_of(f.type)
            if found is not None:
                column: TColumn = {"name": self.names[f.name], **fit_filesystem(found), "nullable": f.nullable}
                self.coercer.add_typed_column(self.table, column)
        system = {C_DLT_LOAD_ID: plan.load_id, C_DLT_ID: "", **({C_OCCURRENCE: 0} if self.root.occurrence else {})}
        self.coercer.coerce_row(self.table, None, system)  # the `_dlt_*` columns, typed and hinted as for records

    def run(self, parquet: pq.ParquetFile, new_writer: NewWriter) -> SplitReport:
        rows = parquet.metadata.num_rows
        files = self._write(parquet, new_writer) if rows else []
        coercer, table = self.coercer, self.table
        coercer.row_counts[table] = rows
        touched = set(coercer.added) | set(coercer.new_tables) | {table}
        null_only = sorted({self.names[n] for n in self.null_fields} - set(complete_columns(self.tables[table])))
        return split_report(
            self.split.index, new_tables=coercer.new_tables, added=coercer.added,
            tables={name: self.tables[name] for name in touched}, row_counts={table: rows} if rows else {},
            null_only={table: null_only} if null_only else {}, files=files,
        )

    def _batches(self, parquet: pq.ParquetFile) -> Iterator[pa.Table]:
        """The split's rows with the table's columns in order (the items' own Arrow types kept)."""
        columns = complete_columns(self.tables[self.table])
        position = 0
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS):
            by_name = {self.names[n]: batch.column(n) for n in batch.schema.names if n not in self.null_fields}
            by_name.update(self._system(batch, by_name, position))
            position += batch.num_rows
            arrays = [by_name.get(n, pa.nulls(batch.num_rows, column_arrow_type(c))) for n, c in columns.items()]
            yield pa.Table.from_arrays(arrays, names=list(columns))

    def _system(self, batch: pa.RecordBatch, by_name: dict[str, pa.Array], position: int) -> dict[str, pa.Array]:
        """`_dlt_load_id`, `_dlt_id` (the primary key's digest for Delta merge tables, as for records, else
        random) and, for Delta merge tables, the package-only row occurrence."""
        rows = batch.num_rows
        key = self.root.primary_key
        if self.root.row_id == "key_hash" and key:
            if missing := [k for k in key if k not in by_name]:
                raise NormalizeError(
                    f"Table '{self.table}': the Arrow item has no primary key column {missing[0]!r} (its columns: "
                    f"{sorted(by_name)}). Add the column to the item, or give the resource the key it has."
                )
            ids = key_ids_rows(pa.table({k: by_name[k] for k in key}).to_pylist(), key)
        else:
            ids = random_ids(rows)
        out = {C_DLT_LOAD_ID: pa.repeat(self.plan.load_id, rows), C_DLT_ID: ids}
        if self.root.occurrence:
            base = (self.split.index << OCCURRENCE_SHIFT) + position
            out[C_OCCURRENCE] = pa.array(np.arange(base, base + rows, dtype=np.int64))
        return out

    def _write(self, parquet: pq.ParquetFile, new_writer: NewWriter) -> list[TPackageFile]:
        """One final file: parquet as a draft (kept when its types are the table's final ones), jsonl rows,
        or an Arrow chunk (csv) that `finalize_split` writes."""
        file_format = self.plan.format_for(self.table)
        if file_format == "csv":
            path = wio.join(self.plan.output_dir, f"_chunks.{self.split.index:06d}.{check_table_name(self.table)}.0000.arrow")
            data = pa.concat_tables(self._batches(parquet))
            write_ipc(path, data)
            return [TPackageFile(table=self.table, path=path, rows=data.num_rows, chunk=True, split=self.split.index)]
        writer = new_writer(self.table, self.tables)
        schema = None
        try:
            for data in self._batches(parquet):
                schema = data.schema
                if file_format == "parquet":
                    writer.write_arrow(data)
                else:
                    for row in data.to_pylist():
                        writer.write({k: v for k, v in row.items() if v is not None})
            written = writer.close()
        except BaseException:
            writer.abort()
            raise
        if file_format == "parquet" and schema is not None:
            return [{**meta, "split": self.split.index, "draft": schema_signature(schema)} for meta in written]
        return [{**meta, "split": self.split.index} for meta in written]

"""The incremental filter of Arrow tables, record batches and pandas frames, with `pyarrow.compute`, as dlt's.

The cursor must be a column. The new last value is the column's max (min); rows at the start value whose
hash (of the primary key, or of the whole row) was stored by the last run are dropped; a pandas frame comes
back as a pandas frame. Only `max` and `min` are supported as `last_value_func`, as in dlt.
"""

from __future__ import annotations

from typing import Any

from lakeload.errors import (
    IncrementalCursorInvalidCoercion,
    IncrementalCursorPathHasValueNone,
    IncrementalCursorPathMissing,
    IncrementalError,
    IncrementalPrimaryKeyMissing,
)
from lakeload.extract.incremental.transform import Filter, RunRange

INDEX_COLUMN = "_dlt_index"


class ArrowFilter(Filter):
    """Filters Arrow items; `keep(item)` returns (item or None, start_out_of_range, end_out_of_range)."""

    def __init__(self, run: RunRange) -> None:
        super().__init__(run)
        import pyarrow.compute as pc

        if run.last_value_func not in (max, min):
            raise IncrementalError(
                f"Resource '{run.resource_name}': Arrow tables and DataFrames support last_value_func max or min "
                "only; yield records to use a custom function."
            )
        ascending = run.last_value_func is max
        self.aggregate = pc.max if ascending else pc.min
        closed_end, closed_start = run.range_end == "closed", run.range_start == "closed"
        if ascending:
            self.in_end = pc.less_equal if closed_end else pc.less
            self.in_start = pc.greater_equal if closed_start else pc.greater
            self.beyond = pc.greater
        else:
            self.in_end = pc.greater_equal if closed_end else pc.greater
            self.in_start = pc.less_equal if closed_start else pc.less
            self.beyond = pc.less
        self.index_column = INDEX_COLUMN

    def keep(self, item: Any) -> tuple[Any, bool, bool]:
        import pyarrow as pa
        import pyarrow.compute as pc

        is_pandas = type(item).__module__.startswith("pandas")
        table = pa.Table.from_pandas(item, preserve_index=False) if is_pandas else item
        unique_columns = self._unique_columns(table)
        if table.num_rows == 0:
            return item, False, False
        column = self._cursor_column(table)
        cursor_type = table.schema.field(column).type
        row_scalar = self.aggregate(table[column])
        row_value = row_scalar.as_py()
        self.adapt_timezone(row_value)
        nulls = None
        if table.schema.field(column).nullable:
            valid = pc.is_valid(table[column])
            table, nulls = table.filter(valid), table.filter(pc.invert(valid))
            if self.run.on_cursor_value_missing == "raise" and nulls.num_rows:
                raise IncrementalCursorPathHasValueNone(self.run.resource_name, column, "<arrow table>")
        end_out = False
        if self.run.end_value is not None:
            end_scalar = self._scalar(self.run.end_value, cursor_type, "end_value")
            end_out = not self.in_end(row_scalar, end_scalar).as_py()
            if end_out:
                table = table.filter(self.in_end(table[column], end_scalar))
        self.seen_data = True
        start_out = False
        if self.run.start_value is not None:
            table, start_out = self._drop_before_start(table, column, cursor_type, unique_columns)
        self._track_last_value(table, column, cursor_type, row_scalar, unique_columns)
        if INDEX_COLUMN in table.schema.names:
            table = table.drop_columns([INDEX_COLUMN]) if isinstance(table, pa.Table) else table.select(
                [n for n in table.schema.names if n != INDEX_COLUMN]
            )
        if self.run.on_cursor_value_missing == "include" and nulls is not None and nulls.num_rows:
            table = pa.Table.from_batches([table, nulls]) if isinstance(table, pa.RecordBatch) else pa.concat_tables([table, nulls])
        if table.num_rows == 0:
            return None, start_out, end_out
        return (table.to_pandas() if is_pandas else table), start_out, end_out

    def _unique_columns(self, table: Any) -> list[str]:
        key = self.run.primary_key
        key = key(table) if callable(key) else key
        if key is None:
            return list(table.schema.names)
        columns = [key] if isinstance(key, str) else list(key)
        for name in columns:
            if name not in table.schema.names:
                raise IncrementalPrimaryKeyMissing(self.run.resource_name, name, "<arrow table>")
        if isinstance(key, str):
            self.index_column = key  # rows are removed by their key value, as dlt does
        return columns

    def _cursor_column(self, table: Any) -> str:
        column = self.run.cursor.column
        if column is None or column not in table.schema.names:
            raise IncrementalCursorPathMissing(
                self.run.resource_name, self.run.cursor.text, "<arrow table>",
                f"Arrow tables and DataFrames need a cursor column name (not a nested path) among {table.schema.names}. ",
            )
        return column

    def _scalar(self, value: Any, arrow_type: Any, name: str) -> Any:
        import pyarrow as pa

        try:
            return pa.scalar(value, type=arrow_type)
        except Exception as exc:
            raise IncrementalCursorInvalidCoercion(
                self.run.resource_name, self.run.cursor.text, name, value, f"<arrow column of {arrow_type}>", str(exc)
            ) from exc

    def _drop_before_start(self, table: Any, column: str, cursor_type: Any, unique_columns: list[str]) -> tuple[Any, bool]:
        import pyarrow as pa
        import pyarrow.compute as pc

        start_scalar = self._scalar(self.run.start_value, cursor_type, "start value")
        keep = self.in_start(table[column], start_scalar)
        start_out = bool(pc.any(pc.invert(keep)).as_py())
        table = table.filter(keep)
        if not self.run.deduplicates or not self.run.unique_hashes:
            return table, start_out
        if self.index_column not in table.schema.names:
            index = pa.array(range(table.num_rows))
            table = table.append_column(INDEX_COLUMN, index) if isinstance(table, pa.Table) else pa.RecordBatch.from_arrays(
                [*table.columns, index], schema=table.schema.append(pa.field(INDEX_COLUMN, index.type))
            )
        at_start = table.filter(pc.equal(table[column], start_scalar))
        rows = at_start.select(unique_columns).to_pylist()
        indexes = at_start[self.index_column].to_pylist()
        seen = [i for i, row in zip(indexes, rows, strict=True) if self.hash_of(row, self.start_legacy) in self.run.unique_hashes]
        if seen:
            table = table.filter(pc.invert(pc.is_in(table[self.index_column], pa.array(seen))))
        return table, start_out

    def _track_last_value(self, table: Any, column: str, cursor_type: Any, row_scalar: Any, unique_columns: list[str]) -> None:
        import pyarrow.compute as pc

        row_value = row_scalar.as_py()
        advanced = self.last_value is None or self.beyond(row_scalar, self._scalar(self.last_value, cursor_type, "last value")).as_py()
        if not advanced and not (self.last_value == row_value and self.run.deduplicates):
            return
        if advanced:
            self.last_value = row_value
        if not self.run.deduplicates:
            return
        at_last = table.filter(pc.equal(table[column], row_scalar)).select(unique_columns).to_pylist()
        hashes = {self.hash_of(row, False if advanced else self.hashes_legacy) for row in at_last}
        if advanced:
            self.unique_hashes, self.hashes_legacy = hashes, False
        else:
            self.unique_hashes.update(hashes)

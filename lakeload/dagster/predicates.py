"""The rows of a `TableSlice` as a delta-rs SQL predicate, a pyarrow filter, and a check of partition values.

Values are typed by the column they compare with: static and dynamic keys are cast to the column's type
(a key of an integer column must be an integer), time windows become bounds of the column's type
(UTC instants for `timestamp with time zone`, the partitions' wall-clock time for timestamps without
one, dates for `date` columns, text in the partition keys' format for string columns). In SQL, identifiers are
double-quoted and literals single-quoted with quotes doubled, so a key such as `x' OR '1'='1` is one value.

>>> import pyarrow as pa
>>> sql_predicate(TableSlice("s", "t", partitions=(PartitionSlice("species", keys=("x' OR '1'='1",)),)),
...               pa.schema([("species", pa.string())]))
'"species" IN (\\'x\\'\\' OR \\'\\'1\\'\\'=\\'\\'1\\')'
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lakeload.dagster.slices import PartitionSlice, TableSlice
from lakeload.errors import ConfigurationError

UTC = dt.timezone.utc


def quote_identifier(name: str) -> str:
    """A SQL identifier in double quotes (embedded quotes doubled).

    >>> quote_identifier('odd"name')
    '"odd""name"'
    """
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """A SQL string literal (embedded quotes doubled).

    >>> quote_literal("it's")
    "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"


def column_type(schema: pa.Schema, column: str, table: str) -> pa.DataType:
    """The type of a partition column; a `ConfigurationError` naming the columns there are when it is missing."""
    if column not in schema.names:
        raise ConfigurationError(
            f"partition_expr names column {column!r}, which table {table!r} does not have (columns: "
            f"{', '.join(schema.names)}). Name the column that holds the partition's values."
        )
    return schema.field(column).type


def typed_key(key: str, arrow_type: pa.DataType, column: str) -> Any:
    """A partition key as a Python value of the column's type."""
    try:
        if pa.types.is_integer(arrow_type):
            return int(key)
        if pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
            return pa.scalar(key).cast(arrow_type).as_py()
        if pa.types.is_boolean(arrow_type):
            return {"true": True, "false": False}[key.strip().lower()]
        if pa.types.is_date(arrow_type):
            return dt.date.fromisoformat(key)
        if pa.types.is_timestamp(arrow_type):
            value = dt.datetime.fromisoformat(key)
            return value.replace(tzinfo=value.tzinfo or UTC) if arrow_type.tz else value.replace(tzinfo=None)
    except (ValueError, KeyError, pa.ArrowInvalid):
        raise ConfigurationError(
            f"Partition key {key!r} is not a value of column {column!r} ({arrow_type}). Use keys of the column's type "
            "or a column of text."
        ) from None
    return key


def window_bounds(part: PartitionSlice, arrow_type: pa.DataType) -> tuple[Any, Any]:
    """The time window as `[low, high)` values of the column's type."""
    assert part.start is not None and part.end is not None
    start, end = part.start, part.end
    if pa.types.is_timestamp(arrow_type):
        if arrow_type.tz:
            return start.astimezone(UTC), end.astimezone(UTC)
        return start.replace(tzinfo=None), end.replace(tzinfo=None)
    if pa.types.is_date(arrow_type):
        high = end.date() if end.time() == dt.time(0) else end.date() + dt.timedelta(days=1)
        return start.date(), high
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return start.strftime(part.fmt), end.strftime(part.fmt)
    raise ConfigurationError(
        f"Time-window partition column {part.column!r} is {arrow_type}; use a timestamp, date or string column."
    )


def sql_literal(value: Any) -> str:
    """A typed Python value as a SQL literal delta-rs compares with the column."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dt.datetime):
        return quote_literal(value.isoformat(sep="T"))
    if isinstance(value, dt.date):
        return quote_literal(value.isoformat())
    return quote_literal(str(value))


def _sql(part: PartitionSlice, arrow_type: pa.DataType) -> str:
    name = quote_identifier(part.column)
    if part.keys is not None:
        values = ", ".join(sql_literal(typed_key(k, arrow_type, part.column)) for k in part.keys)
        return f"{name} IN ({values})" if part.keys else "false"
    low, high = window_bounds(part, arrow_type)
    return f"{name} >= {sql_literal(low)} AND {name} < {sql_literal(high)}"


def sql_predicate(table_slice: TableSlice, schema: pa.Schema) -> str | None:
    """The slice's rows as a delta-rs predicate (None: the whole table)."""
    if not table_slice.partitions:
        return None
    parts = [_sql(p, column_type(schema, p.column, table_slice.name)) for p in table_slice.partitions]
    return " AND ".join(f"({p})" if len(parts) > 1 else p for p in parts)


def arrow_filter(table_slice: TableSlice, schema: pa.Schema) -> pc.Expression | None:
    """The slice's rows as a pyarrow dataset filter (None: the whole table)."""
    expression: pc.Expression | None = None
    for part in table_slice.partitions:
        arrow_type = column_type(schema, part.column, table_slice.name)
        field = pc.field(part.column)
        if part.keys is not None:
            values = pa.array([typed_key(k, arrow_type, part.column) for k in part.keys], arrow_type)
            condition = field.isin(values)
        else:
            low, high = window_bounds(part, arrow_type)
            condition = (field >= pa.scalar(low, arrow_type)) & (field < pa.scalar(high, arrow_type))
        expression = condition if expression is None else expression & condition
    return expression


def log_value(text: str | None, arrow_type: pa.DataType) -> Any:
    """A partition value as the Delta log serializes it, as a Python value of the column's type."""
    if text is None:
        return None
    if pa.types.is_timestamp(arrow_type):
        value = dt.datetime.fromisoformat(text)  # the log holds UTC wall times
        return value.replace(tzinfo=UTC) if arrow_type.tz else value
    return typed_key(text, arrow_type, "")


def contains(table_slice: TableSlice, schema: pa.Schema, partition_values: dict[str, str | None]) -> bool:
    """Whether a data file with these partition values (log strings) lies inside the slice."""
    for part in table_slice.partitions:
        arrow_type = column_type(schema, part.column, table_slice.name)
        value = log_value(partition_values.get(part.column), arrow_type)
        if value is None:
            return False
        if part.keys is not None:
            if value not in {typed_key(k, arrow_type, part.column) for k in part.keys}:
                return False
            continue
        low, high = window_bounds(part, arrow_type)
        if not low <= value < high:
            return False
    return True

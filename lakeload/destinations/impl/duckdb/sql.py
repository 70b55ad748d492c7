"""The SQL text of the DuckDB destination: column types and tables as dlt's DuckDB destination creates them, and
the statements that load a package's Parquet files (`lakeload.load.duckdb_loader` runs them).

>>> column_type({"name": "at", "data_type": "timestamp"})
'TIMESTAMP WITH TIME ZONE'
>>> column_type({"name": "n", "data_type": "bigint", "precision": 16})
'SMALLINT'
>>> create_table("ds", {"name": "users", "columns": {"id": {"name": "id", "data_type": "bigint", "nullable": False}}})
'CREATE TABLE IF NOT EXISTS "ds"."users" ("id" BIGINT NOT NULL)'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from lakeload.errors import DestinationError
from lakeload.schema.typing import TColumn, TTable

if TYPE_CHECKING:
    import duckdb

_SIMPLE = {
    "text": "VARCHAR", "double": "DOUBLE", "bool": "BOOLEAN", "date": "DATE", "time": "TIME", "binary": "BLOB",
    "json": "JSON",
}
_INTEGERS = ((8, "TINYINT"), (16, "SMALLINT"), (32, "INTEGER"), (64, "BIGINT"), (128, "HUGEINT"))
# a naive timestamp's type by its precision hint (digits of a second; none: microseconds), as dlt's DuckDB gives it
_NAIVE_TIMESTAMPS = ((0, "TIMESTAMP_S"), (3, "TIMESTAMP_MS"), (6, "TIMESTAMP"), (9, "TIMESTAMP_NS"))
DEFAULT_DECIMAL = (38, 9)
DEFAULT_WEI = (38, 0)


def ident(name: str) -> str:
    """A quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """A quoted string literal."""
    return "'" + text.replace("'", "''") + "'"


def column_type(column: TColumn) -> str:
    """The DuckDB type dlt's DuckDB destination gives a column of this schema type: precision and scale hints of
    `decimal` and `wei` (each missing one from the default), the bits of a `bigint`'s `precision`, and the
    `precision` of a timestamp with `timezone: false` (one with a time zone is always microseconds)."""
    kind = column.get("data_type")
    if kind in _SIMPLE:
        return _SIMPLE[str(kind)]
    precision = column.get("precision")
    if kind in ("decimal", "wei"):
        default = DEFAULT_DECIMAL if kind == "decimal" else DEFAULT_WEI
        scale = column.get("scale")
        return f"DECIMAL({default[0] if precision is None else precision},{default[1] if scale is None else scale})"
    if kind == "bigint":
        return _by_precision(column, _INTEGERS, 64, "bits, at most 128")
    if kind == "timestamp":
        return "TIMESTAMP WITH TIME ZONE" if column.get("timezone", True) else _by_precision(column, _NAIVE_TIMESTAMPS, 6, "0 to 9")
    raise DestinationError(f"Column '{column.get('name')}' has the data type {kind!r}, which the DuckDB destination does not take.")


def _by_precision(column: TColumn, types: tuple[tuple[int, str], ...], default: int, allowed: str) -> str:
    """The first of `types` whose bound holds the column's `precision` hint (`default` without one)."""
    precision = column.get("precision")
    found = next((name for bound, name in types if (default if precision is None else precision) <= bound), None)
    if found is None:
        raise DestinationError(
            f"Column '{column.get('name')}' ({column.get('data_type')}) has precision {precision}, which DuckDB cannot "
            f"hold. Fix: give a precision of {allowed} in the column's hints, or none."
        )
    return found


def column_definition(column: TColumn) -> str:
    nullable = column.get("nullable", True)
    return f"{ident(column['name'])} {column_type(column)}{'' if nullable else ' NOT NULL'}"


def complete_columns(table: TTable) -> list[TColumn]:
    """The columns of `table` that have a data type (the others wait for data, as in dlt)."""
    return [c for c in table["columns"].values() if c.get("data_type")]


def create_table(dataset: str, table: TTable) -> str:
    columns = ", ".join(column_definition(c) for c in complete_columns(table))
    return f"CREATE TABLE IF NOT EXISTS {ident(dataset)}.{ident(table['name'])} ({columns})"


def add_columns(dataset: str, table_name: str, columns: Iterable[TColumn]) -> list[str]:
    """`ALTER TABLE ... ADD COLUMN` for each new column (nullable: the table's older rows have none)."""
    return [
        f"ALTER TABLE {ident(dataset)}.{ident(table_name)} ADD COLUMN {ident(c['name'])} {column_type(c)}" for c in columns
    ]


def parquet_source(paths: list[str]) -> str:
    return f"read_parquet([{', '.join(literal(p) for p in paths)}], union_by_name = true)"


def idents(columns: Iterable[str]) -> str:
    """Quoted column names, comma separated: `idents(["id", "a b"])` is `"id", "a b"`."""
    return ", ".join(ident(c) for c in columns)


def select_list(columns: list[str], present: set[str]) -> str:
    """The table's columns from a file selection: a column no file has is null."""
    return ", ".join(ident(c) if c in present else f"NULL AS {ident(c)}" for c in columns)


def present_columns(connection: duckdb.DuckDBPyConnection, source: str) -> set[str]:
    """The columns a relation (`read_parquet(...)`, a table) has, as DuckDB describes it (Parquet: their footers)."""
    return {str(row[0]) for row in connection.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}


def insert_select(target: str, columns: list[str], present: set[str], source: str, where: str = "") -> str:
    """`INSERT INTO target (columns) SELECT ... FROM source [where]`, a column `present` lacks inserted as null."""
    return f"INSERT INTO {target} ({idents(columns)}) SELECT {select_list(columns, present)} FROM {source} {where}".rstrip()

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

from lakeload.errors import DestinationError
from lakeload.schema.typing import TColumn, TTable

_SIMPLE = {
    "text": "VARCHAR", "double": "DOUBLE", "bool": "BOOLEAN", "date": "DATE", "time": "TIME", "binary": "BLOB",
    "json": "JSON", "wei": "DECIMAL(38,0)",
}
_INTEGERS = ((8, "TINYINT"), (16, "SMALLINT"), (32, "INTEGER"), (64, "BIGINT"), (128, "HUGEINT"))
DEFAULT_DECIMAL = (38, 9)


def ident(name: str) -> str:
    """A quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """A quoted string literal."""
    return "'" + text.replace("'", "''") + "'"


def column_type(column: TColumn) -> str:
    """The DuckDB type dlt's DuckDB destination gives a column of this schema type."""
    kind = column.get("data_type")
    if kind in _SIMPLE:
        return _SIMPLE[str(kind)]
    if kind == "bigint":
        precision = column.get("precision")
        return next((name for bits, name in _INTEGERS if precision is not None and precision <= bits), "BIGINT")
    if kind == "decimal":
        precision, scale = column.get("precision"), column.get("scale")
        if precision is None:
            precision, scale = DEFAULT_DECIMAL
        return f"DECIMAL({precision},{scale or 0})"
    if kind == "timestamp":
        return "TIMESTAMP WITH TIME ZONE" if column.get("timezone", True) else "TIMESTAMP"
    raise DestinationError(f"Column '{column.get('name')}' has the data type {kind!r}, which the DuckDB destination does not take.")


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


def select_list(columns: list[str], present: set[str]) -> str:
    """The table's columns from a file selection: a column no file has is null."""
    return ", ".join(ident(c) if c in present else f"NULL AS {ident(c)}" for c in columns)

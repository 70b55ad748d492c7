"""A table already in the database whose column types cannot hold what a load brings (seed 003: loading into a
table not created by dlt keeps its own columns; one whose type conflicts is refused by name, nothing lost).

DuckDB casts a value into a column of another type when it can (a number into `VARCHAR`); when it cannot (text
into `BIGINT`), its conversion error becomes a `ColumnTypeConflictError` naming the table, each column whose type
differs from the one the schema gives it, and the fix. The package's transaction is rolled back by the caller.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import duckdb

from lakeload.destinations.impl.duckdb.sql import column_type, complete_columns
from lakeload.errors import ColumnTypeConflictError
from lakeload.load.duckdb_staging import existing_column_types

if TYPE_CHECKING:
    from lakeload.schema.schema import Schema

_CONVERSION_ERRORS = (duckdb.ConversionException, duckdb.BinderException, duckdb.OutOfRangeException)


def _same(found: str, wanted: str) -> bool:
    return found.replace(" ", "").upper() == wanted.replace(" ", "").upper()


def type_conflicts(connection: duckdb.DuckDBPyConnection, dataset: str, schema: Schema, table: str) -> list[tuple[str, str, str]]:
    """The columns of `table` whose type in the database is not the one the schema gives them:
    (column, the database's type, the schema's type)."""
    found = existing_column_types(connection, dataset, table) or {}
    wanted = {c["name"]: column_type(c) for c in complete_columns(schema.tables[table])}
    return [(name, str(found[name]), kind) for name, kind in wanted.items() if name in found and not _same(str(found[name]), kind)]


@contextlib.contextmanager
def named_type_conflicts(connection: duckdb.DuckDBPyConnection, dataset: str, schema: Schema, tables: list[str]) -> Iterator[None]:
    """DuckDB's conversion errors inside the block as a `ColumnTypeConflictError` on the first of `tables` (a root
    table's tree) with a conflicting column (looked up before: a failed statement aborts the transaction)."""
    found = ((table, type_conflicts(connection, dataset, schema, table)) for table in tables)
    conflicting = [(table, conflicts) for table, conflicts in found if conflicts]
    try:
        yield
    except _CONVERSION_ERRORS as exc:
        if not conflicting:
            raise
        table, conflicts = conflicting[0]
        raise ColumnTypeConflictError(table, conflicts, str(exc).splitlines()[0]) from None

"""`pipeline.sql_client()` of the DuckDB destination: SQL straight on the database file, the dataset's schema first
on the search path (as dlt's DuckDB `sql_client()`), with the same methods as the filesystem's SQL client
(`execute_sql`, `execute_query` yielding a `Cursor`, `table_names`, `native_connection`), so `pipeline.dataset()`
works on it too.

Example (after a run loaded `users`)::

    with pipeline.sql_client() as client:
        client.execute_sql("SELECT count(*) FROM users WHERE id > %s", 1)
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import duckdb

from lakeload.destinations.impl.duckdb.sql import ident, literal
from lakeload.errors import DestinationError
from lakeload.schema.schema import Schema
from lakeload.sql.client import to_duckdb_placeholders
from lakeload.sql.cursor import Cursor
from lakeload.sql.errors import SqlQueryError, TableNotFoundError


class DuckDbSqlClient:
    """SQL on the dataset of a DuckDB database (a file, or the connection the destination was given)."""

    def __init__(self, database: str, dataset_name: str, schema: Schema, connection: duckdb.DuckDBPyConnection | None = None) -> None:
        self.database, self.dataset_name, self.schema = database, dataset_name, schema
        self._given = connection
        self._conn: duckdb.DuckDBPyConnection | None = None

    @property
    def table_names(self) -> list[str]:
        """Tables that can be queried: data tables and `_dlt_*` tables with at least one typed column."""
        return [name for name in self.schema.tables if self.schema.complete_columns(name)]

    def open_connection(self) -> duckdb.DuckDBPyConnection:
        if self._conn is None:
            if self._given is not None:
                self._conn = self._given.cursor()
            else:
                try:
                    self._conn = duckdb.connect(self.database)
                except duckdb.Error as exc:
                    raise DestinationError(
                        f"Cannot open the DuckDB database {self.database}: {str(exc).splitlines()[0]}. Close the process "
                        "that holds it (DuckDB lets one process open a database for writing) and try again."
                    ) from None
            self._conn.execute(f"SET search_path = {literal(ident(self.dataset_name) + ',main')}")
        return self._conn

    def close_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @property
    def native_connection(self) -> duckdb.DuckDBPyConnection:
        return self.open_connection()

    def __enter__(self) -> DuckDbSqlClient:
        self.open_connection()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_connection()

    def _error(self, sql: str, exc: Exception) -> Exception:
        if isinstance(exc, duckdb.CatalogException):
            match = re.search(r"Table with name (\S+) does not exist", str(exc))
            if match:
                return TableNotFoundError(match.group(1), self.dataset_name, self.table_names)
        return SqlQueryError(sql, f"{type(exc).__name__}: {exc}")

    @contextlib.contextmanager
    def execute_query(self, sql: str, *args: Any) -> Iterator[Cursor]:
        """Run a query (DB-API `%s` placeholders, values in `args`) and yield a `Cursor`."""
        duck_sql = to_duckdb_placeholders(sql) if args else sql
        connection = self.open_connection().cursor()
        try:
            connection.execute(f"SET search_path = {literal(ident(self.dataset_name) + ',main')}")
            cursor = Cursor(connection, duck_sql, list(args), on_error=lambda _, exc: self._error(sql, exc))
        except BaseException:
            connection.close()
            raise
        try:
            yield cursor
        finally:
            cursor.close()

    def execute_sql(self, sql: str, *args: Any) -> list[tuple[Any, ...]] | None:
        """Run a statement and return all rows, or None when it returns none."""
        with self.execute_query(sql, *args) as cursor:
            return None if cursor.description is None else cursor.fetchall()

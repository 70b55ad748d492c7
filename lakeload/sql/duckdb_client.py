"""`pipeline.sql_client()` of the DuckDB destination: SQL straight on the database file, the dataset's schema first
on the search path (as dlt's DuckDB `sql_client()`), with the same methods as the filesystem's SQL client
(`execute_sql`, `execute_query` yielding a `Cursor`, `table_names`, `native_connection`), so `pipeline.dataset()`
works on it too.

Example (after a run loaded `users`)::

    with pipeline.sql_client() as client:
        client.execute_sql("SELECT count(*) FROM users WHERE id > %s", 1)
"""

from __future__ import annotations

from typing import Any

import duckdb

from lakeload.destinations.impl.duckdb.connect import connect
from lakeload.destinations.impl.duckdb.sql import ident, literal
from lakeload.schema.schema import Schema
from lakeload.sql.client_base import SqlClientBase


class DuckDbSqlClient(SqlClientBase):
    """SQL on the dataset of a DuckDB database (a file, or the connection the destination was given)."""

    def __init__(self, database: str, dataset_name: str, schema: Schema, connection: duckdb.DuckDBPyConnection | None = None) -> None:
        self.database, self.dataset_name, self.schema = database, dataset_name, schema
        self._given = connection
        self._conn: duckdb.DuckDBPyConnection | None = None
        self._catalog: str | None = None

    def open_connection(self) -> duckdb.DuckDBPyConnection:
        if self._conn is None:
            if self._given is not None:
                self._conn = self._given.cursor()
            else:
                self._conn = connect(self.database, schemas=(self.dataset_name,))  # (a named error for a file that cannot be opened)
            self._search_path(self._conn)
        return self._conn

    def close_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _search_path(self, connection: duckdb.DuckDBPyConnection) -> None:
        if self._catalog is None:  # (the connection's own: its cursors start in DuckDB's default catalog)
            found: Any = connection.execute("SELECT current_database()").fetchone()
            self._catalog = str(found[0])
        catalog = ident(self._catalog)  # (qualified: a dataset named as the database file is no catalog here)
        connection.execute(f"USE {catalog}")
        connection.execute(f"SET search_path = {literal(f'{catalog}.{ident(self.dataset_name)},{catalog}.main')}")

    def _query_connection(self, duck_sql: str) -> duckdb.DuckDBPyConnection:
        connection = self.open_connection().cursor()
        try:
            self._search_path(connection)
        except BaseException:
            connection.close()
            raise
        return connection

"""What every SQL client over DuckDB shares (`FilesystemSqlClient` over a bucket's views, `DuckDbSqlClient` on a
database file): the dataset's queryable tables, the connection as a context manager, queries with DB-API `%s`
placeholders yielding a `Cursor`, and DuckDB's errors turned into lakeload's. A client says how it opens and
closes its connection and readies one for a query (`_query_connection`)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any, TypeVar

import duckdb

from lakeload.schema.schema import Schema
from lakeload.sql.cursor import Cursor
from lakeload.sql.errors import SqlQueryError, TableNotFoundError

_C = TypeVar("_C", bound="SqlClientBase")


# string literals, quoted identifiers and comments are kept as they are when %s becomes ?
_PLACEHOLDER_SCAN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|%%|%s", re.S)


def to_duckdb_placeholders(sql: str) -> str:
    """Turn DB-API `%s` placeholders into DuckDB's `?` (and `%%` into `%`), leaving literals alone.

    >>> to_duckdb_placeholders("SELECT '%s', name FROM t WHERE id = %s AND n LIKE 'a%%'")
    "SELECT '%s', name FROM t WHERE id = ? AND n LIKE 'a%%'"
    """
    def swap(match: re.Match[str]) -> str:
        text = match.group(0)
        return "?" if text == "%s" else "%" if text == "%%" else text

    return _PLACEHOLDER_SCAN.sub(swap, sql)


class SqlClientBase:
    """The queries of one dataset through DuckDB (see the module docstring)."""

    schema: Schema
    dataset_name: str

    @property
    def table_names(self) -> list[str]:
        """Tables that can be queried: data tables and `_dlt_*` tables with at least one typed column."""
        return [name for name in self.schema.tables if self.schema.complete_columns(name)]

    def open_connection(self) -> duckdb.DuckDBPyConnection:
        raise NotImplementedError

    def close_connection(self) -> None:
        raise NotImplementedError

    def _query_connection(self, duck_sql: str) -> duckdb.DuckDBPyConnection:
        """A connection (a cursor of the open one) ready to run `duck_sql`; closed by the caller."""
        raise NotImplementedError

    def _unknown_table(self, name: str) -> bool:
        """Whether a table DuckDB does not find is unknown to the dataset (else the query's own error)."""
        return True

    @property
    def native_connection(self) -> duckdb.DuckDBPyConnection:
        return self.open_connection()

    def __enter__(self: _C) -> _C:
        self.open_connection()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_connection()

    def _error(self, sql: str, exc: Exception) -> Exception:
        if isinstance(exc, duckdb.CatalogException):
            match = re.search(r"Table with name (\S+) does not exist", str(exc))
            if match and self._unknown_table(match.group(1)):
                return TableNotFoundError(match.group(1), self.dataset_name, self.table_names)
        return SqlQueryError(sql, f"{type(exc).__name__}: {exc}")

    @contextlib.contextmanager
    def execute_query(self, sql: str, *args: Any) -> Iterator[Cursor]:
        """Run a query (DB-API `%s` placeholders, values in `args`) and yield a :class:`Cursor`.

        Example (after a run loaded `users`)::

            with client.execute_query("SELECT * FROM users WHERE id > %s", 2) as cursor:
                df = cursor.df()
        """
        duck_sql = to_duckdb_placeholders(sql) if args else sql
        connection = self._query_connection(duck_sql)
        try:
            cursor = Cursor(connection, duck_sql, list(args), on_error=lambda _, exc: self._error(sql, exc))
        except BaseException:
            connection.close()
            raise
        try:
            yield cursor
        finally:
            cursor.close()

    def execute_sql(self, sql: str, *args: Any) -> list[tuple[Any, ...]] | None:
        """Run a statement and return all rows, or None when it returns none (DDL, SET, ...).

        Example::

            client.execute_sql("SELECT count(*) FROM users WHERE name = %s", "Alice")   # [(1,)]
        """
        with self.execute_query(sql, *args) as cursor:
            return None if cursor.description is None else cursor.fetchall()

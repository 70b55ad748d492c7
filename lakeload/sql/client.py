"""`pipeline.sql_client()`: query a filesystem dataset with SQL through an in-memory DuckDB.

Views are created lazily: the query is parsed with sqlglot, and each schema table it names (plainly or as
`<dataset>.<table>`) gets a view `<dataset>.<table>` over exactly that table's files (see
:mod:`lakeload.sql.views`). The file list is a snapshot taken when the view is created; with
`always_refresh_views=True` the files are listed again before every query and changed views re-created.
Remote buckets are read through their fsspec filesystem registered with DuckDB, so credentials never
appear in SQL text. Delta tables (root table with `table_format="delta"`) are read through a snapshot of
their Delta log instead of a file listing (see :mod:`lakeload.sql.delta_views`): the version recorded with
the last completed load, so a load in progress is invisible; their snapshot is kept and refreshed under
the same rules.

Example (after a run loaded `users`)::

    with pipeline.sql_client() as client:
        with client.execute_query("SELECT id, name FROM users WHERE id = %s", 10) as cursor:
            print(cursor.fetchall())
"""

from __future__ import annotations

import contextlib
import logging
import re

import duckdb
import sqlglot
from sqlglot import exp

from lakeload.delta.load_versions import completed_versions
from lakeload.delta.tables import is_delta_table
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.iceberg.tables import is_iceberg_table
from lakeload.kernel.filesystem.layout import Layout
from lakeload.kernel.filesystem.protocols import SFTP_PROTOCOLS
from lakeload.schema.schema import Schema
from lakeload.sql import delta_views
from lakeload.sql.client_base import SqlClientBase
from lakeload.sql.errors import SqlClientError, TableNotFoundError
from lakeload.sql.views import (
    duckdb_path,
    list_table_files,
    quote_ident,
    quote_literal,
    view_select,
)

logger = logging.getLogger("lakeload.sql")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


class FilesystemSqlClient(SqlClientBase):
    """SQL over the tables of one dataset in a bucket, through views in an in-memory DuckDB.

    Example (a bucket in a temporary folder, with one file of `users` as a load writes it):
        >>> import gzip, tempfile
        >>> from lakeload.destinations.impl.filesystem.configuration import resolve_configuration
        >>> tmp = tempfile.TemporaryDirectory()
        >>> config = resolve_configuration({"bucket_url": tmp.name}, "filesystem", None)
        >>> schema = Schema("crm")
        >>> schema.update_table({"name": "users", "columns": {"id": {"name": "id", "data_type": "bigint"},
        ...                                                   "name": {"name": "name", "data_type": "text"}}})
        >>> FilesystemClient(config, "mydata").write_bytes("users/1795296531.14.a1b2c3d4e5.jsonl.gz",
        ...     gzip.compress(b'{"id": 1, "name": "Alice"}\\n{"id": 2, "name": "Bob"}\\n'))
        >>> client = FilesystemSqlClient(FilesystemClient(config, "mydata"), schema, Layout.parse())
        >>> with client:
        ...     client.execute_sql("SELECT count(*) FROM users")
        [(2,)]
    """

    def __init__(self, client: FilesystemClient, schema: Schema, layout: Layout, always_refresh_views: bool = False) -> None:
        self.client = client
        self.schema = schema
        self.layout = layout
        self.always_refresh_views = always_refresh_views
        self.dataset_name = client.dataset_name
        self._conn: duckdb.DuckDBPyConnection | None = None
        self._views: dict[str, tuple[str, ...]] = {}  # table -> the files its view reads
        self._delta: dict[str, delta_views.DeltaSnapshot | None] = {}  # Delta table -> its view's snapshot
        self._versions: dict[str, int] | None = None  # Delta versions of the last completed load
        self._iceberg_versions: dict[str, tuple[int, str]] | None = None  # Iceberg snapshots of the last completed load

    # -- tables -------------------------------------------------------------------------------------
    def _lookup(self) -> dict[str, str]:
        return {name.lower(): name for name in self.table_names}

    def is_delta(self, table: str) -> bool:
        """Whether `table` is a Delta table (its root table has `table_format="delta"`)."""
        return is_delta_table(self.schema, table)

    def is_iceberg(self, table: str) -> bool:
        """Whether `table` is an Iceberg table (its root table has `table_format="iceberg"`)."""
        return is_iceberg_table(self.schema, table)

    def has_snapshots(self, table: str) -> bool:
        """Whether `table` is read at a snapshot of a table format (Delta, Iceberg), not as listed files."""
        return self.is_delta(table) or self.is_iceberg(table)

    def table_files(self, table: str) -> list[str]:
        """Full fsspec paths of the table's data files, listed now; for a Delta table, the data file URIs of
        its current version (as delta-rs gives them; partition values are in their folder names)."""
        if self.has_snapshots(table):
            snapshot = self._open_snapshot(table)
            return list(snapshot.files) if snapshot else []
        return list_table_files(self.client, self.layout, self.schema.name, table)

    def delta_snapshot(self, table: str) -> delta_views.DeltaSnapshot | None:
        """The Delta snapshot the view of `table` reads, or the current one when there is no view (or views
        refresh); None when the Delta table has not been created yet."""
        if table in self._delta and not self.always_refresh_views:
            return self._delta[table]
        return self._open_snapshot(table)

    def delta_versions(self) -> dict[str, int]:
        """The Delta table versions recorded with the last completed load of the schema (see
        :mod:`lakeload.delta.load_versions`), read once per connection (or per query when views refresh);
        tables not in it are read at their latest version.

        Example (a dataset whose loads recorded Delta versions)::

            client.delta_versions()   # {'users': 3, 'users__pets': 5}
        """
        if self._versions is None:
            self._versions = completed_versions(self.client, self.schema.name)
        return self._versions

    def _open_snapshot(self, table: str) -> delta_views.DeltaSnapshot | None:
        if self.is_iceberg(table):
            from lakeload.iceberg.load_versions import completed_snapshots
            from lakeload.sql import iceberg_views

            if self._iceberg_versions is None:
                self._iceberg_versions = completed_snapshots(self.client, self.schema.name)
            return iceberg_views.open_snapshot(self.client, table, self._iceberg_versions.get(table))
        return delta_views.open_snapshot(self.client, table, self.delta_versions().get(table))

    def files_for(self, table: str) -> list[str]:
        """The files of `table` as its view sees them: the view's snapshot, or listed now when there is none."""
        if table in self._views and not self.always_refresh_views:
            return list(self._views[table])
        return self.table_files(table)

    def view_sql(self, table: str, files: list[str] | None = None) -> str:
        """The SELECT the view of `table` runs (over `files`, listed now when not given)."""
        if table not in self.table_names:
            raise TableNotFoundError(table, self.dataset_name, self.table_names)
        columns = list(self.schema.complete_columns(table).values())
        if self.has_snapshots(table):
            return delta_views.view_select(self.open_connection(), columns, self.delta_snapshot(table))
        files = self.table_files(table) if files is None else files
        paths = [duckdb_path(self.client, f) for f in files]
        return view_select(self.open_connection(), columns, paths)

    # -- connection ---------------------------------------------------------------------------------
    def open_connection(self) -> duckdb.DuckDBPyConnection:
        """The in-memory DuckDB (opened on first use), with the dataset schema and the bucket's filesystem."""
        if self._conn is None:
            conn = duckdb.connect(":memory:")
            with contextlib.suppress(duckdb.Error):
                conn.execute("SET TimeZone = 'UTC'")
            if not self.client.config.is_local and self.client.config.protocol not in SFTP_PROTOCOLS:
                conn.register_filesystem(self.client.fs)  # SFTP files are read from local copies instead
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_ident(self.dataset_name)}")
            self._search_path(conn)
            self._conn = conn
            self._views = {}
            self._delta = {}
            self._versions = None
        return self._conn

    def _search_path(self, conn: duckdb.DuckDBPyConnection) -> None:
        conn.execute(f"SET search_path = {quote_literal(quote_ident(self.dataset_name) + ',main')}")

    def close_connection(self) -> None:
        """Close DuckDB; views are created again on the next query."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
            self._views = {}
            self._delta = {}
            self._versions = None

    # -- views --------------------------------------------------------------------------------------
    def referenced_tables(self, sql: str) -> tuple[list[str], list[str]]:
        """Schema tables a query names, and names it qualifies with the dataset that the schema lacks.

        >>> from lakeload.destinations.impl.filesystem.configuration import resolve_configuration
        >>> schema = Schema("crm")
        >>> schema.update_table({"name": "users", "columns": {"id": {"name": "id", "data_type": "bigint"}}})
        >>> schema.update_table({"name": "users__pets", "parent": "users",
        ...                      "columns": {"name": {"name": "name", "data_type": "text"}}})
        >>> config = resolve_configuration({"bucket_url": "memory://bucket"}, "filesystem", None)
        >>> client = FilesystemSqlClient(FilesystemClient(config, "mydata"), schema, Layout.parse())
        >>> client.referenced_tables("SELECT * FROM users u JOIN mydata.users__pets p ON p._dlt_parent_id = u._dlt_id")
        (['users', 'users__pets'], [])
        >>> client.referenced_tables("SELECT * FROM mydata.orders")
        ([], ['orders'])
        """
        lookup = self._lookup()
        found: list[str] = []
        missing: list[str] = []
        try:
            statements = [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
        except sqlglot.errors.SqlglotError:
            words = {w.lower() for w in _WORD.findall(sql)}
            return [name for key, name in lookup.items() if key in words], []
        dataset = self.dataset_name.lower()
        for statement in statements:
            for table in statement.find_all(exp.Table):
                name, db = table.name, table.db.lower()
                if not name or db not in ("", dataset):
                    continue
                key = name.lower()
                if key in lookup:
                    if lookup[key] not in found:
                        found.append(lookup[key])
                elif db == dataset and name not in missing:
                    missing.append(name)
        return found, missing

    def create_views(self, tables: list[str]) -> None:
        """Create (or, when refreshing, re-create if the files changed) the views of `tables`."""
        conn = self.open_connection()
        if self.always_refresh_views:
            self._versions = self._iceberg_versions = None  # the last completed load may have changed
        for table in tables:
            if table in self._views and not self.always_refresh_views:
                continue
            if self.has_snapshots(table):
                self._create_delta_view(conn, table)
                continue
            files = tuple(self.table_files(table))
            if self._views.get(table) == files:
                continue
            self._create_view(conn, table, self.view_sql(table, list(files)), files)

    def _create_view(self, conn: duckdb.DuckDBPyConnection, table: str, select: str, files: tuple[str, ...]) -> None:
        view = f"{quote_ident(self.dataset_name)}.{quote_ident(table)}"
        logger.debug("view %s over %d files", view, len(files))
        try:
            conn.execute(f"CREATE OR REPLACE VIEW {view} AS {select}")
        except duckdb.Error as exc:
            raise SqlClientError(f"Cannot create the view of table '{table}' over {len(files)} files: {exc}") from exc
        self._views[table] = files

    def _create_delta_view(self, conn: duckdb.DuckDBPyConnection, table: str) -> None:
        """(Re-)create the view of a Delta table over its current snapshot, when that snapshot is new."""
        snapshot = self._open_snapshot(table)
        previous = self._delta.get(table)
        key = snapshot.key if snapshot else None
        if table in self._views and (previous.key if previous else None) == key:
            return
        columns = list(self.schema.complete_columns(table).values())
        select = delta_views.view_select(conn, columns, snapshot)
        self._create_view(conn, table, select, snapshot.files if snapshot else ())
        self._delta[table] = snapshot
        if previous is not None and previous.registered_name != (snapshot.registered_name if snapshot else None):
            delta_views.unregister(conn, previous)

    # -- queries ------------------------------------------------------------------------------------
    def _unknown_table(self, name: str) -> bool:
        return name.lower() not in self._lookup()

    def _query_connection(self, duck_sql: str) -> duckdb.DuckDBPyConnection:
        """A cursor with the views of the tables `duck_sql` names (created first) and the Delta snapshots registered."""
        tables, missing = self.referenced_tables(duck_sql)
        if missing:
            raise TableNotFoundError(missing[0], self.dataset_name, self.table_names)
        self.create_views(tables)
        connection = self.open_connection().cursor()
        try:
            self._search_path(connection)
            delta_views.register(connection, self._delta)  # registrations are per connection
        except BaseException:
            connection.close()
            raise
        return connection

"""`pipeline.dataset()`: the tables of a dataset as relations (pandas, Arrow, tuples or Spark).

One dataset keeps one :class:`FilesystemSqlClient`, so its views are snapshots taken at first use (unless
the destination sets `always_refresh_views`).

Example (after a run loaded `users` and its nested `pets`)::

    ds = pipeline.dataset()
    ds.tables                                        # ['users', 'users__pets', '_dlt_version', '_dlt_loads', '_dlt_pipeline_state']
    ds.users.select("id", "name").limit(2).fetchall()    # [(1, 'Alice'), (2, 'Bob')]
    ds.row_counts()                                  # [('users', 8), ('users__pets', 12)]
    ds("SELECT u.name, p.name FROM users u JOIN users__pets p ON p._dlt_parent_id = u._dlt_id").df()
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from lakeload.schema.schema import DLT_TABLE_PREFIX, Schema
from lakeload.sql.client import FilesystemSqlClient
from lakeload.sql.clients import SqlClient
from lakeload.sql.errors import ColumnNotFoundError, TableNotFoundError
from lakeload.sql.views import quote_ident, quote_literal

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession


class Relation:
    """A table or a query of a dataset; nothing runs until rows are asked for.

    Example (a dataset in a bucket; nothing is read here):
        >>> from lakeload.destinations.impl.filesystem.client import FilesystemClient
        >>> from lakeload.destinations.impl.filesystem.configuration import resolve_configuration
        >>> from lakeload.kernel.filesystem.layout import Layout
        >>> schema = Schema("crm")
        >>> schema.update_table({"name": "users", "columns": {"id": {"name": "id", "data_type": "bigint"}}})
        >>> config = resolve_configuration({"bucket_url": "memory://bucket"}, "filesystem", None)
        >>> ds = Dataset(FilesystemSqlClient(FilesystemClient(config, "mydata"), schema, Layout.parse()))
        >>> rel = ds.users.select("id").limit(3)
        >>> rel.query
        'SELECT "id" FROM "mydata"."users" LIMIT 3'
    """

    def __init__(self, dataset: Dataset, *, table: str | None = None, sql: str | None = None,
                 args: tuple[Any, ...] = (), columns: tuple[str, ...] | None = None, limit: int | None = None) -> None:
        if (table is None) == (sql is None):
            raise ValueError("A relation has either a table or a query")
        self._dataset = dataset
        self.table_name = table
        self._sql = sql
        self._args = args
        self._columns = columns
        self._limit = limit

    @property
    def query(self) -> str:
        """The SQL this relation runs."""
        if self.table_name is not None:
            source = f"{quote_ident(self._dataset.dataset_name)}.{quote_ident(self.table_name)}"
        else:
            source = f"({self._sql}) AS _lakeload_query"
        if self._columns is None and self._limit is None and self._sql is not None:
            return self._sql
        selected = ", ".join(quote_ident(c) for c in self._columns) if self._columns else "*"
        limit = f" LIMIT {self._limit}" if self._limit is not None else ""
        return f"SELECT {selected} FROM {source}{limit}"

    def _derive(self, **changes: Any) -> Relation:
        fields: dict[str, Any] = dict(table=self.table_name, sql=self._sql, args=self._args,
                                      columns=self._columns, limit=self._limit)
        fields.update(changes)
        return Relation(self._dataset, **fields)

    def select(self, *columns: str) -> Relation:
        """Only these columns. Example: `ds.users.select("id", "name")`."""
        if self.table_name is not None:
            known = self._dataset.schema.complete_columns(self.table_name)
            unknown = [c for c in columns if c not in known]
            if unknown:
                raise ColumnNotFoundError(unknown, self.table_name, list(known))
        return self._derive(columns=tuple(columns))

    def limit(self, n: int) -> Relation:
        """At most `n` rows. Example: `ds.users.limit(10).df()`."""
        return self._derive(limit=int(n))

    def head(self, n: int = 5) -> Relation:
        return self.limit(n)

    @property
    def columns(self) -> list[str]:
        """Column names of the result."""
        if self.table_name is not None:
            return list(self._columns or self._dataset.schema.complete_columns(self.table_name))
        with self._dataset.sql_client.execute_query(f"DESCRIBE {self.query}", *self._args) as cursor:
            return [str(row[0]) for row in cursor.fetchall()]

    # -- results ------------------------------------------------------------------------------------
    def _run(self, method: str, *args: Any) -> Any:
        with self._dataset.sql_client.execute_query(self.query, *self._args) as cursor:
            return getattr(cursor, method)(*args)

    def df(self, chunk_size: int | None = None) -> pd.DataFrame | None:
        return self._run("df", chunk_size)

    def arrow(self, chunk_size: int | None = None) -> pa.Table | None:
        return self._run("arrow", chunk_size)

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._run("fetchall")  # type: ignore[no-any-return]

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._run("fetchone")  # type: ignore[no-any-return]

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        return self._run("fetchmany", size)  # type: ignore[no-any-return]

    def _iter(self, method: str, chunk_size: int) -> Iterator[Any]:
        with self._dataset.sql_client.execute_query(self.query, *self._args) as cursor:
            yield from getattr(cursor, method)(chunk_size)

    def iter_fetch(self, chunk_size: int) -> Iterator[list[tuple[Any, ...]]]:
        return self._iter("iter_fetch", chunk_size)

    def iter_df(self, chunk_size: int) -> Iterator[pd.DataFrame]:
        return self._iter("iter_df", chunk_size)

    def iter_arrow(self, chunk_size: int) -> Iterator[pa.Table]:
        return self._iter("iter_arrow", chunk_size)

    def row_count(self) -> int:
        """Number of rows. Example: `ds.users.row_count()` -> `8`."""
        source = self.query
        with self._dataset.sql_client.execute_query(f"SELECT COUNT(*) FROM ({source}) AS _c", *self._args) as cursor:
            row = cursor.fetchone()
        return int(row[0]) if row else 0

    def spark(self, spark: SparkSession | None = None) -> DataFrame:
        """A Spark DataFrame of this relation.

        A table relation is read by Spark from the table's files (local buckets with `spark.read`, others on
        the executors through fsspec); a query relation runs in DuckDB and its Arrow result is handed to Spark.
        """
        from lakeload.sql.spark_read import read_table

        if spark is None:
            from lakeload.spark.session import get_spark

            spark = get_spark()
        client = self._dataset.sql_client
        if self.table_name is None or not isinstance(client, FilesystemSqlClient):  # (a database: its Arrow result)
            return spark.createDataFrame(self.arrow())
        frame = read_table(spark, client, self.table_name)
        if self._columns:
            frame = frame.select(*self._columns)
        if self._limit is not None:
            frame = frame.limit(self._limit)
        return frame

    def __repr__(self) -> str:
        return f"Relation({self.query!r})"


class RowCounts(list[tuple[str, int]]):
    """`(table, row count)` pairs; also answers `fetchall()`, `df()` and `arrow()` like dlt's relation."""

    def fetchall(self) -> list[tuple[str, int]]:
        return list(self)

    def arrow(self) -> pa.Table:
        import pyarrow as pa

        return pa.table({"table_name": [t for t, _ in self], "row_count": [n for _, n in self]})

    def df(self) -> pd.DataFrame:
        return self.arrow().to_pandas()


class Dataset:
    """The tables of one dataset, queried through DuckDB views (see :class:`FilesystemSqlClient`).

    Example (after a run loaded 8 users)::

        ds = pipeline.dataset()
        ds["users"].arrow().num_rows   # 8
    """

    def __init__(self, sql_client: SqlClient) -> None:
        self.sql_client = sql_client

    @property
    def schema(self) -> Schema:
        return self.sql_client.schema

    @property
    def dataset_name(self) -> str:
        return self.sql_client.dataset_name

    @property
    def tables(self) -> list[str]:
        """Data tables, then `_dlt_*` tables (only tables with at least one typed column)."""
        names = self.sql_client.table_names
        return [n for n in names if not n.startswith(DLT_TABLE_PREFIX)] + [n for n in names if n.startswith(DLT_TABLE_PREFIX)]

    def table(self, name: str) -> Relation:
        """The relation of one table; `TableNotFoundError` when the schema has no such table."""
        if name not in self.sql_client.table_names:
            raise TableNotFoundError(name, self.dataset_name, self.tables)
        return Relation(self, table=name)

    def __getitem__(self, name: str) -> Relation:
        return self.table(name)

    def __getattr__(self, name: str) -> Relation:
        if name.startswith("__") or name in ("sql_client",):
            raise AttributeError(name)
        return self.table(name)

    def query(self, sql: str, *args: Any) -> Relation:
        """A relation over SQL (DB-API `%s` placeholders). Example: `ds.query("SELECT * FROM users WHERE id = %s", 1)`."""
        return Relation(self, sql=sql, args=args)

    def __call__(self, sql: str, *args: Any) -> Relation:
        return self.query(sql, *args)

    def row_counts(self, *, data_tables: bool = True, dlt_tables: bool = False, table_names: list[str] | None = None,
                   load_id: str | None = None) -> RowCounts:
        """Rows per table: data tables that have seen data by default, like dlt.

        Example: `ds.row_counts()` -> `[('users', 8), ('users__pets', 12)]`.
        """
        selected = list(table_names or [])
        if not selected:
            if data_tables:
                selected += [t["name"] for t in self.schema.data_tables(seen_data_only=True)
                             if t["name"] in self.sql_client.table_names]
            if dlt_tables:
                selected += [n for n in self.sql_client.table_names if n.startswith(DLT_TABLE_PREFIX)]
        for name in selected:
            if name not in self.sql_client.table_names:
                raise TableNotFoundError(name, self.dataset_name, self.tables)
        if load_id is not None:
            selected = [n for n in selected if "_dlt_load_id" in self.schema.complete_columns(n)]
        if not selected:
            return RowCounts()
        where = f" WHERE _dlt_load_id = {quote_literal(load_id)}" if load_id is not None else ""
        parts = [
            f"SELECT {quote_literal(name)} AS table_name, COUNT(*) AS row_count "
            f"FROM {quote_ident(self.dataset_name)}.{quote_ident(name)}{where}"
            for name in selected
        ]
        rows = self.sql_client.execute_sql(" UNION ALL ".join(parts)) or []
        counts = {str(t): int(n) for t, n in rows}
        return RowCounts((name, counts[name]) for name in selected)

    def close(self) -> None:
        """Close the DuckDB connection (views are created again on the next query)."""
        self.sql_client.close_connection()

    def __enter__(self) -> Dataset:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Dataset({self.dataset_name!r}, tables={self.tables})"

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

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeload.schema.schema import DLT_TABLE_PREFIX, Schema
from lakeload.sql.clients import SqlClient
from lakeload.sql.errors import TableNotFoundError
from lakeload.sql.relation import Relation
from lakeload.sql.relation_ibis import ibis_query, is_ibis_expression
from lakeload.sql.relation_sql import DIALECT, column, has_placeholders, is_dialect, transpile

__all__ = ["Dataset", "Relation", "RowCounts"]

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


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
        self.ibis_queries: dict[str, str] = {}  # the queries of relations handed out as Ibis tables (`to_ibis`)

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

    def table(self, name: str, *, load_ids: Collection[str] | None = None) -> Relation:
        """The relation of one table; `TableNotFoundError` when the schema has no such table. With `load_ids`,
        only the rows of these loads (`Relation.from_loads`)."""
        if name not in self.sql_client.table_names:
            raise TableNotFoundError(name, self.dataset_name, self.tables)
        relation = Relation(self, table=name)
        return relation.from_loads(load_ids) if load_ids else relation

    def loads_table(self) -> Relation:
        """The `_dlt_loads` table."""
        return self.table("_dlt_loads")

    def load_ids(self, schema_name: str | None = None) -> list[str]:
        """Ids of the loads of a schema (the dataset's by default) in `_dlt_loads`, oldest first."""
        rows = (self.loads_table().where("schema_name", "eq", schema_name or self.schema.name)
                .select("load_id").order_by("load_id").fetchall())
        return [str(row[0]) for row in rows]

    def latest_load_id(self, schema_name: str | None = None) -> str | None:
        """The newest load id of a schema (the dataset's by default), or None before the first load."""
        found = self.loads_table().where("schema_name", "eq", schema_name or self.schema.name).select("load_id").max()
        value = found.fetchscalar()
        return None if value is None else str(value)

    def __getitem__(self, name: str) -> Relation:
        return self.table(name)

    def __getattr__(self, name: str) -> Relation:
        if name.startswith("__") or name in ("sql_client", "ibis_queries"):
            raise AttributeError(name)
        return self.table(name)

    def query(self, sql: str | exp.Query | Any, *args: Any, query_dialect: str | None = None) -> Relation:
        """A relation over SQL text (DB-API `%s` placeholders, values in `args`), a sqlglot query or an Ibis
        expression of this dataset's `to_ibis()` tables, in DuckDB's dialect, or in `query_dialect` (a sqlglot
        dialect such as "bigquery"; dlt passes it as the one argument after a query without placeholders).
        Example: `ds.query("SELECT * FROM users WHERE id = %s", 1)`."""
        if is_ibis_expression(sql):
            return Relation(self, sql=ibis_query(sql, self))
        if query_dialect is None and len(args) == 1 and isinstance(sql, str) and is_dialect(args[0]) \
                and not has_placeholders(sql):
            query_dialect, args = args[0], ()
        if query_dialect and isinstance(sql, str):
            sql = transpile(sql, query_dialect)
        return Relation(self, sql=sql, args=args)

    def __call__(self, sql: str | exp.Query | Any, *args: Any, query_dialect: str | None = None) -> Relation:
        """`query()`."""
        return self.query(sql, *args, query_dialect=query_dialect)

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
        parts: list[exp.Select] = []
        for name in selected:
            count = exp.select(exp.alias_(exp.Literal.string(name), "table_name"),
                               exp.alias_(exp.Count(this=exp.Star()), "row_count")).from_(
                exp.table_(name, db=self.dataset_name, quoted=True))
            parts.append(count.where(column("_dlt_load_id").eq(exp.Literal.string(load_id))) if load_id is not None else count)
        union: exp.Query = parts[0]
        for part in parts[1:]:
            union = union.union(part, distinct=False)
        rows = self.sql_client.execute_sql(union.sql(dialect=DIALECT)) or []
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

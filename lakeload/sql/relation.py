"""`Relation`: a table or a query of a dataset, with dlt 1.31's relation methods (`select`, `where`/`filter`,
`order_by`, `limit`/`head`, `max`/`min`, `join`, `from_loads`, `rel[["a", "b"]]`). Each method returns a new
relation holding a sqlglot query; DuckDB runs it over the dataset when rows are asked for (`df`, `arrow`,
`fetchall`, `iter_*` ...), so no row passes through Python before.

Example (after a run loaded `users` and its nested `users__pets`)::

    users = pipeline.dataset().users
    users.where("id", "in", [1, 2]).order_by("name", "desc").select("id", "name").fetchall()
    users.select("id").max().fetchscalar()
    users.join("users__pets", alias="pet").select("name", "pet__kind").df()
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeload.schema.typing import TColumn
from lakeload.sql import relation_sql as rs
from lakeload.sql.client import FilesystemSqlClient
from lakeload.sql.errors import ColumnNotFoundError, InvalidArgumentError, TableNotFoundError
from lakeload.sql.relation_ibis import to_ibis
from lakeload.sql.relation_join import JOIN_KINDS, JoinTarget, auto_join, explicit_join
from lakeload.sql.relation_results import DatasetLike, RelationResults

if TYPE_CHECKING:
    from ibis.expr.types import Table
    from pyspark.sql import DataFrame, SparkSession
    from sqlglot.expressions import Expr


class Relation(RelationResults):
    """A table or a query of a dataset; nothing runs until rows are asked for.

    Example (a dataset in a bucket; nothing is read here):
        >>> from lakeload.destinations.impl.filesystem.client import FilesystemClient
        >>> from lakeload.destinations.impl.filesystem.configuration import resolve_configuration
        >>> from lakeload.kernel.filesystem.layout import Layout
        >>> from lakeload.schema.schema import Schema
        >>> from lakeload.sql.dataset import Dataset
        >>> schema = Schema("crm")
        >>> schema.update_table({"name": "users", "columns": {"id": {"name": "id", "data_type": "bigint"}}})
        >>> config = resolve_configuration({"bucket_url": "memory://bucket"}, "filesystem", None)
        >>> ds = Dataset(FilesystemSqlClient(FilesystemClient(config, "mydata"), schema, Layout.parse()))
        >>> ds.users.select("id").limit(3).query
        'SELECT "id" FROM "mydata"."users" LIMIT 3'
        >>> ds.users.where("id", "in", [1, 2]).order_by("id", "desc").to_sql()
        'SELECT "id" FROM "mydata"."users" WHERE "id" IN (CAST(1 AS BIGINT), CAST(2 AS BIGINT)) ORDER BY "id" DESC'
    """

    def __init__(self, dataset: DatasetLike, *, table: str | None = None, sql: str | exp.Query | None = None,
                 args: tuple[Any, ...] = ()) -> None:
        if (table is None) == (sql is None):
            raise ValueError("A relation has either a table or a query")
        self._dataset = dataset
        self.table_name = table
        self._raw: str | None = sql if isinstance(sql, str) else None  # a query run as written until derived from
        self._args = args
        self._params: dict[str, Any] = {}
        self._expr: exp.Query | None = sql.copy() if isinstance(sql, exp.Query) else None
        self._columns: dict[str, TColumn] | None = None  # output columns when known without asking DuckDB
        self._spark_shape: tuple[tuple[str, ...] | None, int | None] | None = None  # a table read as is by Spark
        if table is not None:
            self._columns = dict(dataset.schema.complete_columns(table))
            self._expr = rs.table_select(dataset.dataset_name, table, self._columns)
            self._spark_shape = (None, None)

    # -- the query ----------------------------------------------------------------------------------
    @property
    def sqlglot_expression(self) -> exp.Query:
        """The query as a sqlglot tree (a copy; the SQL of a query relation is parsed on first use)."""
        return self._tree().copy()

    def _tree(self) -> exp.Query:
        if self._expr is None:
            assert self._raw is not None
            text, self._params = rs.named_placeholders(self._raw, self._args)
            self._expr = rs.parse_query(text)
        return self._expr

    def _statement(self) -> tuple[str, list[Any]]:
        """The SQL to run (DB-API `%s` placeholders) and its values."""
        if self._raw is not None:  # a query relation runs as written
            return self._raw, list(self._args)
        return rs.bind(self._tree().sql(dialect=rs.DIALECT), self._params)

    def to_sql(self, pretty: bool = False) -> str:
        """The SQL this relation runs, in DuckDB's dialect (values of a SQL relation as `%s` placeholders)."""
        if self._raw is not None:
            return self._raw
        return rs.bind(self._tree().sql(dialect=rs.DIALECT, pretty=pretty), self._params)[0]

    @property
    def query(self) -> str:
        """The SQL this relation runs (see `to_sql`)."""
        return self.to_sql()

    def _derive(self, expr: exp.Query, columns: dict[str, TColumn] | None, *,
                spark_shape: tuple[tuple[str, ...] | None, int | None] | None = None,
                params: dict[str, Any] | None = None) -> Relation:
        rel = Relation.__new__(Relation)
        rel._dataset, rel.table_name, rel._raw, rel._args = self._dataset, self.table_name, None, ()
        rel._params = {**self._params, **(params or {})}
        rel._expr, rel._columns, rel._spark_shape = expr, columns, spark_shape
        return rel

    def _known(self, names: Sequence[str]) -> None:
        """`ColumnNotFoundError` unless all of `names` are columns of this relation (when they are known)."""
        if self._columns is not None:
            unknown = [n for n in names if n not in self._columns]
            if unknown:
                raise ColumnNotFoundError(unknown, self.table_name or "(query)", list(self._columns))

    # -- building -----------------------------------------------------------------------------------
    def select(self, *columns: str) -> Relation:
        """Only these columns, in this order. Example: `ds.users.select("id", "name")`; unknown columns of a
        table raise `ColumnNotFoundError` naming the table's columns."""
        self._known(columns)
        projection = [rs.column(c) for c in columns]
        tree = self._tree()
        if rs.is_plain_projection(tree):
            expr = tree.copy()
            expr.set("expressions", projection)
        else:
            expr = rs.wrap(tree, projection)
        known = {c: self._columns[c] for c in columns} if self._columns is not None else None
        shape = (tuple(columns), self._spark_shape[1]) if self._spark_shape is not None else None
        return self._derive(expr, known, spark_shape=shape)

    def __getitem__(self, columns: str | Sequence[str]) -> Relation:
        """`rel["name"]` or `rel[["id", "name"]]`: `select()` of these columns (`KeyError` for unknown ones)."""
        names = [columns] if isinstance(columns, str) else list(columns)
        if self._columns is None:
            unknown = [c for c in names if c not in self.columns]
            if unknown:
                raise ColumnNotFoundError(unknown, self.table_name or "(query)", self.columns)
        return self.select(*names)

    def limit(self, limit: int) -> Relation:
        """At most `limit` rows. Example: `ds.users.limit(10).df()`."""
        tree = self._tree()
        expr = tree.copy() if isinstance(tree, exp.Select) else rs.wrap(tree)
        expr = expr.limit(int(limit))
        shape = (self._spark_shape[0], int(limit)) if self._spark_shape is not None else None
        return self._derive(expr, self._columns, spark_shape=shape)

    def head(self, limit: int = 5) -> Relation:
        """The first `limit` rows (5 by default): `limit()`."""
        return self.limit(limit)

    def order_by(self, column_name: str, direction: str = "asc") -> Relation:
        """Sorted by `column_name`, `"asc"` or `"desc"`; calls add keys. Example: `ds.users.order_by("id", "desc")`."""
        if direction not in ("asc", "desc"):
            raise InvalidArgumentError(f"`{direction}` is not a sort order; use \"asc\" or \"desc\"")
        self._known([column_name])
        tree = self._tree()
        expr = tree.copy() if isinstance(tree, exp.Select) else rs.wrap(tree)
        expr = expr.order_by(exp.Ordered(this=rs.column(column_name), desc=direction == "desc"))
        return self._derive(expr, self._columns)

    def where(self, column_or_expr: str | Expr, operator: str | None = None, value: Any = None) -> Relation:
        """Rows that pass a filter: `where("id", "gt", 3)` (operators eq, ne, gt, lt, gte, lte, in, not_in; the
        value becomes a literal of the column's type), or a SQL condition as text or sqlglot expression
        (`where("id > 3 AND name LIKE 'A%'")`)."""
        if operator is None and value is None:
            condition = rs.to_condition(column_or_expr)
            tree = self._tree()
            expr = tree.copy() if isinstance(tree, exp.Select) else rs.wrap(tree)
            return self._derive(expr.where(condition), self._columns)
        if not isinstance(column_or_expr, str) or operator is None:
            raise InvalidArgumentError("where(column, operator, value) takes a column name and an operator")
        self._known([column_or_expr])
        schema_column = (self._columns or {}).get(column_or_expr)
        tree = self._tree()
        if isinstance(tree, exp.Select):  # as dlt: the filter joins the WHERE of the select (before its LIMIT)
            expr, target = tree.copy(), self._target_of(tree, column_or_expr)
        else:
            expr, target = rs.wrap(tree), rs.column(column_or_expr)
        return self._derive(expr.where(rs.comparison(target, operator, value, schema_column)), self._columns)

    filter = where  # noqa: A003 - dlt's name

    @staticmethod
    def _target_of(select: exp.Select, name: str) -> Expr:
        """What `name` stands for in the WHERE of `select`: the expression a joined projection aliases, else the
        column (qualified by the FROM source when the select joins tables)."""
        if not select.args.get("joins"):
            return rs.column(name)
        for projection in select.selects:
            if isinstance(projection, exp.Alias) and projection.alias == name:
                return projection.this.copy()
        return rs.column(name, rs.source_qualifier(rs.from_source(select)))

    def _aggregate(self, function: type[exp.AggFunc]) -> Relation:
        tree = self._tree()
        selects = tree.selects
        names = list(self._columns) if self._columns is not None else [s.alias_or_name for s in selects]
        if len(names) != 1 or isinstance(selects[0], exp.Star):
            raise InvalidArgumentError(f"{function.__name__.lower()}() needs exactly one column; select it first, e.g. "
                                       f".select(\"id\").{function.__name__.lower()}()")
        if isinstance(tree, exp.Select) and rs.is_flat(tree):
            expr = tree.copy()
            target = expr.selects[0]
            expr.set("expressions", [function(this=(target.this if isinstance(target, exp.Alias) else target).copy())])
            expr.set("order", None)
        else:
            inner = tree.copy()
            expr = exp.select(function(this=rs.column(names[0]))).from_(rs.derived(inner))
        return self._derive(expr, None)

    def max(self) -> Relation:  # noqa: A003 - dlt's name
        """The largest value of the one selected column. Example: `ds.users.select("id").max().fetchscalar()`."""
        return self._aggregate(exp.Max)

    def min(self) -> Relation:  # noqa: A003 - dlt's name
        """The smallest value of the one selected column. Example: `ds.users.select("id").min().fetchscalar()`."""
        return self._aggregate(exp.Min)

    def join(self, other: str | Relation, on: str | Expr | None = None, *, kind: str = "inner",
             alias: str | None = None) -> Relation:
        """Join another table (by name, or a relation of this dataset) as dlt 1.31 does; its columns are appended
        as `<alias or table>__<column>`. Without `on`, the join follows the schema's references (a nested table
        and its parent or root, a table and `_dlt_loads`, declared `references`); with `on`, that condition
        (`"users.id = orders.user_id"`). `kind`: "inner", "left", "right" or "full".

        Example: `ds.users.join("users__pets", alias="pet").select("name", "pet__kind").df()`."""
        if kind not in JOIN_KINDS:
            raise InvalidArgumentError(f"Unknown join kind '{kind}'; use one of {list(JOIN_KINDS)}")
        if alias == "" or (isinstance(on, str) and not on.strip()):
            raise InvalidArgumentError("`alias` and `on` must not be empty when given")
        target, params = self._join_target(other, explicit=on is not None)
        prefix = alias or target.table
        if on is None:
            if self.table_name is None:
                raise InvalidArgumentError("A SQL relation has no table to find join references from; pass `on=`")
            expr, added = auto_join(self._tree(), self._dataset.schema, self._dataset.dataset_name, self.table_name,
                                    target, prefix, kind)
        else:
            expr, added = explicit_join(self._tree(), self._dataset.dataset_name, target, rs.to_condition(on), prefix, kind)
        columns = {**self._columns, **added} if self._columns is not None else None
        return self._derive(expr, columns, params=params)

    def _join_target(self, other: str | Relation, explicit: bool) -> tuple[JoinTarget, dict[str, Any]]:
        schema = self._dataset.schema
        if isinstance(other, str):
            name = other.split(".", 1)[1] if other.startswith(self._dataset.dataset_name + ".") else other
            if name not in self._dataset.sql_client.table_names:
                raise TableNotFoundError(name, self._dataset.dataset_name, list(self._dataset.sql_client.table_names))
            return JoinTarget(name, dict(schema.complete_columns(name))), {}
        mine, theirs = self._dataset, other._dataset
        if theirs.dataset_name != mine.dataset_name or type(theirs.sql_client) is not type(mine.sql_client):
            raise InvalidArgumentError("lakeload joins relations of one dataset only; for another dataset, write the "
                                       "query in SQL with both tables (pipeline.sql_client()) or load one dataset first")
        pristine = other.table_name is not None and other._spark_shape == (None, None)
        if pristine:
            assert other.table_name is not None
            return JoinTarget(other.table_name, dict(schema.complete_columns(other.table_name))), {}
        if other.table_name is None and not explicit:
            raise InvalidArgumentError("A SQL relation has no table to find join references from; pass `on=`")
        tree = other._tree()
        name = other.table_name or rs.source_qualifier(rs.from_source(tree)) or "subquery"
        columns = other._columns if other._columns is not None else other.columns_schema
        return JoinTarget(name, dict(columns), tree), other._params

    def with_load_id_col(self) -> Relation:
        """This table relation with the `_dlt_load_id` of its root table (joined when it is a nested table)."""
        if self.table_name is None:
            raise InvalidArgumentError("with_load_id_col() works on table relations (dataset.table(...)) only")
        if "_dlt_load_id" in (self._columns or {}):
            return self
        root = self._dataset.schema.root_table_of(self.table_name)["name"]
        if root == self.table_name:
            raise InvalidArgumentError(f"Table '{root}' has no _dlt_load_id column")
        target = JoinTarget(root, {"_dlt_load_id": self._dataset.schema.complete_columns(root)["_dlt_load_id"]})
        expr, added = auto_join(self._tree(), self._dataset.schema, self._dataset.dataset_name, self.table_name,
                                target, "_dlt_root", "inner")
        output = next(iter(added))
        expr.set("expressions", [*expr.selects[:-1], exp.alias_(expr.selects[-1].this, "_dlt_load_id", quoted=True)])
        load_id_column: TColumn = {**added[output], "name": "_dlt_load_id"}
        columns = {**(self._columns or {}), "_dlt_load_id": load_id_column}
        return self._derive(expr, columns)

    def from_loads(self, load_ids: Collection[str], add_load_id_column: bool = False) -> Relation:
        """Only the rows of these loads (by the root table's `_dlt_load_id`), as dlt's `from_loads`."""
        initial = list(self.columns)
        filtered = self.with_load_id_col().where("_dlt_load_id", "in", list(load_ids))
        return filtered if add_load_id_column else filtered.select(*initial)

    # -- columns ------------------------------------------------------------------------------------
    @property
    def columns_schema(self) -> dict[str, TColumn]:
        """The result's columns as schema columns: from the dataset's schema, or (for SQL) as DuckDB types them."""
        if self._columns is not None:
            return dict(self._columns)
        sql, args = self._statement()
        with self._dataset.sql_client.execute_query(sql, *args) as cursor:
            return {str(d[0]): rs.column_from_duckdb(str(d[0]), str(d[1])) for d in cursor.description or []}

    @property
    def schema(self) -> dict[str, Any]:
        """The result as a table schema: `{"columns": columns_schema}` (dlt's `Relation.schema`)."""
        return {"columns": self.columns_schema}

    @property
    def columns(self) -> list[str]:
        """Column names of the result."""
        return list(self.columns_schema)

    def spark(self, spark: SparkSession | None = None) -> DataFrame:
        """A Spark DataFrame of this relation.

        A table relation (with at most `select` and `limit`) is read by Spark from the table's files (local
        buckets with `spark.read`, others on the executors through fsspec); any other relation runs in DuckDB
        and its Arrow result is handed to Spark.
        """
        from lakeload.sql.spark_read import read_table

        if spark is None:
            from lakeload.spark.session import get_spark

            spark = get_spark()
        client = self._dataset.sql_client
        if self.table_name is None or self._spark_shape is None or not isinstance(client, FilesystemSqlClient):
            return spark.createDataFrame(self.arrow())
        frame = read_table(spark, client, self.table_name)
        columns, limit = self._spark_shape
        if columns:
            frame = frame.select(*columns)
        if limit is not None:
            frame = frame.limit(limit)
        return frame

    def to_ibis(self) -> Table:
        """This relation as an unbound Ibis table; `dataset(expression)` runs an expression built from it
        (`lakeload.sql.relation_ibis`). Needs Ibis: `pip install "lakeload[ibis]"`."""
        table = self.table_name if self._spark_shape == (None, None) else None  # the table itself, else a query
        return to_ibis(self._dataset, self.columns_schema, table, self._statement())

    def __str__(self) -> str:
        columns = "".join(f"  {name} {column.get('data_type')}\n" for name, column in self.columns_schema.items())
        query = "\n".join(f"  {line}" for line in self.to_sql(pretty=True).splitlines())
        return f"Relation query:\n{query}\nColumns:\n{columns}"

    def __repr__(self) -> str:
        return f"Relation({self.query!r})"

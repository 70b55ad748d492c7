"""Ibis expressions over a dataset, as dlt 1.31 offers them: `relation.to_ibis()` gives an `ibis.Table`, and
`dataset(expression)` turns an expression built from such tables back into a relation that DuckDB runs.

A table relation becomes an unbound Ibis table named as the dataset's table (`"<dataset>"."<table>"`) with the
schema's column types; any other relation (filtered, selected, a SQL query) becomes an unbound table with a name of
its own that stands for the relation's query: when the expression comes back, its SQL (compiled by Ibis for DuckDB)
gets that query as a CTE. Ibis is optional (`pip install "lakeload[ibis]"`); nothing is read before the relation's
rows are asked for.

Example (a dataset with `customers` and `purchases`; runs nothing until `.df()`)::

    customers, purchases = ds.customers.to_ibis(), ds.purchases.to_ibis()
    joined = customers.join(purchases, customers.id == purchases.customer_id)
    ds(joined.filter(purchases.quantity > 1)).df()
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeload.errors import MissingDependencyError
from lakeload.sql import relation_sql as rs
from lakeload.sql.errors import InvalidArgumentError

if TYPE_CHECKING:
    from ibis.expr.types import Table

    from lakeload.schema.typing import TColumn
    from lakeload.sql.relation_results import DatasetLike

QUERY_PREFIX = "__lakeload_relation_"
_NUMBERS = itertools.count(1)
# dlt's data types as Ibis types (decimals, timestamps and wei get their precision from the column below)
IBIS_TYPES = {
    "text": "string", "bigint": "int64", "double": "float64", "bool": "boolean", "date": "date", "time": "time",
    "json": "json", "binary": "binary", "decimal": "decimal", "wei": "decimal(38, 0)", "timestamp": "timestamp",
}


def ibis_module() -> Any:
    """The `ibis` package, or `MissingDependencyError` naming how to install it."""
    try:
        import ibis
    except ImportError as exc:
        raise MissingDependencyError(
            'Ibis expressions over a dataset need Ibis: pip install "lakeload[ibis]" (or ibis-framework)'
        ) from exc
    return ibis


def ibis_type(column: TColumn) -> str:
    """The Ibis type of a schema column. Example: a `decimal` of precision 10 and scale 3 is `decimal(10, 3)`."""
    data_type = str(column.get("data_type") or "text")
    if data_type == "decimal" and column.get("precision") is not None:
        return f"decimal({column['precision']}, {column.get('scale') or 0})"
    if data_type == "decimal":
        return "decimal(38, 9)"
    if data_type == "timestamp":
        return "timestamp" if column.get("timezone") is False else "timestamp('UTC')"
    return IBIS_TYPES.get(data_type, "string")


def to_ibis(dataset: DatasetLike, columns: dict[str, TColumn], table: str | None,
            statement: tuple[str, list[Any]]) -> Table:
    """A relation of `dataset` with these output `columns` as an unbound Ibis table: the dataset's `table` itself
    when given, else a stand-in for the relation's query `statement` (SQL and values)."""
    ibis = ibis_module()
    schema = {name: ibis_type(column) for name, column in columns.items()}
    if table is not None:
        return ibis.table(schema, name=table, database=dataset.dataset_name)
    sql, values = statement
    if values:
        raise InvalidArgumentError(
            "to_ibis() takes a relation without query parameters; write the values into the query, or build the "
            "filter with Ibis on the table's to_ibis()"
        )
    name = f"{QUERY_PREFIX}{next(_NUMBERS)}"
    dataset.ibis_queries[name] = sql
    return ibis.table(schema, name=name)


def is_ibis_expression(value: Any) -> bool:
    """Whether `value` is an Ibis table expression (checked without importing Ibis)."""
    return type(value).__module__.startswith("ibis.expr")


def ibis_query(expression: Any, dataset: Any) -> exp.Query:
    """The DuckDB query of an Ibis table expression built from this dataset's `to_ibis()` tables."""
    ibis = ibis_module()
    query = rs.parse_query(ibis.to_sql(expression, dialect=rs.DIALECT))
    known = dataset.ibis_queries
    used = {t.name for t in query.find_all(exp.Table) if t.name in known and not t.db}
    for name in sorted(used):
        query = query.with_(exp.to_identifier(name, quoted=True), as_=rs.parse_query(known[name]))
    return query


"""The sqlglot building blocks of :class:`lakeload.sql.relation.Relation`: the SELECT of a table, typed literals
for `where()`, query parameters kept as named placeholders, and the shapes of a SELECT (whether a new projection,
filter or aggregate can go into it, or it must become a derived table first).

Values never enter SQL text as strings: `where()` values become sqlglot literals (cast to the column's DuckDB
type), and the `%s` arguments of a SQL relation become named placeholders that are bound as DuckDB parameters.

>>> select = table_select("mydata", "users", ["id", "name"])
>>> select.sql("duckdb")
'SELECT "id", "name" FROM "mydata"."users"'
>>> select.where(comparison(column("name"), "eq", "O'Hara", {"name": "name", "data_type": "text"})).sql("duckdb")
'SELECT "id", "name" FROM "mydata"."users" WHERE "name" = CAST(\\'O\\'\\'Hara\\' AS TEXT)'
"""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from lakeload.schema.typing import TColumn
from lakeload.sql.errors import InvalidArgumentError, SqlQueryError
from lakeload.sql.types import duckdb_type

if TYPE_CHECKING:
    from sqlglot.expressions import Expr

DIALECT = "duckdb"
SUBQUERY = "_lakeload_query"
FILTER_OPERATORS = ("eq", "ne", "gt", "lt", "gte", "lte", "in", "not_in")
_COMPARISONS: dict[str, type[exp.Binary]] = {
    "eq": exp.EQ, "ne": exp.NEQ, "gt": exp.GT, "lt": exp.LT, "gte": exp.GTE, "lte": exp.LTE,
}
_DUCKDB_TYPES = {"BIGINT": ("bigint", None), "INTEGER": ("bigint", 32), "SMALLINT": ("bigint", 16),
                 "TINYINT": ("bigint", 8), "HUGEINT": ("bigint", 128), "VARCHAR": ("text", None),
                 "DOUBLE": ("double", None), "FLOAT": ("double", None), "BOOLEAN": ("bool", None),
                 "DATE": ("date", None), "TIME": ("time", None), "BLOB": ("binary", None), "JSON": ("json", None),
                 "TIMESTAMP WITH TIME ZONE": ("timestamp", None), "TIMESTAMP": ("timestamp", None)}
_PARAM = "lakeload_p"
_PARAM_NAMES = itertools.count()
# string literals, quoted identifiers and comments are skipped when placeholders are looked for
_SCAN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|%%|%s|\$" + _PARAM + r"\d+\b", re.S)


def column(name: str, table: str | None = None) -> exp.Column:
    """A quoted column, qualified by `table` (a source's qualifier) when given."""
    return exp.Column(this=exp.to_identifier(name, quoted=True),
                      table=exp.to_identifier(table, quoted=True) if table else None)


def table_select(dataset_name: str, table: str, columns: Iterable[str] | None = None) -> exp.Select:
    """`SELECT <columns or *> FROM "<dataset>"."<table>"`."""
    projection: list[Expr] = [column(c) for c in columns] if columns else [exp.Star()]
    return exp.select(*projection).from_(exp.table_(table, db=dataset_name, quoted=True))


# -- parameters -----------------------------------------------------------------------------------
def named_placeholders(sql: str, args: Sequence[Any]) -> tuple[str, dict[str, Any]]:
    """Turn the DB-API `%s` placeholders of `sql` into unique named ones (`$lakeload_p<n>`), `%%` into `%`.

    >>> text, params = named_placeholders("SELECT '%s', id FROM t WHERE id > %s", [3])
    >>> text.startswith("SELECT '%s', id FROM t WHERE id > $lakeload_p"), list(params.values())
    (True, [3])
    """
    params: dict[str, Any] = {}
    values = iter(args)

    def swap(match: re.Match[str]) -> str:
        text = match.group(0)
        if text == "%%":
            return "%"
        if text != "%s":
            return text
        try:
            value = next(values)
        except StopIteration:
            raise InvalidArgumentError(f"The query has more %s placeholders than the {len(args)} values given") from None
        name = f"{_PARAM}{next(_PARAM_NAMES)}"
        params[name] = value
        return f"${name}"

    text = _SCAN.sub(swap, sql)
    if len(params) != len(args):
        raise InvalidArgumentError(f"The query has {len(params)} %s placeholders but {len(args)} values were given")
    return text, params


def has_placeholders(sql: str) -> bool:
    """Whether `sql` has DB-API `%s` placeholders (outside literals and comments)."""
    return any(m.group(0) == "%s" for m in _SCAN.finditer(sql))


def is_dialect(name: Any) -> bool:
    """Whether `name` names a sqlglot dialect (`"duckdb"`, `"bigquery"`, ...)."""
    return isinstance(name, str) and name.lower() in {d.value for d in sqlglot.Dialects if d.value}


def transpile(sql: str, dialect: str) -> str:
    """`sql` written in `dialect`, as DuckDB's SQL.

    >>> transpile("SELECT `id` FROM users", "bigquery")
    'SELECT "id" FROM users'
    """
    try:
        return sqlglot.transpile(sql, read=dialect.lower(), write=DIALECT)[0]
    except sqlglot.errors.SqlglotError as exc:
        raise SqlQueryError(sql, f"Cannot read this query as {dialect} SQL: {exc}") from exc


def bind(sql: str, params: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """`sql` with its named placeholders as `%s` and their values in order (DB-API style, as `execute_query` takes).

    >>> bind("SELECT $lakeload_p1 + $lakeload_p1, '$lakeload_p1'", {"lakeload_p1": 2})
    ("SELECT %s + %s, '$lakeload_p1'", [2, 2])
    """
    values: list[Any] = []

    def swap(match: re.Match[str]) -> str:
        text = match.group(0)
        if text.startswith("$") and text[1:] in params:
            values.append(params[text[1:]])
            return "%s"
        return "%%" if text == "%%" else text

    return _SCAN.sub(swap, sql), values


def parse_query(sql: str) -> exp.Query:
    """The sqlglot tree of a SELECT (or UNION ...) in DuckDB's dialect; `SqlQueryError` when it is something else."""
    try:
        parsed = sqlglot.parse_one(sql, read=DIALECT)
    except sqlglot.errors.SqlglotError as exc:
        raise SqlQueryError(sql, f"lakeload cannot parse this query to build a relation on it ({exc}); run it "
                                 "as it is with dataset(sql), or write the whole query in SQL") from exc
    if not isinstance(parsed, exp.Query):
        raise SqlQueryError(sql, "A relation is built on a SELECT query; run other statements with sql_client()")
    return parsed


# -- literals -------------------------------------------------------------------------------------
def _plain_literal(value: Any) -> Expr:
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float, decimal.Decimal)):
        return exp.Literal.number(str(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return exp.Unhex(this=exp.Literal.string(bytes(value).hex()))
    if isinstance(value, dt.datetime):
        return exp.cast(exp.Literal.string(value.isoformat()), "TIMESTAMPTZ" if value.tzinfo else "TIMESTAMP")
    if isinstance(value, dt.date):
        return exp.cast(exp.Literal.string(value.isoformat()), "DATE")
    if isinstance(value, dt.time):
        return exp.cast(exp.Literal.string(value.isoformat()), "TIME")
    return exp.Literal.string(str(value))


def literal(value: Any, schema_column: TColumn | None = None) -> Expr:
    """`value` as a sqlglot literal, cast to the DuckDB type of `schema_column` when it has a data type (as dlt
    casts `where()` values to the column's type)."""
    node = _plain_literal(value)
    if value is None or schema_column is None or not schema_column.get("data_type"):
        return node
    return exp.Cast(this=node, to=exp.DataType.build(duckdb_type(schema_column), dialect=DIALECT))


def comparison(target: Expr, operator: str, value: Any, schema_column: TColumn | None = None) -> Expr:
    """The condition `target <operator> value` for dlt's filter operators (eq, ne, gt, lt, gte, lte, in, not_in);
    `eq`/`ne` with None are `IS NULL`/`IS NOT NULL`."""
    if operator not in FILTER_OPERATORS:
        raise InvalidArgumentError(f"Unknown filter operator '{operator}'; use one of {list(FILTER_OPERATORS)}")
    if operator in ("in", "not_in"):
        items = [value] if isinstance(value, (str, bytes)) or not isinstance(value, Iterable) else list(value)
        condition: Expr = exp.In(this=target, expressions=[literal(v, schema_column) for v in items])
        return exp.Not(this=condition) if operator == "not_in" else condition
    if value is None and operator in ("eq", "ne"):
        is_null = exp.Is(this=target, expression=exp.Null())
        return is_null if operator == "eq" else exp.Not(this=is_null)
    return _COMPARISONS[operator](this=target, expression=literal(value, schema_column))


def to_condition(condition: str | Expr) -> Expr:
    """A SQL condition given as text (DuckDB's dialect) or as a sqlglot expression."""
    if not isinstance(condition, str):
        return condition
    try:
        parsed = sqlglot.parse_one(condition, read=DIALECT)
    except sqlglot.errors.SqlglotError as exc:
        raise InvalidArgumentError(f"Cannot parse the condition {condition!r}: {exc}") from None
    if not isinstance(parsed, exp.Condition):
        raise InvalidArgumentError(f"{condition!r} is not a SQL condition (e.g. \"id > 3\")")
    return parsed


def column_from_duckdb(name: str, duck_type: str) -> TColumn:
    """A schema column for a result column of DuckDB's type `duck_type` (`json` for nested types).

    >>> column_from_duckdb("amount", "DECIMAL(10,2)")
    {'name': 'amount', 'data_type': 'decimal', 'precision': 10, 'scale': 2}
    """
    text = duck_type.upper()
    if text.startswith("DECIMAL"):
        digits, _, scale = text[text.index("(") + 1:-1].partition(",") if "(" in text else ("38", "", "9")
        return {"name": name, "data_type": "decimal", "precision": int(digits), "scale": int(scale or 0)}
    data_type, precision = _DUCKDB_TYPES.get(text, ("json" if text.endswith("]") or text.startswith(("STRUCT", "MAP")) else "text", None))
    found: TColumn = {"name": name, "data_type": data_type}
    if precision is not None:
        found["precision"] = precision
    if text == "TIMESTAMP":
        found["timezone"] = False
    return found


# -- shapes of a SELECT ---------------------------------------------------------------------------
def from_source(query: Expr) -> Expr | None:
    """The table or derived table in the FROM clause of a SELECT (sqlglot names the key `from_` or `from`)."""
    found = query.args.get("from_") or query.args.get("from")
    return found.this if isinstance(found, exp.From) else None


def source_qualifier(source: Expr | None) -> str | None:
    """The name columns of a FROM/JOIN source are qualified with: its alias, else its table name."""
    if isinstance(source, (exp.Table, exp.Subquery)):
        return source.alias_or_name or None
    return None


def is_flat(select: exp.Select) -> bool:
    """No grouping, DISTINCT, LIMIT/OFFSET or aggregate: rows of the FROM map to rows of the result."""
    if any(select.args.get(key) for key in ("group", "having", "qualify", "distinct", "limit", "offset")):
        return False
    return not any(s.find(exp.AggFunc, exp.Window) for s in select.selects)


def is_plain_projection(query: Expr) -> bool:
    """A SELECT of one source whose projection is plain columns or `*` (so it may be replaced)."""
    if not isinstance(query, exp.Select) or query.args.get("joins"):
        return False
    if any(query.args.get(key) for key in ("group", "having", "qualify", "distinct")):
        return False
    return all(isinstance(s, exp.Star) or (isinstance(s, exp.Column) and isinstance(s.this, (exp.Identifier, exp.Star)))
               for s in query.selects)


def derived(query: exp.Query, qualifier: str | None = None) -> exp.Subquery:
    """`(query) AS qualifier` (the FROM source's qualifier, else `_lakeload_query`)."""
    name = qualifier or (source_qualifier(from_source(query)) if isinstance(query, exp.Select) else None) or SUBQUERY
    return exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier(name, quoted=True)))


def wrap(query: exp.Query, projection: Sequence[Expr] | None = None) -> exp.Select:
    """`SELECT <projection or *> FROM (query) AS <qualifier>`, with ORDER BY and LIMIT/OFFSET moved out when
    the ordering keys are visible outside (so the order and the row cut stay as they were)."""
    inner = query.copy()
    outer = exp.select(*(projection or [exp.Star()])).from_(derived(inner))
    if isinstance(inner, exp.Select):
        _move_order_and_limit(inner, outer)
    return outer


def _move_order_and_limit(inner: exp.Select, outer: exp.Select) -> None:
    order = inner.args.get("order")
    if order is not None:
        names = {s.alias_or_name for s in inner.selects}
        star = any(isinstance(s, exp.Star) or (isinstance(s, exp.Column) and isinstance(s.this, exp.Star))
                   for s in inner.selects)
        moved: list[Expr] = []
        for ordered in order.expressions:
            key = ordered.this
            if isinstance(key, exp.Column) and not key.table and (star or key.name in names):
                name: str | None = key.name
            else:  # a qualified or computed key is visible outside by its output name only
                name = next((s.alias_or_name for s in inner.selects if (s.this if isinstance(s, exp.Alias) else s) == key), None)
            if name is None:
                return  # the key is not visible outside: ORDER BY and LIMIT stay together inside
            moved.append(exp.Ordered(this=column(name), desc=ordered.args.get("desc"),
                                     nulls_first=ordered.args.get("nulls_first")))
        outer.set("order", exp.Order(expressions=moved))
        inner.set("order", None)
    for clause in ("limit", "offset"):
        if inner.args.get(clause) is not None:
            outer.set(clause, inner.args[clause])
            inner.set(clause, None)

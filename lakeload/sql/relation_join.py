"""`Relation.join()` as dlt 1.31 builds it: the join path between two tables from the schema's references (a
nested table's `_dlt_parent_id` -> its parent's `_dlt_id`, `_dlt_root_id` -> the root's `_dlt_id`, `_dlt_load_id`
-> `_dlt_loads.load_id`, the tables' own `references` hints) or from an explicit `on` condition; the left
projection is kept and every column of the joined table is appended as `<alias>__<column>`.

>>> from lakeload.schema.schema import Schema
>>> schema = Schema("crm")
>>> schema.update_table({"name": "users", "columns": {"_dlt_id": {"name": "_dlt_id", "data_type": "text", "row_key": True}}})
>>> schema.update_table({"name": "users__pets", "parent": "users", "columns": {
...     "_dlt_parent_id": {"name": "_dlt_parent_id", "data_type": "text", "parent_key": True}}})
>>> join_path(schema, "users__pets", "users")
[('users', (('_dlt_parent_id', '_dlt_id'),))]
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import reduce
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlglot import exp

from lakeload.schema.schema import Schema
from lakeload.schema.typing import TColumn
from lakeload.sql.errors import InvalidArgumentError
from lakeload.sql.relation_sql import column, derived, from_source, is_flat, source_qualifier

if TYPE_CHECKING:
    from sqlglot.expressions import Expr

JOIN_KINDS = ("inner", "left", "right", "full")
_STEP_ALIAS = "_lakeload_j"

Step = tuple[str, tuple[tuple[str, str], ...]]  # (table to join, ((column on the joined side so far, its column), ...))


class JoinTarget(NamedTuple):
    """The right side of a join: a table (or a relation's query as a derived table) and its columns."""

    table: str
    columns: dict[str, TColumn]
    query: exp.Query | None = None


def _key(table: Mapping[str, Any], hint: str) -> str | None:
    return next((name for name, c in table.get("columns", {}).items() if c.get(hint)), None)


def references(schema: Schema) -> list[tuple[str, list[str], str, list[str]]]:
    """Every reference of the schema as `(table, columns, referenced table, referenced columns)`."""
    found = []
    for name, table in schema.tables.items():
        parent = table.get("parent")
        if parent and parent in schema.tables:
            parent_key, row_key = _key(table, "parent_key"), _key(schema.tables[parent], "row_key")
            if parent_key and row_key:
                found.append((name, [parent_key], parent, [row_key]))
        if parent:
            root = schema.root_table_of(name)
            root_key, row_key = _key(table, "root_key"), _key(root, "row_key")
            if root_key and row_key:
                found.append((name, [root_key], root["name"], [row_key]))
        if "_dlt_load_id" in table.get("columns", {}) and "_dlt_loads" in schema.tables:
            found.append((name, ["_dlt_load_id"], "_dlt_loads", ["load_id"]))
        for ref in table.get("references") or []:
            found.append((ref.get("table") or name, list(ref["columns"]), ref["referenced_table"], list(ref["referenced_columns"])))
    return found


def join_path(schema: Schema, left: str, right: str) -> list[Step]:
    """The steps from table `left` to table `right`: a direct reference, else up or down the nesting chain."""
    if left == right:
        raise InvalidArgumentError(f"Cannot join table '{left}' to itself by the schema's references; pass `on=` "
                                   "and alias one side in SQL (dataset.query('SELECT ... FROM t AS other')).")
    for table, cols, referenced, referenced_cols in references(schema):
        if (table, referenced) == (left, right):
            return [(right, tuple(zip(cols, referenced_cols, strict=True)))]
        if (table, referenced) == (right, left):
            return [(right, tuple(zip(referenced_cols, cols, strict=True)))]

    def ancestors(name: str) -> list[str]:
        chain = [name]
        while schema.tables[chain[-1]].get("parent"):
            chain.append(str(schema.tables[chain[-1]]["parent"]))
        return chain

    def link(child: str) -> tuple[str, str]:
        parent = str(schema.tables[child]["parent"])
        parent_key, row_key = _key(schema.tables[child], "parent_key"), _key(schema.tables[parent], "row_key")
        if not (parent_key and row_key):
            raise InvalidArgumentError(f"Table '{child}' has no parent key to join '{parent}' by")
        return parent_key, row_key

    up, down = ancestors(left), ancestors(right)
    if right in up:  # walk up from left
        return [(up[i + 1], ((link(up[i])),)) for i in range(up.index(right))]
    if left in down:  # walk down to right
        path = down[:down.index(left) + 1][::-1]
        return [(path[i + 1], ((link(path[i + 1])[1], link(path[i + 1])[0]),)) for i in range(len(path) - 1)]
    raise InvalidArgumentError(
        f"Tables '{left}' and '{right}' have no reference in the schema and neither nests the other; join them "
        "with an explicit condition: .join(other, on=\"<left>.<column> = <right>.<column>\")")


def _qualify(expression: Expr, qualifier: str) -> Expr:
    """Qualify the unqualified columns of `expression` (outside subqueries) with `qualifier`."""
    copy = expression.copy()
    for col in list(copy.find_all(exp.Column)):
        if not col.table and not isinstance(col.this, exp.Star) and col.find_ancestor(exp.Subquery) is None:
            col.set("table", exp.to_identifier(qualifier, quoted=True))
    return copy


def _left_side(query: exp.Query, kind: str) -> tuple[exp.Select, str]:
    """The left query ready for a JOIN, and the qualifier of its source: a left side whose rows a join would
    change (LIMIT, DISTINCT, aggregates; a WHERE before a RIGHT/FULL join) becomes a derived table first."""
    if not isinstance(query, exp.Select) or source_qualifier(from_source(query)) is None:
        query = exp.select(exp.Star()).from_(derived(query.copy()))
    select = query.copy()
    qualifier = source_qualifier(from_source(select))
    assert qualifier is not None
    if not is_flat(select) or (kind in ("right", "full") and select.args.get("where") is not None):
        select = exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier(qualifier, quoted=True))).from_(
            derived(select, qualifier))
    if not select.args.get("joins"):
        aliases = {s.alias_or_name for s in select.selects if isinstance(s, exp.Alias)}
        for clause in ("where", "order"):
            node = select.args.get(clause)
            if node is not None:
                for col in list(node.find_all(exp.Column)):
                    if not col.table and col.find_ancestor(exp.Subquery) is None and not (
                            clause == "order" and col.name in aliases):
                        col.set("table", exp.to_identifier(qualifier, quoted=True))
    select.set("expressions", [
        exp.Column(this=exp.Star(), table=exp.to_identifier(qualifier, quoted=True)) if isinstance(s, exp.Star)
        else _qualify(s, qualifier) for s in select.selects])
    return select, qualifier


def _sources(select: exp.Select) -> dict[str, str]:
    """Tables of the FROM and JOINs, by table name -> qualifier."""
    nodes = [from_source(select), *(j.this for j in select.args.get("joins") or [])]
    return {n.name: n.alias_or_name for n in nodes if isinstance(n, exp.Table)}


def _qualifiers(select: exp.Select) -> set[str]:
    nodes = [from_source(select), *(j.this for j in select.args.get("joins") or [])]
    return {q for n in nodes if (q := source_qualifier(n))}


def _on(pairs: tuple[tuple[str, str], ...], left: str, right: str) -> Expr:
    conditions: list[Expr] = [exp.EQ(this=column(lc, left), expression=column(rc, right)) for lc, rc in pairs]
    return reduce(lambda a, b: exp.And(this=a, expression=b), conditions)


def _project(select: exp.Select, target: JoinTarget, qualifier: str, prefix: str, *, rejoin: bool) -> dict[str, TColumn]:
    """Append the target's columns as `<prefix>__<column>`; the appended columns by output name."""
    appended = {f"{prefix}__{name}": name for name in target.columns}
    existing = {s.alias_or_name for s in select.selects}
    clash = set(appended) & existing
    if clash:
        if rejoin and clash == set(appended):
            return {}
        raise InvalidArgumentError(f"The joined columns {sorted(clash)} are already in the relation; pass another "
                                   "alias: .join(..., alias=\"<name>\")")
    select.set("expressions", [*select.selects, *(
        exp.alias_(column(name, qualifier), output, quoted=True) for output, name in appended.items())])
    return {output: {**target.columns[name], "name": output} for output, name in appended.items()}


def auto_join(query: exp.Query, schema: Schema, dataset_name: str, left_table: str, target: JoinTarget, prefix: str,
              kind: str, project: bool = True) -> tuple[exp.Select, dict[str, TColumn]]:
    """Join `target` to `query` (whose base table is `left_table`) along the schema's references."""
    steps = join_path(schema, left_table, target.table)
    select, left_qualifier = _left_side(query, kind)
    present = _sources(select)
    present.setdefault(left_table, left_qualifier)
    attach = present[left_table]
    for table, _ in steps:
        if table in present:
            attach = present[table]
    pending = [step for step in steps if step[0] not in present]
    used = _qualifiers(select)
    for n, (table, pairs) in enumerate(pending):
        right = table
        if n < len(pending) - 1 or table in used:
            right = next(f"{_STEP_ALIAS}{i}" for i in range(1, len(used) + len(pending) + 2) if f"{_STEP_ALIAS}{i}" not in used)
        source = exp.table_(table, db=dataset_name, quoted=True, alias=exp.to_identifier(right, quoted=True) if right != table else None)
        select = select.join(source, on=_on(pairs, attach, right), join_type=kind.upper())
        present[table] = attach = right
        used.add(right)
    if not project:
        return select, {}
    return select, _project(select, target, present[target.table], prefix, rejoin=not pending)


def explicit_join(query: exp.Query, dataset_name: str, target: JoinTarget, on: Expr, prefix: str,
                  kind: str) -> tuple[exp.Select, dict[str, TColumn]]:
    """Join `target` to `query` on the condition `on` (columns qualified by table names)."""
    select, _ = _left_side(query, kind)
    if target.table in _qualifiers(select):
        raise InvalidArgumentError(f"'{target.table}' already names a source of the relation, so `on` could not tell "
                                   "the two apart; alias one side in SQL (dataset.query('SELECT ... FROM t AS other')).")
    if target.query is not None:
        source: Expr = derived(target.query.copy(), target.table)
    else:
        source = exp.table_(target.table, db=dataset_name, quoted=True)
    select = select.join(source, on=on, join_type=kind.upper())
    return select, _project(select, target, target.table, prefix, rejoin=False)

"""Executor-safe: the Python path replayed over a few records of a split, for the Arrow fast path.

dlt's schema inference is sequential: a column's type is fixed by its first non-null value, column
and table order is the order of first appearance, nulls before that make a column "null only". Only
the records where something appears for the first time change the schema, so `replay` runs the exact
Python path (`RelationalNormalizer` + `RowCoercer`) over those records, in order, and gets the very
schema a run over all records makes. It also returns the rows of the records that stay in Python.

`resolve_nulls` finds the null-only columns of records that were not replayed, from the null tokens
of the split's bytes: a `"key": null` only matters while its column has no type yet.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from lakeload.errors import SchemaError
from lakeload.kernel.contracts import TRow
from lakeload.kernel.normalize.arrow_flatten import LIST_ITEM, RawPath, Tree, Unsupported
from lakeload.kernel.normalize.arrow_lines import LineIndex
from lakeload.kernel.normalize.arrow_read import NullScan
from lakeload.kernel.normalize.coerce import RowCoercer
from lakeload.kernel.normalize.relational import RelationalNormalizer, RootTableSettings
from lakeload.schema.typing import TTable

if TYPE_CHECKING:
    from lakeload.kernel.normalize.plan import NormalizePlan, Split


NEVER = 1 << 62  # a record number after every record


@dataclass
class Replay:
    """The schema after the replayed records, when each column was added, and the Python records' rows."""

    tables: dict[str, TTable]
    coercer: RowCoercer
    collisions: dict[str, dict[str, list[str]]]
    created: dict[tuple[str, str], int] = field(default_factory=dict)  # (table, column) -> record that added it
    rows: dict[str, list[tuple[int, TRow]]] = field(default_factory=dict)  # table -> (record, row)


def load_record(lines: LineIndex, rec: int, file_name: str | None) -> Any:
    """Record `rec` as `read_records` yields it (plain JSON, `_file_name` added for source files)."""
    try:
        item = orjson.loads(lines.line(rec))
    except orjson.JSONDecodeError as exc:
        raise Unsupported("malformed record") from exc
    if file_name is not None and type(item) is dict:
        item["_file_name"] = file_name
    return item


def replay(
    plan: NormalizePlan, split: Split, lines: LineIndex, records: Iterable[int], python: set[int],
    occurrence_base: int, file_name: str | None,
) -> Replay:
    """Run the Python path over `records` (sorted); keep the rows of those in `python`."""
    tables = copy.deepcopy(plan.tables)
    coercer = RowCoercer(tables, plan.naming, plan.detections, plan.default_hints)
    normalizer = RelationalNormalizer(plan.normalizer)
    counts_occurrence = plan.normalizer.roots.get(split.root_table, RootTableSettings()).occurrence
    result = Replay(tables, coercer, normalizer.collisions)
    seen: dict[str, int] = {}
    done = 0
    try:
        for rec in records:
            item = load_record(lines, rec, file_name)
            normalizer.occurrence_base = occurrence_base + rec - done  # the record's number in the split
            keep = rec in python
            for table_name, parent, row in normalizer.normalize(item, split.root_table):
                out = coercer.coerce_row(table_name, parent, row)
                if keep and out:
                    result.rows.setdefault(table_name, []).append((rec, out))
            done += counts_occurrence
            for table_name, added in coercer.added.items():
                for name in added[seen.get(table_name, 0) :]:
                    result.created[(table_name, name)] = rec
                seen[table_name] = len(added)
    except (SchemaError, KeyError, TypeError, ValueError) as exc:  # the Python path raises it again
        raise Unsupported(f"replay failed: {exc}") from exc
    return result


def null_paths(value: Any, path: RawPath, out: list[RawPath]) -> None:
    """Raw paths of the null values in a record, as the Python normalizer walks it."""
    if type(value) is dict:
        for key, item in value.items():
            if item is None:
                out.append((*path, key))
            elif type(item) in (dict, list):
                null_paths(item, (*path, key), out)
        return
    for item in value:
        if item is None:
            out.append((*path, LIST_ITEM))
        elif type(item) is dict:
            null_paths(item, (*path, LIST_ITEM), out)
        elif type(item) is list:
            null_paths(item, (*path, LIST_ITEM, "list"), out)


class _Nulls:
    """The null-only columns of explicit nulls outside the replayed records."""

    def __init__(self, plan_tables: dict[str, TTable], tree: Tree, done: Replay) -> None:
        self.stored = plan_tables
        self.tree = tree
        self.done = done
        self.found: dict[str, set[str]] = {}
        self._bounds: dict[RawPath, tuple[int, bool]] = {}

    def bound(self, path: RawPath) -> tuple[int, bool]:
        """Last record where a null at `path` matters, and whether any null there is an error."""
        known = self._bounds.get(path)
        if known is not None:
            return known
        table, column = self.tree.paths[path]
        stored = self.stored.get(table, {}).get("columns", {}).get(column)
        created = self.done.created.get((table, column))
        if stored is not None and stored.get("data_type"):
            strict = stored.get("nullable") is False
            known = (NEVER if strict else -1, strict)
        elif created is None:
            known = (NEVER, False)
        else:
            strict = self.done.tables[table]["columns"][column].get("nullable") is False
            known = (NEVER if strict else created, strict)
        self._bounds[path] = known
        return known

    def open(self, path: RawPath, rec: int) -> bool:
        """Whether a null at `path` in record `rec` may still change the result."""
        last, strict = self.bound(path)
        if rec > last:
            return False
        table, column = self.tree.paths[path]
        return strict or column not in self.found.get(table, ())

    def handle(self, path: RawPath, rec: int) -> None:
        if not self.open(path, rec):
            return
        table, column = self.tree.paths[path]
        stored = self.stored.get(table, {}).get("columns", {}).get(column)
        created = self.done.created.get((table, column))
        if (stored is not None and stored.get("data_type")) or (created is not None and rec > created):
            raise Unsupported(f"null in the non-nullable column '{column}'")
        if stored is None and self.done.coercer._hint("not_null", column):
            raise Unsupported(f"null in the not-null column '{column}'")
        self.found.setdefault(table, set()).add(column)


def resolve_nulls(
    plan_tables: dict[str, TTable], tree: Tree, done: Replay, scan: NullScan, lines: LineIndex, replayed: set[int]
) -> dict[str, set[str]]:
    """Null-only columns (table -> columns) of the explicit nulls of records that were not replayed."""
    nulls = _Nulls(plan_tables, tree, done)
    by_key: dict[bytes, list[RawPath]] = {}
    for path in tree.paths:
        if path[-1] is not LIST_ITEM:
            by_key.setdefault(str(path[-1]).encode("utf-8"), []).append(path)
    walk = {rec for rec in scan.unclear if rec not in replayed}
    for rec, key in scan.key_nulls:
        if rec in replayed:
            continue
        paths = by_key.get(key)
        if paths is None:
            raise Unsupported("a null under a key that is not in the parsed schema")
        if len(paths) == 1:
            nulls.handle(paths[0], rec)
        elif any(nulls.open(p, rec) for p in paths):
            walk.add(rec)
    for rec in sorted(walk):
        found: list[RawPath] = []
        item = load_record(lines, rec, None)
        if type(item) in (dict, list):
            null_paths(item, (), found)
        for path in found:
            if path not in tree.paths:
                raise Unsupported("a null at a path that is not in the parsed schema")
            nulls.handle(path, rec)
    return nulls.found

"""Executor-safe: turns nested records into relational rows, the way dlt's relational normalizer does.

Runs inside Spark executor Python workers. Imports only the standard library and executor-safe
lakeload modules (`lakeload.schema.naming`, `kernel.normalize.row_ids`).

Rules reproduced (dlt 1.31):
- nested dicts are flattened into `parent__child` columns; the flattening walks a stack, so the plain
  fields of a dict come first and nested dicts follow, the last nested dict first;
- lists become child tables `<parent>__<field>`; lists of scalars get a `value` column and lists of
  lists a `<field>__list` table; every child row has `_dlt_parent_id`, `_dlt_list_idx` and `_dlt_id`;
- root rows get `_dlt_load_id` and a random `_dlt_id` (or dlt's hash of the primary key for upsert tables, of
  the whole record, nested lists included, for scd2 tables);
- child `_dlt_id`s are dlt's hash of (parent id, table, list index) (`kernel.normalize.row_ids`);
- `_dlt_root_id` is propagated to every child row when the root table asks for a root key;
- a dict or list in a column typed `json`, or deeper than the nesting limit, stays a JSON value;
- two keys of one record that normalize to the same column (`"a b"` and `"a_b"`): the later value is
  kept, as dlt does, and the collision is recorded so the driver can warn (dlt says nothing).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypedDict

from lakeload.kernel.contracts import TDataRecord, TRow
from lakeload.kernel.normalize.row_ids import key_row_id, nested_row_id, random_row_id, row_hash_id
from lakeload.schema.naming import NamingConvention

EMPTY_KEY = "_empty"
C_DLT_ID = "_dlt_id"
C_DLT_LOAD_ID = "_dlt_load_id"
C_DLT_PARENT_ID = "_dlt_parent_id"
C_DLT_LIST_IDX = "_dlt_list_idx"
C_DLT_ROOT_ID = "_dlt_root_id"
# package-only column of Delta merge tables: which record of the package a row came from (split index
# shifted by OCCURRENCE_SHIFT bits, plus the record's number in the split), so the loader can keep the winning duplicate's
# nested rows. Never stored in the schema nor in the destination.
C_OCCURRENCE = "_lakeload_seq"
C_VALUE = "value"
OCCURRENCE_SHIFT = 40

# (table name, parent table name, row) in the order dlt emits them: a row, then its child rows depth first
NormalizedRow = tuple[str, "str | None", TRow]
# what every child row of a record gets from its root row ("_dlt_root_id", "_lakeload_seq": C_DLT_ROOT_ID, C_OCCURRENCE)
class RootColumns(TypedDict, total=False):
    _dlt_root_id: str
    _lakeload_seq: int


class _Names:
    """The cached names of one record key under one path: its column, its path for nested dicts (with the cache
    node below it) and, once it held a list, its child table's path."""

    __slots__ = ("column", "path", "node", "list_path")

    def __init__(self, column: str, path: tuple[str, ...]) -> None:
        self.column = column
        self.path = path
        self.node: dict[str, _Names] = {}
        self.list_path: tuple[str, ...] | None = None


@dataclass(frozen=True)
class RootTableSettings:
    """What the normalizer needs to know about one root table (shipped to executors)."""

    row_id: str = "random"  # "random", "key_hash" (upsert) or "row_hash" (scd2: the record's data)
    primary_key: tuple[str, ...] = ()
    propagate_root_key: bool = False
    max_nesting: int = 1000
    occurrence: bool = False  # add C_OCCURRENCE to the record's rows (Delta merge tables)


@dataclass
class NormalizerSettings:
    """Everything the relational normalizer needs, picklable."""

    load_id: str
    naming: NamingConvention
    roots: dict[str, RootTableSettings] = field(default_factory=dict)
    json_columns: dict[str, frozenset[str]] = field(default_factory=dict)


class RelationalNormalizer:
    """Yields `(table_name, row)` for each row a record produces.

    >>> from lakeload.schema.naming import SnakeCaseNaming
    >>> n = RelationalNormalizer(NormalizerSettings(load_id="1.2", naming=SnakeCaseNaming()))
    >>> [t for t, _, _ in n.normalize({"id": 1, "pets": [{"n": "a"}]}, "users")]
    ['users', 'users__pets']
    """

    def __init__(self, settings: NormalizerSettings) -> None:
        self.settings = settings
        naming = settings.naming
        self._norm = naming.normalize_path
        self._norm_table = naming.normalize_tables_path
        self._shorten = naming.shorten_fragments
        self._load_id = settings.load_id
        self._default_root = RootTableSettings()
        self._name_cache: dict[str, dict[str, _Names]] = {}  # table -> record key -> its names
        self.collisions: dict[str, dict[str, list[str]]] = {}  # table -> column -> original keys
        self._table_names: dict[tuple[str, tuple[str, ...]], str] = {}
        self.occurrence_base = 0  # split index << OCCURRENCE_SHIFT, set by the task that owns this normalizer
        self._records = 0

    def normalize(self, item: Any, root_table: str) -> Iterator[NormalizedRow]:
        """All rows of one extracted item for the (already normalized) root table name."""
        if type(item) is not dict:
            item = {C_VALUE: item}
        root = self.settings.roots.get(root_table, self._default_root)
        yield from self._row(item, root_table, None, root, None, None, None, root.max_nesting, is_root=True)

    def _names(self, node: dict[str, _Names], path: tuple[str, ...], key: str) -> _Names:
        """The cache entry of `key` under `path` (made and stored in `node`)."""
        norm_key = self._norm(key) if key and not key.isspace() else EMPTY_KEY
        name = self._shorten(*path, norm_key) if path else norm_key
        entry = node[key] = _Names(name, (*path, norm_key))
        return entry

    def _flatten(
        self, table: str, record: TDataRecord, level: int
    ) -> tuple[TRow, list[tuple[tuple[str, ...], list[Any]]]]:
        row: TRow = {}
        lists: dict[tuple[str, ...], list[Any]] = {}
        root_node = self._name_cache.get(table)
        if root_node is None:
            root_node = self._name_cache[table] = {}
        json_columns = self.settings.json_columns.get(table, ())
        stack: list[tuple[TDataRecord, int, tuple[str, ...], dict[str, _Names]]] = [(record, level, (), root_node)]
        while stack:
            current, lvl, path, node = stack.pop()
            for key, value in current.items():
                entry = node.get(key)
                if entry is None:
                    entry = self._names(node, path, key)
                value_type = type(value)
                column = entry.column
                if value_type is dict:
                    if lvl > 0 and column not in json_columns:  # else: kept whole, as a json value
                        stack.append((value, lvl - 1, entry.path, entry.node))
                        continue
                elif value_type is list and lvl > 0 and column not in json_columns:
                    list_path = entry.list_path
                    if list_path is None:
                        list_path = entry.list_path = (*path, self._norm_table(key))
                    lists[list_path] = value
                    continue
                if column in row:
                    self._collision(table, column, [k for k in current if k in node and node[k].column == column])
                row[column] = value
        return row, list(lists.items())

    def _collision(self, table: str, column: str, keys: list[str]) -> None:
        """Keys of one record normalize to one column: dlt keeps the last value; we record the keys."""
        known = self.collisions.setdefault(table, {}).setdefault(column, [])
        known.extend(k for k in keys if k not in known and len(known) < 10)

    def _row(
        self,
        record: TDataRecord,
        table: str,
        parent_table: str | None,
        root: RootTableSettings,
        extend: RootColumns | None,
        parent_id: str | None,
        pos: int | None,
        level: int,
        is_root: bool = False,
    ) -> Iterator[NormalizedRow]:
        row, lists = self._flatten(table, record, level)
        if extend:
            row.update(extend)
        if is_root:
            row[C_DLT_LOAD_ID] = self._load_id
        row_id = row.get(C_DLT_ID)
        if not row_id:
            row_id = self._add_row_id(table, row, record, root, parent_id, pos, is_root)
        if is_root and root.propagate_root_key:
            extend = {"_dlt_root_id": row_id}
        if is_root and root.occurrence:
            occurrence = row[C_OCCURRENCE] = self.occurrence_base + self._records
            self._records += 1
            extend = {**(extend or {}), "_lakeload_seq": occurrence}
        yield table, parent_table, row
        for path, items in lists:
            child = self._table_names.get((table, path))
            if child is None:
                child = self._table_names[(table, path)] = self._shorten(table, *path)
            yield from self._list(items, child, table, root, extend, row_id, level - 1)

    def _add_row_id(
        self,
        table: str,
        row: TRow,
        record: TDataRecord,
        root: RootTableSettings,
        parent_id: str | None,
        pos: int | None,
        is_root: bool,
    ) -> str:
        if not is_root:
            assert parent_id is not None and pos is not None
            row_id = nested_row_id(parent_id, table, pos)
            row[C_DLT_PARENT_ID] = parent_id
            row[C_DLT_LIST_IDX] = pos
        elif root.row_id == "key_hash" and root.primary_key:
            row_id = key_row_id(row, root.primary_key)
        elif root.row_id == "row_hash":
            row_id = row_hash_id(record)
        else:
            row_id = random_row_id()
        row[C_DLT_ID] = row_id
        return row_id

    def _list(
        self,
        items: list[Any],
        table: str,
        parent_table: str,
        root: RootTableSettings,
        extend: RootColumns | None,
        parent_id: str,
        level: int,
    ) -> Iterator[NormalizedRow]:
        for idx, value in enumerate(items):
            value_type = type(value)
            if value_type is dict:
                yield from self._row(value, table, parent_table, root, extend, parent_id, idx, level)
            elif value_type is list:
                yield from self._row({"list": value}, table, parent_table, root, extend, parent_id, idx, level - 1)
            else:
                row: TRow = {C_VALUE: value}
                if extend:
                    row.update(extend)
                self._add_row_id(table, row, row, root, parent_id, idx, False)
                yield table, parent_table, row

"""Executor-safe: dlt's relational flattening of an Arrow table of records, column by column.

Mirrors `kernel.normalize.relational.RelationalNormalizer` without touching rows: struct fields become
`parent__child` columns (names from the same naming-convention calls, cached per field path), list
columns become child tables (`pc.list_flatten`-like explosion from the list offsets, with each row's
parent row and list position), lists of scalars get a `value` column and lists of lists a `list`
child. Every row keeps the number of the record it came from, so rows can be put in dlt's order.

Whatever the Python normalizer would do differently raises `Unsupported`: two fields of one table
that normalize to one column (a collision), two paths that make one table, dlt's own column names in
the data, null list elements (never here: such records are left to Python), json-typed columns.
Imports only the standard library, numpy, pyarrow and executor-safe lakeload modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakeload.kernel.normalize.relational import (
    C_DLT_ID,
    C_DLT_LIST_IDX,
    C_DLT_LOAD_ID,
    C_DLT_PARENT_ID,
    C_DLT_ROOT_ID,
    C_OCCURRENCE,
    C_VALUE,
    EMPTY_KEY,
)
from lakeload.schema.naming import NamingConvention

RESERVED = frozenset((C_DLT_ID, C_DLT_LIST_IDX, C_DLT_LOAD_ID, C_DLT_PARENT_ID, C_DLT_ROOT_ID, C_OCCURRENCE))
LIST_ITEM = None  # component of a raw path for a list's items, as the Python normalizer walks them
RawPath = tuple[str | None, ...]


class Unsupported(Exception):
    """The Arrow fast path cannot reproduce the Python normalizer here: the split takes the Python path."""


@dataclass
class Part:
    """The rows one table gets from the Arrow-parsed records, in dlt's order."""

    name: str
    parent: Part | None
    rec: np.ndarray  # the record (line number among records) of each row
    parent_row: np.ndarray | None = None  # row of the parent part
    list_idx: np.ndarray | None = None
    columns: dict[str, pa.Array] = field(default_factory=dict)  # dlt column name -> values
    alternates: dict[str, pa.Array] = field(default_factory=dict)  # a renamed key's values of a column (another type)
    names: set[str] = field(default_factory=set)  # every column name a key makes here (nulls included)

    @property
    def rows(self) -> int:
        return len(self.rec)


@dataclass
class Tree:
    """All parts of a split's records, and what each raw path (key path) is called in dlt terms."""

    parts: dict[str, Part] = field(default_factory=dict)
    paths: dict[RawPath, tuple[str, str]] = field(default_factory=dict)  # raw path -> (table, column)
    depth: int = 0


def explode(values: pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """The items of a list array, each item's list (row) and its position in that list."""
    offsets = values.offsets.to_numpy()
    lengths = np.diff(offsets)
    rows = len(values)
    contiguous = True
    if values.null_count:
        valid = values.is_valid().to_numpy(zero_copy_only=False)
        if lengths[~valid].any():
            lengths = np.where(valid, lengths, 0)
            contiguous = False
    total = int(lengths.sum())
    parent_row = np.repeat(np.arange(rows, dtype=np.int64), lengths)
    firsts = np.cumsum(lengths) - lengths
    list_idx = np.arange(total, dtype=np.int64) - np.repeat(firsts, lengths)
    if contiguous:
        items = values.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
    else:
        items = values.values.take(pa.array(np.repeat(offsets[:-1], lengths) + list_idx))
    return items, parent_row, list_idx


def first_valid(values: pa.Array) -> int | None:
    """Position of the first non-null value, None when all are null."""
    nulls, rows = values.null_count, len(values)
    if nulls == rows:
        return None
    if nulls == 0:
        return 0
    return int(pc.index(values.is_valid(), True).as_py())


class Flattener:
    """Builds the `Tree` of one Arrow table of records for the root table `root`."""

    def __init__(
        self, naming: NamingConvention, json_columns: dict[str, frozenset[str]], aliases: dict[str, str] | None = None
    ) -> None:
        self.naming = naming
        self.json_columns = json_columns
        self.aliases = aliases or {}  # renamed key -> the records' key (`kernel.normalize.arrow_alias`)
        self.tree = Tree()

    def flatten(self, root: str, table: pa.Table, recs: np.ndarray, extra: dict[str, pa.Array]) -> Tree:
        """`extra`: columns added to every root row after the record's own fields (e.g. `_file_name`)."""
        part = self._part(root, None, recs)
        fields: list[tuple[str, pa.Array]] = []
        for name, column in zip(table.column_names, table.columns, strict=True):
            fields.append((name, column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)))
        for name in extra:
            if name in table.column_names:
                raise Unsupported(f"records have their own '{name}'")
        self._struct(part, fields, (), (), 1)
        for name, values in extra.items():
            self._name(part, name)
            part.columns[name] = values
            self.tree.paths[(name,)] = (root, name)
        return self.tree

    def _part(self, name: str, parent: Part | None, rec: np.ndarray) -> Part:
        if name in self.tree.parts:
            raise Unsupported(f"two paths make table '{name}'")
        if name in self.json_columns:
            raise Unsupported(f"table '{name}' has json columns")
        part = self.tree.parts[name] = Part(name, parent, rec)
        return part

    @staticmethod
    def _name(part: Part, name: str) -> None:
        """Two keys of one table that normalize to one name collide when a record has both (dlt keeps one)."""
        if name in part.names or name in RESERVED:
            raise Unsupported(f"column '{name}' of '{part.name}' is reserved or made by two keys")
        part.names.add(name)

    def _struct(
        self, part: Part, fields: list[tuple[str, pa.Array]], path: tuple[str, ...], raw: RawPath, depth: int
    ) -> None:
        self.tree.depth = max(self.tree.depth, depth)
        naming = self.naming
        keys = {key for key, _ in fields}
        later: list[tuple[str, pa.Array]] = []
        for key, values in fields:
            original = self.aliases.get(key)
            if original is not None:
                if original in keys:  # beside the key's usual values: an alternate of its column
                    later.append((original, values))
                    continue
                key = original  # only the renamed values here: the key's column
            norm_key, name = self._column_name(path, key)
            key_raw = (*raw, key)
            self.tree.paths[key_raw] = (part.name, name)
            self._name(part, name)
            dtype = values.type
            if pa.types.is_struct(dtype):
                children = values.flatten()
                self._struct(part, [(f.name, c) for f, c in zip(dtype, children, strict=True)], (*path, norm_key), key_raw, depth + 1)
            elif pa.types.is_list(dtype):
                child = naming.shorten_fragments(part.name, *path, naming.normalize_tables_path(key))
                self._list(part, child, values, key_raw, depth + 1)
            else:
                part.columns[name] = values
        for key, values in later:
            name = self._column_name(path, key)[1]
            if name not in part.columns or name in part.alternates or pa.types.is_nested(values.type):
                raise Unsupported(f"the renamed values of '{key}' do not fit column '{name}' of '{part.name}'")
            part.alternates[name] = values

    def _column_name(self, path: tuple[str, ...], key: str) -> tuple[str, str]:
        """The normalized key and the column name of `key` in a struct at `path` of its table."""
        norm_key = self.naming.normalize_path(key) if key and not key.isspace() else EMPTY_KEY
        return norm_key, self.naming.shorten_fragments(*path, norm_key) if path else norm_key

    def _list(self, parent: Part, name: str, values: pa.Array, raw: RawPath, depth: int) -> None:
        items, parent_row, list_idx = explode(values)
        part = self._part(name, parent, parent.rec[parent_row])
        part.parent_row, part.list_idx = parent_row, list_idx
        item_raw = (*raw, LIST_ITEM)
        self.tree.paths[item_raw] = (name, C_VALUE)
        dtype = items.type
        if items.null_count and not pa.types.is_null(dtype):
            raise Unsupported("null list elements")
        if pa.types.is_struct(dtype):
            self._struct(part, [(f.name, c) for f, c in zip(dtype, items.flatten(), strict=True)], (), item_raw, depth + 1)
        elif pa.types.is_list(dtype):
            self._struct(part, [("list", items)], (), item_raw, depth + 1)
        elif pa.types.is_null(dtype):
            if len(items):
                raise Unsupported("null list elements")
        else:
            part.columns[C_VALUE] = items

"""Executor-safe: reading one plain JSONL split for the Arrow fast path of normalize.

- `LineIndex`: where each record (non-blank line) of the split's bytes starts and ends.
- `scan_nulls`: the `null` tokens of the split found in its bytes: `"key": null` pairs, and records that
  may hold a null list element (pyarrow's reader mangles lists that start with nulls, and dlt makes a
  `value` row of such an element: those records are left to the Python normalizer).
- `parse_records`: pyarrow's JSON reader over all records except a set `python` of records left to the
  Python normalizer. A type conflict between records (`external_ref` a number in most records and a
  string in a few) renames the key of the rarer type's values (`kernel.normalize.arrow_alias`), or moves those
  records to `python`, and parses again; strings pyarrow would turn into timestamps are read as strings
  (an explicit schema), as dlt sees the raw strings.

Imports only the standard library, numpy (a pyarrow companion), orjson, pyarrow and `kernel.normalize.arrow_alias`.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.json as pajson

from lakeload.kernel.normalize.arrow_alias import rename_rare
from lakeload.kernel.normalize.arrow_lines import LineIndex

MAX_BYTES = 1 << 30  # one pyarrow block holds the whole split: larger splits take the Python path
PROBE_BYTES = 1 << 20  # records read first to find the fields pyarrow would parse as timestamps
MAX_ATTEMPTS = 40
_WHITESPACE = frozenset(b" \t\r\n")
_AFTER_TOKEN = frozenset(b" \t\r\n,}]")
_WHITESPACE_BYTES = np.frombuffer(b" \t\r\n", np.uint8)
_AFTER_BYTES = np.frombuffer(b" \t\r\n,}]", np.uint8)
_BEFORE_BYTES = np.frombuffer(b":,[", np.uint8)
_CONFLICT = re.compile(r"Column\((.*)\) changed from (\w+) to (\w+) in row (\d+)")
_ROW = re.compile(r"in row (\d+)")
_KIND = {str: "string", bool: "boolean", dict: "object", list: "array", type(None): "null"}
_STARTS = {"string": rb'"', "number": rb"[-0-9]", "boolean": rb"[tf]", "object": rb"\{", "array": rb"\[", "null": rb"n"}
ITEM = "[]"  # path component of a list's items in Arrow type paths
# The fields to read as strings, as a trie of field names (ITEM for a list's items): an empty node is a leaf
StringTrie = dict[str, "StringTrie"]
# Known Arrow types of fields, as a trie: a leaf is an Arrow type, a node a struct's fields (or {ITEM: ...}, a list)
TypeTrie = dict[str, "TypeTrie | pa.DataType"]


@dataclass
class NullScan:
    """The null tokens of a split, from its bytes (a superset: nulls inside strings may be counted)."""

    key_nulls: list[tuple[int, bytes]] = field(default_factory=list)  # (record, raw key) of `"key": null`
    unclear: set[int] = field(default_factory=set)  # records with a `"...": null` whose key has escapes
    list_nulls: set[int] = field(default_factory=set)  # records that may hold a null list element


def scan_nulls(lines: LineIndex) -> NullScan:
    """Classify every `null` in the split's bytes by what precedes it."""
    data = lines.data
    scan = NullScan()
    found = np.fromiter((m.start() for m in re.finditer(b"null", data)), np.int64)
    if not len(found):
        return scan
    buf = np.frombuffer(data, np.uint8)
    after = buf[np.minimum(found + 4, len(data) - 1)]
    before = buf[found - 1]  # a record starts with `{`: never at position 0
    spaced = np.isin(before, _WHITESPACE_BYTES)
    before = np.where(spaced, buf[np.maximum(found - 2, 0)], before)  # one blank skipped, more in Python
    token = (found + 4 >= len(data)) | np.isin(after, _AFTER_BYTES)
    found = found[token & (np.isin(before, _BEFORE_BYTES) | (spaced & np.isin(before, _WHITESPACE_BYTES)))]
    positions = found.tolist()
    rfind = data.rfind
    for pos, rec in zip(positions, lines.records_at(positions), strict=True):
        after = pos + 4
        if after < len(data) and data[after] not in _AFTER_TOKEN:
            continue
        j = pos - 1
        while j >= 0 and data[j] in _WHITESPACE:
            j -= 1
        char = data[j] if j >= 0 else 0
        if char in (44, 91):  # `,` or `[`: a list element (or text inside a string)
            scan.list_nulls.add(rec)
        elif char == 58:  # `:`: the value of a key, when a quote closes the key
            j -= 1
            while j >= 0 and data[j] in _WHITESPACE:
                j -= 1
            if j < 1 or data[j] != 34:
                continue  # inside a string
            opening = rfind(b'"', int(lines.starts[rec]), j)
            if data[j - 1] == 92 or opening < 1 or data[opening - 1] == 92:
                scan.unclear.add(rec)
                continue
            key = bytes(data[opening + 1 : j])
            if 92 in key:
                scan.unclear.add(rec)
            else:
                scan.key_nulls.append((rec, key))
    return scan


@dataclass
class Parsed:
    """The Arrow table of the records `recs` (sorted); the other records are in `python`."""

    table: pa.Table
    recs: np.ndarray
    python: set[int]
    aliases: dict[str, str] = field(default_factory=dict)  # renamed key -> the record's key (`rename_rare`)


def _read(buf: pa.Buffer, strings: StringTrie, known: TypeTrie) -> pa.Table:
    options = pajson.ReadOptions(use_threads=False, block_size=max(buf.size + 1, 1 << 16))
    schema = _explicit(_merged(known, strings))
    parse = pajson.ParseOptions(explicit_schema=schema) if len(schema) else None
    return pajson.read_json(pa.BufferReader(buf), read_options=options, parse_options=parse)


def _merged(known: TypeTrie, strings: StringTrie) -> TypeTrie:
    """The type trie `known` with the paths of `strings` typed as strings (a string path wins)."""
    out = dict(known)
    for name, node in strings.items():
        if not node:  # a leaf: a string
            out[name] = pa.string()
        else:
            below = out.get(name)
            out[name] = _merged(below if isinstance(below, dict) else {}, node)
    return out


def _explicit(trie: TypeTrie) -> pa.Schema:
    """An Arrow schema from a type trie: leaves are Arrow types, nodes structs or lists (`ITEM`); other
    fields are still inferred."""

    def build(node: TypeTrie | pa.DataType) -> pa.DataType:
        if isinstance(node, pa.DataType):
            return node
        if not node:
            return pa.string()
        if ITEM in node:
            return pa.list_(build(node[ITEM]))
        return pa.struct([pa.field(k, build(v)) for k, v in node.items()])

    return pa.schema([pa.field(k, build(v)) for k, v in trie.items()])


def _known(dtype: pa.DataType) -> TypeTrie | pa.DataType | None:
    """The type trie of a probed type, or None: null types, empty structs and timestamps are left to inference
    (timestamps become strings through `strings`); a parse with known types is ~5% faster than inferring."""
    if pa.types.is_struct(dtype):
        fields = {f.name: _known(f.type) for f in dtype}
        return {k: v for k, v in fields.items() if v is not None} or None
    if pa.types.is_list(dtype):
        item = _known(dtype.value_type)
        return {ITEM: item} if item is not None else None
    if pa.types.is_null(dtype) or pa.types.is_timestamp(dtype):
        return None
    return dtype


def known_types(schema: pa.Schema) -> TypeTrie:
    """The type trie of the fields a probe read found typed (see `_known`)."""
    found = {f.name: _known(f.type) for f in schema}
    return {k: v for k, v in found.items() if v is not None}


def _timestamp_paths(dtype: pa.DataType, path: tuple[str, ...], out: list[tuple[str, ...]]) -> None:
    if pa.types.is_timestamp(dtype):
        out.append(path)
    elif pa.types.is_struct(dtype):
        for f in dtype:
            _timestamp_paths(f.type, (*path, f.name), out)
    elif pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        _timestamp_paths(dtype.value_type, (*path, ITEM), out)


def _add_strings(trie: StringTrie, schema: pa.Schema) -> bool:
    """Add the timestamp-typed paths of `schema` to `trie`; False when there were none."""
    paths: list[tuple[str, ...]] = []
    for f in schema:
        _timestamp_paths(f.type, (f.name,), paths)
    for path in paths:
        node = trie
        for part in path:
            node = node.setdefault(part, {})
    return bool(paths)


def _kinds(value: Any, path: list[str], out: set[str]) -> None:
    """pyarrow's JSON kinds of the values at `path` (pyarrow's `/a/[]/b` notation) in a parsed record."""
    if not path:
        out.add(_KIND.get(type(value), "number"))
    elif path[0] == ITEM:
        if type(value) is list:
            for item in value:
                _kinds(item, path[1:], out)
    elif type(value) is dict and path[0] in value:
        _kinds(value[path[0]], path[1:], out)


def key_positions(data: bytes | bytearray, key: bytes, tail: bytes) -> list[int]:
    """Where `"key"` followed by the regular expression `tail` starts in `data` (its opening quote).

    The search starts at the key's byte rarest in the first 64 KiB (Python's regular expressions scan for their
    first byte: a `"` is every ~8th byte of JSON, an `x` every ~500th, ~2x faster over a split); the key's
    bytes before it are compared at each match.

    >>> key_positions(b'{"a_x":1,"b_x": "s","_x":2}', b"_x", rb'\\s*:\\s*[-0-9]')
    [20]
    """
    if not key:
        return [m.start() for m in re.finditer(rb'""' + tail, data)]
    counts = np.bincount(np.frombuffer(memoryview(data)[: 1 << 16], np.uint8), minlength=256)
    cut = min(range(len(key)), key=lambda i: (counts[key[i]], i))
    head = b'"' + key[:cut]
    pattern = re.escape(key[cut:]) + b'"' + tail
    return [m.start() - len(head) for m in re.finditer(pattern, data) if data[m.start() - len(head) : m.start()] == head]


def _conflicting(
    lines: LineIndex, message: str, keep: np.ndarray, budget: list[int], aliases: dict[str, str]
) -> set[int] | None:
    """Records to leave to Python after pyarrow's error `message` for the records `keep` (empty: the rare
    values were renamed instead), or None.

    A type change of a field moves the records with the rarer of the two types: found by their bytes
    (`"key": <first character of the type>`) when few records match, else by parsing the records that
    have the key and looking at the field (at most `budget[0]` records parsed in all). The row pyarrow
    names is always moved, so each try progresses. When few records match and the rare values are strings
    or booleans among scalars, their key is renamed instead (`kernel.normalize.arrow_alias`): pyarrow reads them in
    the same parse.
    """
    row = _ROW.search(message)
    if row is None or int(row.group(1)) >= len(keep):
        return None
    named = int(keep[int(row.group(1))])
    moved = {named}
    conflict = _CONFLICT.search(message)
    if conflict is None or conflict.group(3) not in _STARTS or conflict.group(2) not in _STARTS:
        return moved
    path, before, after = conflict.group(1).split("/")[1:], conflict.group(2), conflict.group(3)
    keys = [p for p in path if p != ITEM]
    if not keys:
        return moved
    key = keys[-1].encode("utf-8")
    limit = max(64, len(lines) // 20)
    found = key_positions(lines.data, key, rb"\s*:\s*" + _STARTS[after])
    if len(found) <= limit:  # the new type is rare: renamed, or a Python record each
        if path[-1] != ITEM and rename_rare(lines, key, found, (before, after), named, aliases):
            return set()
        moved.update(lines.records_at(found))
        return moved
    candidates = sorted(set(lines.records_at(key_positions(lines.data, key, rb"\s*:"))))
    if len(candidates) > budget[0]:
        return moved
    budget[0] -= len(candidates)
    having: dict[str, list[int]] = {before: [], after: []}
    for rec in candidates:
        kinds: set[str] = set()
        with contextlib.suppress(ValueError):
            _kinds(orjson.loads(lines.line(rec)), path, kinds)
        for kind in kinds & having.keys():
            having[kind].append(rec)
    rare = min(having.values(), key=len)
    if len(rare) <= limit:
        moved.update(rare)
    return moved


def parse_records(lines: LineIndex, python: set[int], max_python: int, checked_utf8: bool = False) -> Parsed | None:
    """Parse every record not in `python` with pyarrow (see the module docstring); None when not possible.

    The first `PROBE_BYTES` are read first: their conflicts and timestamp-like fields are found at a
    small cost, so the whole split is usually read once. pyarrow does not check UTF-8 when it parses, so the
    strings are validated afterwards unless `checked_utf8` (bytes orjson wrote: it writes only valid UTF-8).
    """
    if len(lines.data) > MAX_BYTES:
        return None
    python = set(python)
    strings: StringTrie = {}
    known: TypeTrie = {}  # the probe's types, for the full read
    aliases: dict[str, str] = {}  # keys renamed for a rare type's values (`kernel.normalize.arrow_alias`)
    budget = [2 * len(lines)]  # records parsed in Python to find the records of a rare type
    everything = np.arange(len(lines), dtype=np.int64)
    kept = np.ones(len(lines), bool)
    probe_end = int(np.searchsorted(lines.starts, PROBE_BYTES))
    probing = 0 < probe_end < len(lines)
    for _ in range(MAX_ATTEMPTS):
        if len(python) > max_python:
            return None
        lines.blank(python)
        if python:
            kept[np.fromiter(python, np.int64, len(python))] = False
        keep = everything if not python else everything[kept]
        if probing:
            keep = keep[keep < probe_end]
        if len(keep) == 0:
            return None
        try:
            table = _read(lines.buffer(probe_end if probing else len(lines)), strings, known)
        except pa.ArrowInvalid as exc:
            if known and _CONFLICT.search(str(exc)) is None:  # a value the probe's type cannot hold (a 1.5 after
                known = {}  # integers): infer every type, as the reader does without a probe
                continue
            moved = _conflicting(lines, str(exc), keep, budget, aliases)
            if moved is None:
                return None
            python |= moved
            continue
        if _add_strings(strings, table.schema) and not probing:
            continue  # strings pyarrow turned into timestamps: read them again as strings
        if probing:
            probing = False
            known = known_types(table.schema)
            continue
        if table.num_rows != len(keep):  # e.g. two documents on one line: orjson rejects that
            return None
        if not checked_utf8:
            try:
                table.validate(full=True)  # pyarrow does not check UTF-8 when it parses
            except pa.ArrowInvalid:
                return None
        return Parsed(table, keep, python, aliases)
    return None

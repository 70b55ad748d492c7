"""Executor-safe: jsonl lines rendered from an Arrow table with Arrow compute, as orjson renders rows.

`render_lines` gives one JSON object per row (and a newline): the row's non-null values, keys in column order, each
value written the way `TableFileWriter` writes it (orjson): integers and booleans as they are, strings
with orjson's escapes (`\\"`, `\\\\`, control characters), timestamps as `2024-05-01T10:00:00+00:00`
(with `.ffffff` when there are microseconds). Doubles and the rare values Arrow cannot render alike
(control characters, timestamps before 1970) are rendered by orjson itself, value by value.
Only the types in `TYPES` are supported.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

TYPES = frozenset(("text", "bigint", "double", "bool", "timestamp"))
_ESCAPED = '["\\\\\\x00-\\x1f]'  # what orjson escapes in a string (RE2 syntax)
_ESCAPES = re.compile(b'["\\\\\\x00-\\x1f]')


def _by_orjson(values: pa.Array, rows: np.ndarray | None = None) -> pa.Array:
    """orjson's rendering of `values` (only at `rows` when given; nulls elsewhere)."""
    dumps = orjson.dumps
    items = values.to_pylist()
    if rows is None:
        return pa.array([None if v is None else dumps(v).decode() for v in items], pa.string())
    out: list[Any] = [None] * len(items)
    for row in rows.tolist():
        out[row] = dumps(items[row]).decode()
    return pa.array(out, pa.string())


def _patch(rendered: pa.Array, values: pa.Array, odd: pa.Array) -> pa.Array:
    """`rendered`, with the rows marked in `odd` rendered by orjson instead."""
    odd = pc.fill_null(odd, False)
    if not pc.any(odd).as_py():
        return rendered
    rows = np.flatnonzero(odd.to_numpy(zero_copy_only=False))
    return pc.if_else(odd, _by_orjson(values, rows), rendered)


def _text(values: pa.Array, key: str) -> pa.Array:
    """`"key":"value"`; values with quotes, backslashes or control characters are rendered by orjson."""
    plain = pc.binary_join_element_wise(key + '"', values, '"', "")
    data = values.buffers()[2]
    if data is None or _ESCAPES.search(memoryview(data)) is None:  # nothing to escape in the whole column
        return plain
    odd = pc.fill_null(pc.match_substring_regex(values, _ESCAPED), False)
    rows = np.flatnonzero(odd.to_numpy(zero_copy_only=False))
    return pc.if_else(odd, pc.binary_join_element_wise(key, _by_orjson(values, rows), ""), plain)


def _timestamp(values: pa.Array) -> pa.Array:
    micros = values.cast(pa.int64())
    seconds = pc.divide(micros, 1_000_000)  # integer division truncates: only right from 1970 on
    fraction = pc.subtract(micros, pc.multiply(seconds, 1_000_000))
    whole = pc.strftime(seconds.cast(pa.timestamp("s", tz="UTC")), format="%Y-%m-%dT%H:%M:%S")
    digits = pc.binary_join_element_wise(".", pc.utf8_lpad(fraction.cast(pa.string()), 6, "0"), "")
    digits = pc.if_else(pc.equal(fraction, 0), "", digits)  # a str: `pa.scalar` would import pandas
    rendered = pc.binary_join_element_wise('"', whole, digits, '+00:00"', "")
    return _patch(rendered, values, pc.less(micros, 0))


def render_pairs(values: pa.Array, data_type: str, name: str) -> pa.Array:
    """`"name":<JSON value>` for every value of a column of dlt type `data_type` (null stays null)."""
    key = orjson.dumps(name).decode() + ":"
    if data_type == "text":
        return _text(values, key)
    if data_type in ("bigint", "bool"):
        rendered = values.cast(pa.string())
    elif data_type == "timestamp":
        rendered = _timestamp(values)
    else:
        rendered = _by_orjson(values)
    return pc.binary_join_element_wise(key, rendered, "")


def render_lines(table: pa.Table, types: dict[str, str]) -> pa.Array:
    """One JSON object and a newline per row of `table`; `types`: the dlt type of each column."""
    pairs = []
    for name, column in zip(table.column_names, table.columns, strict=True):
        if column.null_count == len(column):
            continue
        values = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        pairs.append(render_pairs(values, types[name], name))
    if not pairs:
        return pa.array(["{}\n"] * table.num_rows, pa.string())
    body = pc.binary_join_element_wise(*pairs, ",", null_handling="skip")
    return pc.binary_join_element_wise("{", body, "}\n", "")

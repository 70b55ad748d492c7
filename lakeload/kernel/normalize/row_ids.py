"""Executor-safe: `_dlt_id`s computed exactly as dlt 1.31's relational normalizer computes them.

- a random id (root rows of `append`/`replace` tables, and of `merge` tables dlt does not upsert):
  10 random bytes, base64 without padding (14 characters);
- a key id (root rows of Delta `merge` tables, which dlt upserts): the SHAKE-128 digest, 10 bytes long,
  of the compact JSON of the row's primary key values `{"<column>": value, ...}` (normalized column
  names, keys sorted), base64 without padding. dlt hashes the values as its extracted JSON lines hold
  them: datetimes, dates, times, decimals and bytes are text behind a private-use tag character (dlt's
  typed JSON: U+F027 and ISO text for a datetime, U+F026 and `str()` for a Decimal, ...), so they are
  rendered that way here, whatever the input (records, Arrow tables, DataFrames);
- a row hash (root rows of scd2 merge tables): the same digest of the whole record's JSON (`row_hash_id`);
- a nested id: the same digest of the text `<parent _dlt_id>_<nested table name>_<list index>`.

So the same record gets the same ids from dlt and from lakeload, and the two tools can upsert one Delta table
in turn. The Arrow batch functions (`key_ids_array`, `nested_ids_array`) are what Spark runs as Arrow UDFs
for DataFrame inputs: Spark has no SHAKE-128, and no row leaves the executors.
Imports only the standard library, orjson, pyarrow and `lakeload.schema.dlt_typed_text`.

>>> key_row_id({"id": 1, "name": "a"}, ("id",))
'z5jIxXIbUnmbKw'
>>> nested_row_id("z5jIxXIbUnmbKw", "users__tags", 0)
'6SutpEAVZzL3Mg'
"""

from __future__ import annotations

import base64
import hashlib
import os
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from lakeload.kernel.contracts import TRow
from lakeload.schema import dlt_typed_text

ID_LENGTH_BYTES = 10
_KEY_JSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME


def random_row_id() -> str:
    """A random `_dlt_id`: 10 random bytes, base64 without padding (14 characters).

    >>> len(random_row_id())
    14
    """
    return base64.b64encode(os.urandom(ID_LENGTH_BYTES)).decode("ascii").rstrip("=")


def digest_id(value: bytes) -> str:
    """A deterministic `_dlt_id` of `value`: SHAKE-128 digest of 10 bytes, base64 without padding.

    >>> digest_id(b'{"id":1}')
    'z5jIxXIbUnmbKw'
    """
    return base64.b64encode(hashlib.shake_128(value).digest(ID_LENGTH_BYTES)).decode("ascii").rstrip("=")


def nested_row_id(parent_row_id: str, table: str, list_idx: int) -> str:
    """`_dlt_id` of a nested row: stable for the same parent id, nested table name and list position.

    >>> nested_row_id("z5jIxXIbUnmbKw", "users__tags", 0)
    '6SutpEAVZzL3Mg'
    """
    return digest_id(f"{parent_row_id}_{table}_{list_idx}".encode())


def _ids_array(raw: bytes, count: int) -> pa.Array:
    """`count` ids from `raw`, the concatenated 10-byte values each followed by 2 zero bytes.

    base64 turns each 12-byte group into 16 characters of which the first 14 are the unpadded text of its
    10 bytes, so one base64 call over all groups encodes every id.
    """
    encoded = np.frombuffer(base64.b64encode(raw), np.uint8).reshape(count, 16)[:, :14]
    offsets = np.arange(0, 14 * (count + 1), 14, dtype=np.int32)
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(encoded).tobytes())]
    return pa.Array.from_buffers(pa.string(), count, buffers)


def random_ids(count: int) -> pa.Array:
    """`count` random `_dlt_id`s, as `random_row_id` makes them.

    >>> len(random_ids(3)), len(random_ids(3)[0].as_py())
    (3, 14)
    """
    raw = np.zeros((count, 12), np.uint8)
    raw[:, :ID_LENGTH_BYTES] = np.frombuffer(os.urandom(ID_LENGTH_BYTES * count), np.uint8).reshape(count, ID_LENGTH_BYTES)
    return _ids_array(raw.tobytes(), count)


def digest_ids(values: list[bytes]) -> pa.Array:
    """`digest_id` of every value, as one Arrow string array (one digest per value, one base64 call).

    >>> digest_ids([b'{"id":1}']).to_pylist()
    ['z5jIxXIbUnmbKw']
    """
    if not values:
        return pa.array([], pa.string())
    shake = hashlib.shake_128
    raw = b"\0\0".join([shake(value).digest(ID_LENGTH_BYTES) for value in values]) + b"\0\0"
    return _ids_array(raw, len(values))


def nested_ids(parent_ids: pa.Array, table: str, list_idx: Any) -> pa.Array:
    """`nested_row_id` of every row of one nested table, from its parents' ids and its list positions.

    >>> import pyarrow as pa
    >>> nested_ids(pa.array(["z5jIxXIbUnmbKw"]), "users__tags", [0]).to_pylist()
    ['6SutpEAVZzL3Mg']
    """
    positions = pa.array(list_idx, pa.int64()).cast(pa.string())
    texts = pc.binary_join_element_wise(parent_ids.cast(pa.string()), positions, f"_{table}_")
    return digest_ids(texts.cast(pa.binary()).to_pylist())


def _encode(value: Any) -> Any:
    """Typed values as dlt's extracted JSON lines hold them (tagged text), so its key hashes include the tag."""
    if isinstance(value, (bytearray, memoryview)):
        value = bytes(value)
    text = dlt_typed_text.encode(value)
    # dlt's extract fails on other types; of what an extracted file holds, only a duration (Parquet) gets here
    return text if text is not None else str(value)


def key_row_id(row: TRow, primary_key: tuple[str, ...] | list[str]) -> str:
    """`_dlt_id` of a root row of an upserted table, from its primary key columns (normalized names).

    >>> key_row_id({"b": "x", "a": 1, "c": 2.5}, ("b", "a"))
    'khlsLbyhkJKGeQ'
    """
    return digest_id(_key_json(row, primary_key))


def _key_json(row: TRow, primary_key: tuple[str, ...] | list[str]) -> bytes:
    """The text dlt hashes for a key id: the compact JSON of the key values, keys sorted, typed values tagged."""
    return orjson.dumps({k: row[k] for k in primary_key}, default=_encode, option=_KEY_JSON_OPTIONS)


def row_hash_id(record: TRow) -> str:
    """dlt's scd2 `_dlt_id` of a root record (`get_row_hash`): the digest of the compact JSON of the record as
    extracted (nested dicts and lists included, so a change below it is a new version), keys sorted, without
    its `_dlt` keys; typed values tagged as in `key_row_id`.

    >>> row_hash_id({"id": 1, "v": "a", "tags": [1, 2], "_dlt_load_id": "1.2"})
    'yhz5NEyixaV0VA'
    """
    data = {k: v for k, v in record.items() if not (isinstance(k, str) and k.startswith("_dlt"))}
    return digest_id(orjson.dumps(data, default=_encode, option=_KEY_JSON_OPTIONS))


def key_ids_array(keys: pa.Array) -> pa.Array:
    """`key_row_id` of every row of a struct array whose fields are the primary key columns (Arrow UDF).

    >>> import pyarrow as pa
    >>> key_ids_array(pa.array([{"id": 1}])).to_pylist()
    ['z5jIxXIbUnmbKw']
    """
    names = tuple(f.name for f in keys.type)
    return key_ids_rows(keys.to_pylist(), names)


def key_ids_rows(rows: list[TRow], primary_key: tuple[str, ...]) -> pa.Array:
    """`key_row_id` of every row (dicts holding at least the primary key columns), as one Arrow array.

    >>> key_ids_rows([{"id": 1}], ("id",)).to_pylist()
    ['z5jIxXIbUnmbKw']
    """
    return digest_ids([_key_json(row, primary_key) for row in rows])


def nested_ids_array(parent_ids: pa.Array, table: pa.Array, list_idx: pa.Array) -> pa.Array:
    """`nested_row_id` of every row from its parent ids, table names and list positions (Arrow UDF).

    >>> import pyarrow as pa
    >>> nested_ids_array(pa.array(["z5jIxXIbUnmbKw"]), pa.array(["users__tags"]), pa.array([0])).to_pylist()
    ['6SutpEAVZzL3Mg']
    """
    texts = pc.binary_join_element_wise(parent_ids.cast(pa.string()), table.cast(pa.string()), list_idx.cast(pa.string()), "_")
    return digest_ids(texts.cast(pa.binary()).to_pylist())

"""Executor-safe: de-duplication hashes of incremental state (`unique_hashes`), computed exactly as dlt 1.31
computes them, and the Arrow batch functions that compute them in Spark tasks (`mapInArrow`).

A hash is the base64 (unpadded) of a 9-byte SHAKE-128 digest of the value's compact JSON with sorted keys,
where datetimes are whole microseconds since the epoch (naive ones taken as UTC), dates and times their ISO
text, decimals their text and bytes base64. The value is the primary key's value (a list for a compound key)
or, without a primary key, the whole row. Hashes dlt wrote before 1.29 (20 characters: 15 bytes over JSON
with `Z`-suffixed UTC datetimes) are recognized and still matched.

Imports only the standard library, pyarrow (lazily) and orjson.

>>> digest_dedup_value(5)
'tIXXf9wiHssy'
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import orjson

HASH_BYTES = 9
LEGACY_HASH_BYTES = 15
LEGACY_HASH_LENGTH = 20
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_MICROSECOND = dt.timedelta(microseconds=1)


def timestamp_us(moment: dt.datetime) -> int:
    """Whole microseconds since the Unix epoch; a naive datetime is taken as UTC."""
    plain = dt.datetime(
        moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second, moment.microsecond,
        tzinfo=moment.tzinfo or dt.timezone.utc, fold=moment.fold,
    )
    return (plain - _EPOCH) // _MICROSECOND


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"{value!r} cannot be hashed for incremental de-duplication")


def _encode(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return timestamp_us(value)
    return _plain(value)


def _digest(text: bytes, length: int) -> str:
    return base64.b64encode(hashlib.shake_128(text).digest(length)).decode("ascii").rstrip("=")


def digest_dedup_value(value: Any, legacy: bool = False) -> str:
    """The de-duplication hash of `value` (a key value, a list of key values or a row dict), as dlt's.

    >>> digest_dedup_value({"id": 5})
    'k2m2W4pvOwjK'
    """
    if legacy:
        text = orjson.dumps(value, default=_plain, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_UTC_Z)
        return _digest(text, LEGACY_HASH_BYTES)
    options = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
    return _digest(orjson.dumps(value, default=_encode, option=options), HASH_BYTES)


def has_legacy_hashes(hashes: Iterable[str]) -> bool:
    """True when `hashes` were written by dlt before 1.29 (and only match `legacy` digests)."""
    return any(len(h) == LEGACY_HASH_LENGTH for h in hashes)


KeyHint = str | Sequence[str] | Callable[[Any], Any] | None


def key_value(primary_key: KeyHint, row: Any) -> Any:
    """The value a primary key hint selects in `row`: one value for a column name, a list for a compound key.

    Raises KeyError naming the missing column.
    """
    columns = primary_key(row) if callable(primary_key) else primary_key
    if isinstance(columns, str):
        return row[columns]
    return [row[c] for c in columns or ()]


def row_hash(row: Any, primary_key: KeyHint, legacy: bool = False) -> str:
    """The hash that identifies `row` at the boundary: of its primary key, or of the whole row without one."""
    return digest_dedup_value(row if primary_key is None else key_value(primary_key, row), legacy)


@dataclass(frozen=True)
class BoundarySpec:
    """What a Spark task needs to hash rows at the boundary: the key hint (None: whole rows) and known hashes."""

    primary_key: str | tuple[str, ...] | None
    hashes: frozenset[str] = frozenset()
    legacy: bool = False


HASH_SCHEMA = "hash string"


def drop_seen_rows(spec: BoundarySpec) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """mapInArrow function: the rows whose hash is not in `spec.hashes` (rows at the start value)."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        for batch in batches:
            keep = [row_hash(row, spec.primary_key, spec.legacy) not in spec.hashes for row in batch.to_pylist()]
            yield batch.filter(pa.array(keep, type=pa.bool_()))

    return run


def hash_rows(spec: BoundarySpec) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """mapInArrow function: one `hash` per row (of its key, or of the whole row), `HASH_SCHEMA`."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        for batch in batches:
            hashes = [row_hash(row, spec.primary_key, spec.legacy) for row in batch.to_pylist()]
            yield pa.RecordBatch.from_arrays([pa.array(hashes, type=pa.string())], names=["hash"])

    return run

"""Executor-safe: split rows into files by partition transforms, keeping the partition columns in the files.

Iceberg keeps partition columns in its data files and derives a file's partition from them, so each file must
hold rows of one partition only: one value of each field's transform (`TPartitionSplit`). The transforms are
Iceberg's, computed with pyarrow: `identity`; `year`, `month`, `day`, `hour` (since 1970-01-01, UTC);
`truncate` (integers rounded down to a multiple of the width, strings cut to `width` characters); `bucket`
(Iceberg's murmur3 hash of each value's bytes, as the spec defines them per type, modulo the number of buckets).

>>> import pyarrow as pa, datetime as dt
>>> t = pa.table({"at": [dt.datetime(2026, 3, 4, 5), dt.datetime(2026, 3, 4, 7), dt.datetime(2025, 1, 1)], "n": [1, 2, 3]})
>>> [(key, part["n"].to_pylist()) for key, part in split_rows(t, ({"column": "at", "transform": "day", "param": None},))]
[((20516,), [1, 2]), ((20089,), [3])]
>>> transformed(pa.array([34, None]), {"column": "n", "transform": "bucket", "param": 16}).to_pylist()  # the spec's example
[3, None]
>>> transformed(pa.array(["iceberg"]), {"column": "s", "transform": "bucket", "param": 2**31 - 1}).to_pylist()
[1210000089]
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lakeload.kernel.contracts import TPartitionSplit

TRANSFORMS = ("identity", "year", "month", "day", "hour", "truncate", "bucket")
PARTITION_KEY = "__lakeload_partition_"  # + a partition field's position: its transformed values as a column
_KEY = "__lakeload_split_"
_MICROS_PER_HOUR = 3_600_000_000


def _epoch_micros(column: Any) -> Any:
    if pa.types.is_date(column.type):
        return pc.multiply(column.cast(pa.date32()).cast(pa.int32()).cast(pa.int64()), 86_400_000_000)
    return column.cast(pa.timestamp("us", tz=column.type.tz)).cast(pa.int64())


def _hashed_bytes(column: Any) -> list[bytes | None]:
    """Each value as the bytes Iceberg's bucket transform hashes: integers, dates (days), times and timestamps
    (microseconds) as 8-byte little-endian longs; strings as UTF-8; binary as is; decimals as their unscaled value's
    shortest two's-complement big-endian bytes."""
    kind = column.type
    if pa.types.is_date(kind):
        column = column.cast(pa.date32()).cast(pa.int32())
    elif pa.types.is_timestamp(kind):
        column = _epoch_micros(column)
    elif pa.types.is_time(kind):
        column = column.cast(pa.time64("us")).cast(pa.int64())
    values = column.to_pylist()
    if pa.types.is_integer(column.type):
        return [None if v is None else struct.pack("<q", v) for v in values]
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return [None if v is None else v.encode("utf-8") for v in values]
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind):
        return list(values)
    if pa.types.is_decimal(kind):
        return [None if v is None else _unscaled_bytes(v) for v in values]
    raise ValueError(f"the bucket transform takes integers, dates, times, timestamps, strings, binary and decimals, not {kind}")


def _unscaled_bytes(value: Decimal) -> bytes:
    sign, digits, exponent = value.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()  # -128 fits one byte
    return unscaled.to_bytes((bits + 8) // 8, "big", signed=True)


def _bucket(column: Any, buckets: int) -> pa.Array:
    import mmh3

    return pa.array([None if b is None else (mmh3.hash(b) & 0x7FFFFFFF) % buckets for b in _hashed_bytes(column)], pa.int32())


def transformed(column: Any, split: TPartitionSplit) -> Any:
    """The values of `split`'s transform of `column` (an Arrow array or chunked array)."""
    kind = split["transform"]
    if kind == "identity":
        return column
    if kind in ("year", "month"):
        micros = _epoch_micros(column)
        moment = micros.cast(pa.timestamp("us"))
        years = pc.subtract(pc.year(moment), 1970)
        return years if kind == "year" else pc.add(pc.multiply(years, 12), pc.subtract(pc.month(moment), 1))
    if kind == "day":
        return pc.floor(pc.divide(_epoch_micros(column).cast(pa.float64()), 86_400_000_000.0)).cast(pa.int32())
    if kind == "hour":
        return pc.floor(pc.divide(_epoch_micros(column).cast(pa.float64()), float(_MICROS_PER_HOUR))).cast(pa.int32())
    if kind == "truncate":
        width = int(split["param"] or 0)
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            return pc.utf8_slice_codeunits(column, 0, width)
        remainder = pc.subtract(column, pc.multiply(pc.floor(pc.divide(column.cast(pa.float64()), float(width))).cast(column.type), width))
        return pc.subtract(column, remainder)
    if kind == "bucket":
        return _bucket(column, int(split["param"] or 0))
    raise ValueError(f"partition transform {kind!r} is not one of {TRANSFORMS}")


def split_rows(table: pa.Table, splits: tuple[TPartitionSplit, ...]) -> Iterator[tuple[tuple[Any, ...], pa.Table]]:
    """`table`'s rows grouped by the transformed values of `splits` (nulls a group of their own), columns kept."""
    if not splits:
        yield (), table
        return
    names = [f"{_KEY}{i}" for i in range(len(splits))]
    keyed = table
    for name, split in zip(names, splits, strict=True):
        keyed = keyed.append_column(name, transformed(table.column(split["column"]), split))
    for key in keyed.select(names).group_by(names).aggregate([]).to_pylist():
        mask = None
        for name in names:
            column = keyed.column(name)
            part = pc.is_null(column) if key[name] is None else pc.equal(column, pa.scalar(key[name], column.type))
            mask = part if mask is None else pc.and_(mask, part)
        yield tuple(key[n] for n in names), table.filter(mask)


def with_partition_keys(splits: tuple[TPartitionSplit, ...], positions: tuple[int, ...],
                        batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The `mapInArrow` body: each batch with the transformed values of `splits` appended as the columns
    `PARTITION_KEY<position>` (integers as Iceberg's partition values are: int32; `truncate` keeps its type)."""
    for batch in batches:
        columns, names = list(batch.columns), list(batch.schema.names)
        for position, split in zip(positions, splits, strict=True):
            values = transformed(batch.column(split["column"]), split)
            columns.append(values if split["transform"] == "truncate" else values.cast(pa.int32()))
            names.append(f"{PARTITION_KEY}{position}")
        yield pa.RecordBatch.from_arrays(columns, names=names)

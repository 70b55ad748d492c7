"""The partition transforms executors split Iceberg files by: `bucket` hashes each value as Iceberg's spec says,
checked against pyiceberg's own per-value transform for every type it takes (the oracle)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg import types
from pyiceberg.transforms import BucketTransform

from lakeload.kernel.delta.splits import split_rows, transformed

UTC = dt.timezone.utc
CASES: list[tuple[pa.DataType, Any, list[Any]]] = [
    (pa.int32(), types.IntegerType(), [0, 1, -1, 34, 2**31 - 1, -(2**31), None]),
    (pa.int64(), types.LongType(), [0, 34, -7, 2**62, -(2**63), None]),
    (pa.string(), types.StringType(), ["", "iceberg", "ü€𝄞", "a" * 300, None]),
    (pa.large_string(), types.StringType(), ["x", "iceberg"]),
    (pa.binary(), types.BinaryType(), [b"", b"\x00\x01\x02\x03", b"iceberg", None]),
    (pa.date32(), types.DateType(), [dt.date(1970, 1, 1), dt.date(2017, 11, 16), dt.date(1900, 2, 28), None]),
    (pa.timestamp("us"), types.TimestampType(), [dt.datetime(2017, 11, 16, 22, 31, 8), dt.datetime(1960, 1, 1, 0, 0, 0, 1), None]),
    (pa.timestamp("us", tz="UTC"), types.TimestamptzType(), [dt.datetime(2017, 11, 16, 22, 31, 8, 1, tzinfo=UTC), None]),
    (pa.timestamp("ms", tz="UTC"), types.TimestamptzType(), [dt.datetime(2026, 3, 4, 5, 6, 7, 8000, tzinfo=UTC)]),
    (pa.time64("us"), types.TimeType(), [dt.time(22, 31, 8), dt.time(0, 0), None]),
    (pa.decimal128(9, 2), types.DecimalType(9, 2), [Decimal("14.20"), Decimal("-0.01"), Decimal("0.00"), Decimal("-1234567.89"), None]),
    (pa.decimal128(38, 0), types.DecimalType(38, 0), [Decimal(2**100), Decimal(-(2**100)), Decimal(127), Decimal(128), Decimal(-128)]),
]


@pytest.mark.parametrize("buckets", [1, 16, 1000, 2**31 - 1])
@pytest.mark.parametrize(("arrow_type", "iceberg_type", "values"), CASES, ids=lambda c: str(c) if isinstance(c, pa.DataType) else None)
def test_bucket_is_icebergs_for_every_type(arrow_type: pa.DataType, iceberg_type: Any, values: list[Any], buckets: int) -> None:
    oracle = BucketTransform(buckets).transform(iceberg_type)
    got = transformed(pa.chunked_array([pa.array(values, arrow_type)]), {"column": "c", "transform": "bucket", "param": buckets})
    assert got.to_pylist() == [oracle(v) for v in values]


def test_the_specs_own_examples() -> None:
    """The hashes the Iceberg spec lists (appendix B), modulo 2**31 - 1 to keep them whole."""
    spec = [(pa.array([34]), 2017239379), (pa.array(["iceberg"]), 1210000089), (pa.array([b"\x00\x01\x02\x03"], pa.binary()), -188683207),
            (pa.array([Decimal("14.20")], pa.decimal128(4, 2)), -500754589), (pa.array([dt.date(2017, 11, 16)]), -653330422)]
    for column, hashed in spec:
        assert transformed(column, {"column": "c", "transform": "bucket", "param": 2**31 - 1}).to_pylist() == [(hashed & 0x7FFFFFFF) % (2**31 - 1)]


def test_rows_split_into_one_group_per_bucket_with_nulls_their_own() -> None:
    table = pa.table({"id": list(range(40)) + [None], "n": list(range(41))})
    groups = list(split_rows(table, ({"column": "id", "transform": "bucket", "param": 4},)))
    assert sorted(k for k, _ in groups if k != (None,)) == [(0,), (1,), (2,), (3,)]
    oracle = BucketTransform(4).transform(types.LongType())
    for key, part in groups:
        assert {oracle(v) for v in part["id"].to_pylist()} == {key[0]}
    assert sum(p.num_rows for _, p in groups) == 41


def test_a_type_the_bucket_transform_does_not_take_is_named() -> None:
    with pytest.raises(ValueError, match="not double"):
        transformed(pa.array([1.5]), {"column": "c", "transform": "bucket", "param": 4})

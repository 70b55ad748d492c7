"""Executor-safe: the Arrow types lakeload writes for each dlt data type (as dlt's parquet writer does).

Imports only pyarrow. `to_arrow_type("timestamp")` is `timestamp("us", tz="UTC")`; `json` is a string
column holding JSON text; decimals default to decimal128(38, 9) and wei to decimal256(76, 0).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import pyarrow as pa

DEFAULT_DECIMAL_PRECISION = (38, 9)
WEI_PRECISION = (78, 0)
DEFAULT_TIMESTAMP_PRECISION = 6


def _arrow_decimal(precision: int, scale: int) -> pa.DataType:
    if precision <= 38:
        return pa.decimal128(precision, scale)
    if precision <= 76:
        return pa.decimal256(precision, scale)
    return pa.decimal256(76, max(0, 76 - (precision - scale)))


def _arrow_unit(precision: int) -> Literal["s", "ms", "us", "ns"]:
    if precision == 0:
        return "s"
    return "ms" if precision <= 3 else "us" if precision <= 6 else "ns"


def _arrow_int(precision: int | None) -> pa.DataType:
    if precision is None:
        return pa.int64()
    bits = next((b for b in (8, 16, 32) if precision <= b), 64)
    return pa.int64() if bits == 64 else getattr(pa, f"int{bits}")()


def _arrow_for_decimal(precision: int | None, scale: int | None) -> pa.DataType:
    if precision is None:
        return _arrow_decimal(*DEFAULT_DECIMAL_PRECISION)
    return _arrow_decimal(precision, 0 if scale is None else scale)


def to_arrow_type(
    data_type: str, precision: int | None = None, scale: int | None = None, timezone: bool = True
) -> pa.DataType:
    """The arrow type dlt's parquet writer uses for a column on the filesystem destination.

    Example: ``to_arrow_type("timestamp")`` -> ``pa.timestamp("us", tz="UTC")``.
    """
    ts_precision = DEFAULT_TIMESTAMP_PRECISION if precision is None else precision
    simple: dict[str, Callable[[], pa.DataType]] = {
        "text": pa.string, "double": pa.float64, "bool": pa.bool_, "json": pa.string, "date": pa.date32,
        "timestamp": lambda: pa.timestamp(_arrow_unit(ts_precision), tz="UTC" if timezone else None),
        "bigint": lambda: _arrow_int(precision),
        "binary": lambda: pa.binary(precision or -1),
        "decimal": lambda: _arrow_for_decimal(precision, scale),
        "wei": lambda: _arrow_decimal(*WEI_PRECISION),
        "time": lambda: pa.time32(_arrow_unit(ts_precision)) if ts_precision <= 3 else pa.time64(_arrow_unit(ts_precision)),  # type: ignore[arg-type]
    }  # fmt: skip
    if data_type not in simple:
        raise ValueError(data_type)
    return simple[data_type]()


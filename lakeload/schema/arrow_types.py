"""Executor-safe: the Arrow types lakeload writes for each dlt data type (as dlt's parquet writer does).

Imports only pyarrow. `to_arrow_type("timestamp")` is `timestamp("us", tz="UTC")`; `json` is a string
column holding JSON text (unless its `x-nested-type` hint keeps the Arrow type of an Arrow item's column);
decimals default to decimal128(38, 9) and wei to decimal256(76, 0). `data_type_of` maps back: the dlt column
an Arrow field of a user's Arrow table or pandas frame makes.
"""

from __future__ import annotations

import base64
import gzip
from collections.abc import Callable
from typing import Literal

import pyarrow as pa

from lakeload.schema.typing import TColumn

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
        "time": lambda: pa.time32(_arrow_unit(ts_precision)) if ts_precision <= 3 else pa.time64(_arrow_unit(ts_precision)),
    }  # fmt: skip
    if data_type not in simple:
        raise ValueError(data_type)
    return simple[data_type]()



NESTED_TYPE_HINT = "x-nested-type"  # dlt's column hint: the Arrow type of a `json` column loaded from Arrow items
_IPC_PREFIX = "arrow-ipc:"


def nested_type_text(arrow_type: pa.DataType) -> str:
    """The `x-nested-type` text of `arrow_type`, as dlt stores it (so both tools' schemas compare equal): a
    one-field Arrow IPC schema, gzipped without a timestamp, in base64."""
    schema_bytes = pa.schema([pa.field("c", arrow_type)]).serialize().to_pybytes()
    return _IPC_PREFIX + base64.b64encode(gzip.compress(schema_bytes, mtime=0)).decode("ascii")


def nested_type(text: str) -> pa.DataType:
    """The Arrow type an `x-nested-type` text holds (see `nested_type_text`)."""
    if not text.startswith(_IPC_PREFIX):
        raise ValueError(f"Unknown {NESTED_TYPE_HINT} {text[:20]!r}: only {_IPC_PREFIX!r} types are known.")
    raw = gzip.decompress(base64.b64decode(text[len(_IPC_PREFIX):]))
    return pa.ipc.read_schema(pa.BufferReader(raw)).field(0).type


def column_arrow_type(column: TColumn) -> pa.DataType:
    """The Arrow type of a complete dlt column: a `json` column with `x-nested-type` keeps its Arrow type."""
    text = column.get("x-nested-type")  # NESTED_TYPE_HINT
    if column["data_type"] == "json" and text:
        return nested_type(text)
    return to_arrow_type(column["data_type"], column.get("precision"), column.get("scale"), column.get("timezone", True))


_UNITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def data_type_of(arrow_type: pa.DataType) -> TColumn | None:
    """The dlt type hints of an Arrow column of a user's item (None: a null-typed column makes no column yet).

    Nested types (struct, list, map) are `json` columns keeping their Arrow type in `x-nested-type`; integers
    narrower than 64 bits and timestamps keep their width/unit as `precision`, as dlt's Arrow extract does.
    """
    t = pa.types
    if t.is_dictionary(arrow_type):
        return data_type_of(arrow_type.value_type)
    if t.is_null(arrow_type):
        return None
    if t.is_string(arrow_type) or t.is_large_string(arrow_type):
        return {"data_type": "text"}
    if t.is_floating(arrow_type):
        return {"data_type": "double"}
    if t.is_boolean(arrow_type):
        return {"data_type": "bool"}
    if t.is_timestamp(arrow_type):
        found: TColumn = {"data_type": "timestamp", "precision": _UNITS[arrow_type.unit]}
        return found if arrow_type.tz else {**found, "timezone": False}
    if t.is_date(arrow_type):
        return {"data_type": "date"}
    if t.is_time(arrow_type):
        return {"data_type": "time", "precision": _UNITS[arrow_type.unit]}
    if t.is_integer(arrow_type):
        return {"data_type": "bigint"} if arrow_type.bit_width == 64 else {"data_type": "bigint", "precision": arrow_type.bit_width}
    if t.is_fixed_size_binary(arrow_type):
        return {"data_type": "binary", "precision": arrow_type.byte_width}
    if t.is_binary(arrow_type) or t.is_large_binary(arrow_type):
        return {"data_type": "binary"}
    if t.is_decimal(arrow_type):
        return {"data_type": "decimal", "precision": arrow_type.precision, "scale": arrow_type.scale}
    if t.is_nested(arrow_type):
        return {"data_type": "json", "x-nested-type": nested_type_text(arrow_type)}  # NESTED_TYPE_HINT
    raise ValueError(f"Arrow type {arrow_type} has no dlt data type")

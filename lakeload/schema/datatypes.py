"""Executor-safe: dlt-compatible data types, type detection and inference, and file rendering rules.

Imports only the standard library, orjson and pendulum. Semantics follow dlt 1.31 with the context
timezone fixed to UTC. Coercion of values between data types lives in :mod:`lakeload.schema.coercion`.

How each type ends up in the files dlt's filesystem destination writes:

====================  =====================================  =====================================
type                  jsonl (orjson, see `jsonl_dumps`)       csv (stdlib csv, QUOTE_NONNUMERIC)
====================  =====================================  =====================================
text                  JSON string, non-ASCII kept raw        quoted, ``"`` doubled
bigint                JSON number                            unquoted ``str(int)``
double                orjson float (``1e-7``, NaN -> null)   unquoted ``repr`` (``1e-07``, ``nan``)
bool                  ``true``/``false``                     unquoted ``True``/``False``
timestamp             ``"2024-05-01T08:00:00.123456+00:00"``  quoted ``str()``: space separator
date                  ``"2024-05-01"``                       quoted ``2024-05-01``
time                  ``"10:00:00.000500"``                  quoted ``str()``
decimal / wei         JSON string ``str(Decimal)`` (``1E+3``) unquoted ``str(Decimal)``
binary                JSON string, standard base64            quoted, bytes decoded as UTF-8 (raw)
json                  nested JSON value                      quoted compact JSON (orjson)
null                  ``null``                               ``""``
====================  =====================================  =====================================
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Callable, Mapping, Sequence
from dataclasses import is_dataclass
from decimal import Decimal
from enum import Enum
from functools import cache
from typing import Any, Literal, get_args

import orjson
import pendulum
from pendulum.parsing import _parse_common, parse_iso8601

DataType = Literal["text", "bigint", "double", "bool", "timestamp", "date", "time", "decimal", "wei", "json", "binary"]
DATA_TYPES: tuple[DataType, ...] = get_args(DataType)
DEFAULT_DETECTIONS: tuple[str, ...] = ("iso_timestamp",)
_MAX_WEI = 578960446186580977117854925043439539266
_NOW_TS = pendulum.now().timestamp()
_TS_WINDOW = 5 * 31536000.0


class Wei(Decimal):
    """A Decimal holding an EVM integer (dlt's ``wei`` type, decimal(78, 0))."""


PY_TYPE_TO_DATA_TYPE: dict[type, DataType] = {
    str: "text", int: "bigint", float: "double", bool: "bool", bytes: "binary", dict: "json",
    list: "json", Decimal: "decimal", datetime.datetime: "timestamp", datetime.date: "date",
    datetime.time: "time", pendulum.DateTime: "timestamp", pendulum.Date: "date", pendulum.Time: "time",
}  # fmt: skip


def py_type_to_data_type(t: type) -> DataType:
    """Map a Python type to a dlt data type; raises TypeError for types dlt cannot store.

    Example: ``py_type_to_data_type(bool)`` -> ``'bool'``.
    """
    exact = PY_TYPE_TO_DATA_TYPE.get(t)
    return exact if exact is not None else _subclass_data_type(t)


@cache
def _subclass_data_type(t: Any) -> DataType:
    checks: tuple[tuple[type | tuple[type, ...], DataType], ...] = (
        ((dict, list), "json"), (Wei, "wei"), (Decimal, "decimal"), (datetime.datetime, "timestamp"),
        (datetime.date, "date"), (datetime.time, "time"), (str, "text"), (float, "double"),
        (int, "bigint"), (bytes, "binary"),
    )  # fmt: skip
    for base, data_type in checks:
        if issubclass(t, base):
            return data_type
    if is_dataclass(t) or issubclass(t, (Mapping, Sequence)):
        return "json"
    if issubclass(t, Enum):
        # int-valued enums are int subclasses and were caught above: any other enum is text
        return "text"
    raise TypeError(t)


# ---------------------------------------------------------------- parsing and detection


def parse_iso_like(value: str) -> Any:
    """Parse ISO 8601 first, pendulum's "common" formats (``2024/05/01 10:00``, ``2024``) second.

    Raises ValueError when neither parses.

    Example: ``parse_iso_like("2024/05/01")`` -> ``datetime.date(2024, 5, 1)``.
    """
    try:
        return parse_iso8601(value)
    except ValueError:
        return _parse_common(value, day_first=False)


def is_iso_timestamp(value: Any) -> bool:
    """True when `value` is a non-empty string that parses to a full date and time.

    Example: ``is_iso_timestamp("2024-05-01 11:30:00")`` -> ``True``; ``is_iso_timestamp("2024-05-01")`` -> ``False``.
    """
    if not isinstance(value, str) or not value:
        return False
    try:
        return isinstance(parse_iso_like(value), datetime.datetime)
    except Exception:
        return False


def is_iso_date(value: Any) -> bool:
    """True when `value` is a string parsing to a date only (dlt's optional ``iso_date`` detection).

    Example: ``is_iso_date("2024-05-01")`` -> ``True``.
    """
    if not isinstance(value, str) or not value or is_iso_timestamp(value):
        return False
    try:
        return isinstance(parse_iso_like(value), datetime.date)
    except Exception:
        return False


def _detect_timestamp(value: Any) -> DataType | None:
    if type(value) in (int, float) and _NOW_TS - _TS_WINDOW <= value <= _NOW_TS + _TS_WINDOW:
        return "timestamp"
    return None


def _detect_large_integer(value: Any) -> DataType | None:
    if isinstance(value, int):
        if value > _MAX_WEI:
            return "text"
        if value > 2**63 - 1:
            return "wei"
    return None


_DETECTIONS: dict[str, Callable[[Any], DataType | None]] = {
    "iso_timestamp": lambda v: "timestamp" if is_iso_timestamp(v) else None,
    "iso_date": lambda v: "date" if is_iso_date(v) else None,
    "timestamp": _detect_timestamp,
    "large_integer": _detect_large_integer,
    "wei_to_double": lambda v: "double" if isinstance(v, Wei) else None,
}


def detect_type(value: Any, detections: Sequence[str] = DEFAULT_DETECTIONS) -> DataType | None:
    """Run the schema's type detections in order; the first hit wins, None if none fires.

    Example: ``detect_type("2024-05-01T10:00:00Z")`` -> ``'timestamp'``.
    """
    for name in detections:
        if (detected := _DETECTIONS[name](value)) is not None:
            return detected
    return None


def infer_data_type(value: Any, detections: Sequence[str] = DEFAULT_DETECTIONS) -> DataType:
    """Data type a new column gets from its first non-null value.

    Example: ``infer_data_type("2024-05-01")`` -> ``'text'``.
    """
    return detect_type(value, detections) or py_type_to_data_type(type(value))


# ---------------------------------------------------------------- rendering in jsonl files


def jsonl_default(obj: Any) -> Any:
    """orjson ``default=`` rendering non-JSON values the way dlt's jsonl writer does.

    Example: ``orjson.dumps(Decimal("1.5"), default=jsonl_default)`` -> ``b'"1.5"'``.
    """
    if isinstance(obj, Decimal):
        return str(obj)
    if isinstance(obj, (datetime.datetime, datetime.date, datetime.time)):
        return obj.isoformat()
    if isinstance(obj, bytes):
        return base64.b64encode(obj).decode("ascii")
    for attr in ("asdict", "_asdict", "model_dump"):
        if callable(method := getattr(obj, attr, None)):
            return method()
    if isinstance(obj, Enum):
        return obj.value
    raise TypeError(f"`{obj!r}` is not JSON serializable")


JSONL_OPTIONS = orjson.OPT_NON_STR_KEYS


def jsonl_dumps(row: Any) -> bytes:
    """Serialize one normalized row exactly as dlt's jsonl writer does (no trailing newline).

    Example: ``jsonl_dumps({"a": Decimal("1")})`` -> ``b'{"a":"1"}'``.
    """
    return orjson.dumps(row, default=jsonl_default, option=JSONL_OPTIONS)

"""Executor-safe: coercion of values between dlt data types, and the timezone rule for timestamps.

Imports only the standard library, orjson, pendulum and :mod:`lakeload.schema.datatypes`. Semantics
follow dlt 1.31 with the context timezone fixed to UTC; `coerce_value` turns a value into the type
of its column, `normalize_timezone` then applies the column's ``timezone`` hint.

Example:
    >>> normalize_timezone(coerce_value("timestamp", "text", "2024-05-01T12:00:00+02:00"), True).isoformat()
    '2024-05-01T10:00:00+00:00'
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Any

import orjson
import pendulum
from pendulum.parsing import parse_iso8601

from lakeload.schema.datatypes import Wei, jsonl_default, jsonl_dumps, parse_iso_like

UTC = datetime.timezone.utc


# ---------------------------------------------------------------- timezones and datetimes


def _tz_is_utc(tz: datetime.tzinfo) -> bool:
    if isinstance(tz, datetime.timezone):
        return not tz.utcoffset(None)
    for attr in ("key", "zone", "name"):
        if name := getattr(tz, attr, None):
            return bool(name == "UTC")
    return False


def _to_stdlib(value: datetime.datetime) -> datetime.datetime:
    if isinstance(value, pendulum.DateTime):
        return datetime.datetime(
            value.year, value.month, value.day, value.hour, value.minute, value.second,
            value.microsecond, value.tzinfo, fold=value.fold,
        )  # fmt: skip
    return value


def normalize_timezone(value: datetime.datetime, timezone: bool) -> datetime.datetime:
    """Apply a timestamp column's ``timezone`` hint: aware UTC if True, naive UTC wall clock if False.

    A naive value counts as UTC. A value already in a zone named UTC is returned unchanged.
    Example: ``normalize_timezone(datetime.datetime(2024, 5, 1), True).tzinfo`` -> ``timezone.utc``.
    """
    tz = value.tzinfo
    if tz is None:
        return value.replace(tzinfo=UTC) if timezone else value
    if not _tz_is_utc(tz):
        value = _to_stdlib(value).astimezone(UTC)
    return value if timezone else value.replace(tzinfo=None)


def _text_to_timestamp(value: str) -> datetime.datetime:
    try:
        parsed = parse_iso8601(value)
        if isinstance(parsed, datetime.datetime):
            return _to_stdlib(parsed)
    except ValueError:
        pass
    try:
        parsed = parse_iso_like(value)
    except ValueError:
        return _to_stdlib(pendulum.from_timestamp(float(value)))  # ValueError when not a number
    if isinstance(parsed, datetime.datetime):
        return _to_stdlib(parsed)
    if isinstance(parsed, datetime.date):
        return datetime.datetime(parsed.year, parsed.month, parsed.day)
    raise ValueError(f"Cannot coerce `{value}` to a timestamp")


def _any_to_datetime(value: Any) -> datetime.datetime:
    if isinstance(value, datetime.datetime):
        return _to_stdlib(value)
    if isinstance(value, datetime.date):
        return datetime.datetime(value.year, value.month, value.day)
    if isinstance(value, str):
        return _text_to_timestamp(value)
    return _to_stdlib(pendulum.from_timestamp(value))


def _to_date(value: Any) -> pendulum.Date:
    d = normalize_timezone(_any_to_datetime(value), True)
    return pendulum.Date(d.year, d.month, d.day)


def _text_to_date(value: str) -> pendulum.Date:
    try:
        d = datetime.date.fromisoformat(value)
    except ValueError:
        return _to_date(value)
    return pendulum.Date(d.year, d.month, d.day)


def _text_to_time(value: str) -> pendulum.Time:
    parsed = parse_iso_like(value)
    if not isinstance(parsed, datetime.time):
        raise ValueError(f"Invalid ISO time string: `{value}`")
    if parsed.tzinfo is not None:
        as_dt = datetime.datetime.combine(datetime.date(1970, 1, 1), parsed).astimezone(UTC)
        parsed = as_dt.time()
    return pendulum.Time(parsed.hour, parsed.minute, parsed.second, parsed.microsecond)


# ---------------------------------------------------------------- coercion

# dlt marks typed values in its extract files with U+F026..U+F02E; json values drop such a marker
_DLT_MARKER_MIN, _DLT_MARKER_MAX = 0xF026, 0xF02E


def _strip_markers(value: Any) -> Any:
    if isinstance(value, str):
        if len(value) > 1 and _DLT_MARKER_MIN <= ord(value[0]) <= _DLT_MARKER_MAX:
            return value[1:]
        return value
    if isinstance(value, tuple):
        value = value._asdict() if hasattr(value, "_asdict") else list(value)
    if isinstance(value, dict):
        for k, v in value.items():
            value[k] = _strip_markers(v)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            value[i] = _strip_markers(v)
    return value


def _json_to_text(value: Any) -> str:
    return jsonl_dumps(_strip_markers(value)).decode("utf-8")


def _text_fallback(value: Any) -> str:
    if isinstance(value, (Decimal, bytes, datetime.datetime, datetime.date, datetime.time, Enum)):
        return str(jsonl_default(value))
    return str(value)


def _hex_or_int(value: str, convert: Callable[[Any], Any]) -> Any:
    trimmed = value.strip()
    if trimmed.startswith("0x"):
        return convert(int(trimmed[2:], 16))
    try:
        return convert(trimmed)
    except InvalidOperation as exc:
        raise ValueError(trimmed) from exc


def _text_to_binary(value: str) -> bytes:
    if value.startswith("0x"):
        return bytes.fromhex(value[2:])
    return base64.b64decode(value, validate=True)  # binascii.Error is a ValueError


def _numeric_to_bigint(value: Any) -> int:
    try:
        fractional = value % 1 != 0
    except InvalidOperation as exc:
        raise ValueError(value) from exc
    if fractional:
        raise ValueError(value)
    return int(value)


def _text_to_bool(value: str) -> bool:
    lowered = value.lower()
    if lowered in ("yes", "true", "t", "y", "1"):
        return True
    if lowered in ("no", "false", "f", "n", "0"):
        return False
    raise ValueError(f"Cannot coerce `{value}` to bool: expected yes/true/t/y/1 or no/false/f/n/0")


_COERCIONS: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("text", "json"): _json_to_text,
    **{("text", src): _text_fallback for src in ("bigint", "double", "wei", "decimal", "bool", "binary", "timestamp", "date", "time")},
    ("binary", "text"): _text_to_binary,
    ("binary", "bigint"): lambda v: v.to_bytes((v.bit_length() + 7) // 8, "little"),
    ("bigint", "text"): lambda v: _hex_or_int(v, int),
    **{("bigint", src): _numeric_to_bigint for src in ("wei", "decimal", "double")},
    ("double", "text"): lambda v: _hex_or_int(v, float),
    **{("double", src): float for src in ("bigint", "wei", "decimal")},
    ("decimal", "text"): lambda v: _hex_or_int(v, Decimal),
    ("decimal", "bigint"): Decimal,
    ("decimal", "double"): lambda v: Decimal(str(v)),
    ("decimal", "wei"): Decimal,
    ("wei", "text"): lambda v: _hex_or_int(v, Wei),
    ("wei", "bigint"): Wei,
    ("wei", "double"): lambda v: Wei(str(v)),
    ("wei", "decimal"): Wei,
    ("bool", "text"): _text_to_bool,
    **{("bool", src): bool for src in ("bigint", "double", "decimal", "wei")},
    ("json", "text"): orjson.loads,
    ("timestamp", "text"): _text_to_timestamp,
    ("timestamp", "bigint"): pendulum.from_timestamp,
    ("timestamp", "double"): pendulum.from_timestamp,
    ("timestamp", "date"): _any_to_datetime,
    ("date", "text"): _text_to_date,
    **{("date", src): _to_date for src in ("timestamp", "bigint", "double")},
    ("time", "text"): _text_to_time,
}  # fmt: skip


def can_coerce(to_type: str, from_type: str) -> bool:
    """True when a `from_type` value may be coerced into a `to_type` column (it may still fail).

    Example: ``can_coerce("bigint", "text")`` -> ``True``; ``can_coerce("bigint", "bool")`` -> ``False``.
    """
    return to_type == from_type or (to_type, from_type) in _COERCIONS


def coerce_value(to_type: str, from_type: str, value: Any) -> Any:
    """Coerce `value` of data type `from_type` into `to_type`; ValueError when it cannot be.

    Timestamps keep their zone (naive stays naive): apply `normalize_timezone` afterwards.
    Example: ``coerce_value("bigint", "text", " 0x10 ")`` -> ``16``.
    """
    if to_type == from_type:
        if to_type == "json":
            return _strip_markers(value)
        if hasattr(value, "value"):  # enums and other value wrappers
            if to_type == "text":
                return str(value.value)
            if to_type == "bigint":
                return int(value.value)
        return value
    coercer = _COERCIONS.get((to_type, from_type))
    if coercer is None:
        raise ValueError(value)
    try:
        return coercer(value)
    except OverflowError as exc:
        raise ValueError(value) from exc

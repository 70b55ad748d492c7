"""Executor-safe: dlt-compatible data types, type detection, coercion and file rendering rules.

Imports only the standard library, orjson, pendulum and pyarrow. Semantics follow dlt 1.31 with the
context timezone fixed to UTC.

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
from decimal import Decimal, InvalidOperation
from enum import Enum
from functools import cache
from typing import Any, Literal, get_args

import orjson
import pendulum
from pendulum.parsing import _parse_common, parse_iso8601

DataType = Literal["text", "bigint", "double", "bool", "timestamp", "date", "time", "decimal", "wei", "json", "binary"]
DATA_TYPES: tuple[DataType, ...] = get_args(DataType)
UTC = datetime.timezone.utc
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


def _parse_iso_like(value: str) -> Any:
    """ISO 8601 first, pendulum's "common" formats (``2024/05/01 10:00``, ``2024``) second."""
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
        return isinstance(_parse_iso_like(value), datetime.datetime)
    except Exception:
        return False


def is_iso_date(value: Any) -> bool:
    """True when `value` is a string parsing to a date only (dlt's optional ``iso_date`` detection).

    Example: ``is_iso_date("2024-05-01")`` -> ``True``.
    """
    if not isinstance(value, str) or not value or is_iso_timestamp(value):
        return False
    try:
        return isinstance(_parse_iso_like(value), datetime.date)
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
        parsed = _parse_iso_like(value)
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
    parsed = _parse_iso_like(value)
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

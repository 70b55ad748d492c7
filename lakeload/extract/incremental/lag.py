"""`lag`: move the start of the next run back (an attribution window), as dlt.

The lag is subtracted from the last value for `max` (added for `min`): as a number for numeric cursors, in
seconds for datetimes (and ISO datetime strings, which keep their format), in days for dates (and date
strings, and datetimes of a cursor declared `date`). A lagged value never crosses `initial_value`; with an
`end_value` or a custom `last_value_func` there is no lag.

>>> apply_lag(2, None, 10, max)
8
>>> apply_lag(3600, None, "2024-05-01T10:00:00Z", max)
'2024-05-01T09:00:00Z'
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Callable
from typing import Any

logger = logging.getLogger("lakeload.extract")

_DATE_FORMATS = {re.compile(r"^\d{4}-\d{2}-\d{2}$"): "%Y-%m-%d", re.compile(r"^\d{8}$"): "%Y%m%d"}
_DATETIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}T\d{2}(?P<minutes>:\d{2})?(?P<seconds>:\d{2})?(?P<fraction>\.\d+)?"
    r"(?P<zone>Z|[+-]\d{2}:\d{2}|[+-]\d{4})?$"
)


def string_format(value: str) -> str | None:
    """The strftime format of an ISO date or datetime string (dlt's shapes), None for other text."""
    for pattern, fmt in _DATE_FORMATS.items():
        if pattern.match(value):
            return fmt
    match = _DATETIME.match(value)
    if match is None or (match.group("fraction") and not match.group("seconds")):
        return None
    fmt = "%Y-%m-%dT%H"
    fmt += ":%M" if match.group("minutes") else ""
    fmt += ":%S" if match.group("seconds") else ""
    fmt += ".%f" if match.group("fraction") else ""
    zone = match.group("zone") or ""
    fmt += "Z" if zone == "Z" else ("%:z" if ":" in zone else "%z") if zone else ""
    if zone and not match.group("seconds"):
        return None  # dlt knows offsets only on full datetimes
    return fmt


def _parse(value: str, fmt: str) -> dt.datetime:
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    if fmt in _DATE_FORMATS.values():
        return dt.datetime.strptime(value, fmt)
    return dt.datetime.fromisoformat(text)


def _format(value: dt.date, fmt: str) -> str:
    if "%:z" in fmt:  # strftime of Python < 3.12 lacks %:z
        text = value.strftime(fmt.replace("%:z", "%z"))
        return f"{text[:-2]}:{text[-2:]}"
    return value.strftime(fmt)


def _is_date_cursor(cursor_type: type | None, initial_value: Any) -> bool | None:
    """True for a date cursor, False for a datetime one, None when the declaration does not tell."""
    if isinstance(cursor_type, type):
        if issubclass(cursor_type, dt.datetime):
            return False
        if issubclass(cursor_type, dt.date):
            return True
    if isinstance(initial_value, str) and (fmt := string_format(initial_value)):
        return fmt in _DATE_FORMATS.values()
    return None


def _shift(lag: float, value: dt.date, last_value_func: Callable[..., Any]) -> dt.date:
    signed = -lag if last_value_func is max else lag
    if not isinstance(value, dt.datetime):
        return value + dt.timedelta(days=signed)
    if value.tzinfo is None:
        return value + dt.timedelta(seconds=signed)
    # the instant moves, not the wall clock, so the lag stays exact across DST changes
    return (value.astimezone(dt.timezone.utc) + dt.timedelta(seconds=signed)).astimezone(value.tzinfo)


def _lag_datetime_in_days(lag: float, value: dt.datetime, last_value_func: Callable[..., Any]) -> dt.datetime:
    """A datetime of a date cursor: the start (max) or end (min) of its lagged day, in its own zone."""
    zone = value.tzinfo
    day = _shift(lag, (value.astimezone(dt.timezone.utc) if zone else value).date(), last_value_func)
    edge = dt.time.min if last_value_func is max else dt.time.max
    lagged = dt.datetime.combine(day, edge, tzinfo=dt.timezone.utc if zone else None)
    return lagged.astimezone(zone) if zone else lagged


def lag_value(lag: float, value: Any, last_value_func: Callable[..., Any], date_cursor: bool | None = None) -> Any:
    """`value` moved back by `lag` (see the module docstring); raises ValueError for other cursor types."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, dt.date)):
        raise ValueError(f"lag is not supported for a cursor of type {type(value).__name__}: use numbers, dates, datetimes or ISO strings")
    if isinstance(value, (int, float)):
        shifted = value - lag if last_value_func is max else value + lag
        return int(shifted) if isinstance(value, int) else shifted
    fmt = string_format(value) if isinstance(value, str) else None
    if isinstance(value, str) and fmt is None:
        raise ValueError(f"lag needs a cursor string in an ISO date or datetime format, got {value!r}")
    moment: dt.date = _parse(value, fmt) if isinstance(value, str) and fmt else value  # type: ignore[assignment]
    datetime_shape = fmt not in _DATE_FORMATS.values() if fmt else isinstance(moment, dt.datetime)
    in_days = (not datetime_shape) if date_cursor is None else date_cursor
    if in_days and datetime_shape:
        lagged: dt.date = _lag_datetime_in_days(lag, moment, last_value_func)  # type: ignore[arg-type]
    elif in_days:
        lagged = _shift(lag, moment.date() if isinstance(moment, dt.datetime) else moment, last_value_func)
    else:
        as_datetime = moment if isinstance(moment, dt.datetime) else dt.datetime.combine(moment, dt.time.min)
        lagged = _shift(lag, as_datetime, last_value_func)
    return _format(lagged, fmt) if fmt else lagged


def apply_lag(
    lag: float, initial_value: Any, last_value: Any, last_value_func: Callable[..., Any], cursor_type: type | None = None
) -> Any:
    """`last_value` lagged, but not past `initial_value` (in the order of `last_value_func`)."""
    lagged = lag_value(lag, last_value, last_value_func, _is_date_cursor(cursor_type, initial_value))
    if initial_value is not None and last_value_func((initial_value, lagged)) == initial_value:
        return initial_value
    return lagged


def lagged_last_value(
    lag: float | None, last_value_func: Callable[..., Any], initial_value: Any, end_value: Any, last_value: Any,
    resource_name: str | None = None, cursor_type: type | None = None,
) -> Any:
    """The start value of a run: the stored last value, lagged when lag applies (see the module docstring)."""
    if not lag or last_value is None:
        return last_value
    if last_value_func not in (max, min):
        logger.warning("Lag on resource %s needs last_value_func max or min; it is not applied", resource_name)
        return last_value
    if end_value is not None:
        logger.info("Lag on resource %s is not applied: end_value is set", resource_name)
        return last_value
    return apply_lag(lag, initial_value, last_value, last_value_func, cursor_type)

"""dlt's date and time helpers (`dlt.common.time`) as user code calls them: `ensure_pendulum_datetime`,
`ensure_pendulum_date`, `ensure_pendulum_time`, `parse_iso_like_datetime`, `timestamp_within`, ...

Values are coerced as dlt 1.31 coerces them: a datetime or a date as given, ISO text (and pendulum's "common"
forms such as ``2024/05/01``), a Unix timestamp as a number or as text. Where dlt reads its context timezone (UTC
unless a dlt `TimezoneContext` is active), lakeload has UTC: a naive value counts as UTC, an aware one is
converted to UTC, unless `tz` names another zone.

>>> ensure_pendulum_datetime("2024-05-01T12:00:00+02:00")
DateTime(2024, 5, 1, 10, 0, 0, tzinfo=Timezone('UTC'))
>>> ensure_pendulum_date(1714564800)
Date(2024, 5, 1)
"""

from __future__ import annotations

import datetime
from typing import overload

import pendulum

from lakeload.common.typing import TAnyDateTime, TimedeltaSeconds
from lakeload.schema.datatypes import parse_iso_like

__all__ = [
    "FUTURE_TIMESTAMP",
    "PAST_TIMESTAMP",
    "datetime_to_timestamp",
    "datetime_to_timestamp_ms",
    "ensure_date",
    "ensure_datetime",
    "ensure_datetime_in_tz",
    "ensure_pendulum_date",
    "ensure_pendulum_datetime",
    "ensure_pendulum_datetime_utc",
    "ensure_pendulum_time",
    "parse_iso_like_datetime",
    "timestamp_before",
    "timestamp_within",
    "to_py_date",
    "to_py_datetime",
    "to_seconds",
]

PAST_TIMESTAMP: float = 0.0
"""The lower bound `timestamp_within` takes for a missing one."""
FUTURE_TIMESTAMP: float = 9999999999.0
"""The upper bound `timestamp_within` and `timestamp_before` take for a missing one."""

_UTC = datetime.timezone.utc
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)


def timestamp_within(timestamp: float, min_exclusive: float | None, max_inclusive: float | None) -> bool:
    """Whether `min_exclusive < timestamp <= max_inclusive`; a missing (or zero) bound does not limit.

    >>> timestamp_within(10.0, 5.0, None), timestamp_within(5.0, 5.0, 10.0)
    (True, False)
    """
    return (min_exclusive or PAST_TIMESTAMP) < timestamp <= (max_inclusive or FUTURE_TIMESTAMP)


def timestamp_before(timestamp: float, max_inclusive: float | None) -> bool:
    """Whether `timestamp <= max_inclusive`; a missing (or zero) bound does not limit."""
    return timestamp <= (max_inclusive or FUTURE_TIMESTAMP)


def parse_iso_like_datetime(value: str) -> pendulum.DateTime | pendulum.Date | pendulum.Time:
    """ISO 8601 text (or pendulum's common forms) as a pendulum datetime, date or time; a datetime keeps its
    zone and a naive one stays naive. ValueError for anything else (durations and intervals too).

    >>> parse_iso_like_datetime("2024/05/01")
    Date(2024, 5, 1)
    """
    parsed = parse_iso_like(value)
    if isinstance(parsed, datetime.datetime):
        return _pendulum_datetime(parsed)
    if isinstance(parsed, datetime.date):
        return pendulum.Date(parsed.year, parsed.month, parsed.day)
    if isinstance(parsed, datetime.time):
        return pendulum.Time(parsed.hour, parsed.minute, parsed.second, parsed.microsecond, parsed.tzinfo,
                             fold=parsed.fold)
    raise ValueError(f"`{value}` is not an ISO 8601 date, time or datetime")


def ensure_datetime(value: TAnyDateTime) -> datetime.datetime:
    """`value` as a standard library datetime: an aware one keeps its zone, a naive one stays naive, a date is
    its midnight (naive), a Unix timestamp is aware in UTC."""
    return to_py_datetime(_moment(value))


def ensure_datetime_in_tz(value: TAnyDateTime, tz: datetime.tzinfo | None = None) -> datetime.datetime:
    """`value` as an aware standard library datetime in `tz` (UTC if None): a naive value is taken as being in
    `tz`, an aware one is converted to it (same instant)."""
    zone = tz or _UTC
    moment = ensure_datetime(value)
    if moment.tzinfo is None:
        return moment.replace(tzinfo=zone)
    return moment.astimezone(zone)


def ensure_date(value: TAnyDateTime, tz: datetime.tzinfo | None = None) -> datetime.date:
    """The calendar day `value` falls on in `tz` (UTC if None)."""
    return ensure_datetime_in_tz(value, tz).date()


def ensure_pendulum_datetime(value: TAnyDateTime, tz: datetime.tzinfo | None = None) -> pendulum.DateTime:
    """`value` as an aware `pendulum.DateTime` in `tz` (UTC if None), as `ensure_datetime_in_tz`."""
    return _pendulum_datetime(ensure_datetime_in_tz(value, tz))


def ensure_pendulum_datetime_utc(value: TAnyDateTime) -> pendulum.DateTime:
    """`value` as an aware `pendulum.DateTime` in UTC (the name dlt's documentation uses after 1.31)."""
    return ensure_pendulum_datetime(value, _UTC)


def ensure_pendulum_date(value: TAnyDateTime, tz: datetime.tzinfo | None = None) -> pendulum.Date:
    """The calendar day `value` falls on in `tz` (UTC if None), as a `pendulum.Date`."""
    day = ensure_date(value, tz)
    return pendulum.Date(day.year, day.month, day.day)


def ensure_pendulum_time(value: str | int | float | datetime.time | datetime.timedelta) -> pendulum.Time:
    """A naive `pendulum.Time`: a naive time as it is, an aware one as its UTC wall clock, ISO time text, or a
    timedelta as the time that long after midnight. (A number is refused with TypeError, as in dlt.)

    >>> ensure_pendulum_time("12:30:00+02:00"), ensure_pendulum_time(datetime.timedelta(hours=1, seconds=5))
    (Time(10, 30, 0), Time(1, 0, 5))
    """
    if isinstance(value, str):
        parsed = parse_iso_like_datetime(value)
        if not isinstance(parsed, pendulum.Time):
            raise ValueError(f"Invalid ISO time string: `{value}`")
        value = parsed
    if isinstance(value, datetime.time):
        if value.tzinfo is not None:
            on_epoch = datetime.datetime.combine(_EPOCH.date(), value).astimezone(_UTC)
            value = on_epoch.time()
        return pendulum.Time(value.hour, value.minute, value.second, value.microsecond)
    if isinstance(value, datetime.timedelta):
        seconds = value.seconds
        return pendulum.Time(seconds // 3600, seconds // 60 % 60, seconds % 60, value.microseconds)
    raise TypeError(f"Cannot coerce `{value}` to `pendulum.Time` object.")


def to_py_datetime(value: datetime.datetime) -> datetime.datetime:
    """A `pendulum.DateTime` as a standard library datetime (same fields and tzinfo); others as they are."""
    if isinstance(value, pendulum.DateTime):
        return datetime.datetime(value.year, value.month, value.day, value.hour, value.minute, value.second,
                                 value.microsecond, value.tzinfo, fold=value.fold)
    return value


def to_py_date(value: datetime.date) -> datetime.date:
    """A `pendulum.Date` as a standard library date; others as they are."""
    if isinstance(value, pendulum.Date):
        return datetime.date(value.year, value.month, value.day)
    return value


def datetime_to_timestamp(moment: datetime.datetime) -> int:
    """Whole seconds since the Unix epoch (floored); a naive `moment` counts as UTC.

    >>> datetime_to_timestamp(datetime.datetime(1970, 1, 1, 0, 1, 0, 900000))
    60
    """
    return _since_epoch(moment) // datetime.timedelta(seconds=1)


def datetime_to_timestamp_ms(moment: datetime.datetime) -> int:
    """Whole milliseconds since the Unix epoch (floored); a naive `moment` counts as UTC."""
    return _since_epoch(moment) // datetime.timedelta(milliseconds=1)


@overload
def to_seconds(td: None) -> None: ...


@overload
def to_seconds(td: TimedeltaSeconds) -> float: ...


def to_seconds(td: TimedeltaSeconds | None) -> float | None:
    """A timedelta as its seconds (float); a number or None as it is."""
    return td.total_seconds() if isinstance(td, datetime.timedelta) else td


def _since_epoch(moment: datetime.datetime) -> datetime.timedelta:
    plain = to_py_datetime(moment)  # pendulum's subtraction gives an Interval, not an exact timedelta
    return (plain if plain.tzinfo is not None else plain.replace(tzinfo=_UTC)) - _EPOCH


def _pendulum_datetime(value: datetime.datetime) -> pendulum.DateTime:
    """`value` as a pendulum DateTime with the same fields: naive stays naive, a zone becomes pendulum's."""
    if value.tzinfo is None:
        return pendulum.DateTime(value.year, value.month, value.day, value.hour, value.minute, value.second,
                                 value.microsecond, fold=value.fold)
    return pendulum.instance(value)


def _moment(value: TAnyDateTime) -> datetime.datetime:
    """`value` as a datetime (pendulum or standard library), naive or aware as it came."""
    if isinstance(value, datetime.datetime):
        return value
    if isinstance(value, datetime.date):
        return datetime.datetime(value.year, value.month, value.day)
    if isinstance(value, (int, float)):
        return pendulum.from_timestamp(value)
    if not isinstance(value, str):
        raise TypeError(f"Cannot coerce `{value}` to `pendulum.DateTime` object.")
    try:
        parsed = parse_iso_like_datetime(value)
    except ValueError as not_iso:
        try:
            seconds = float(value)
        except ValueError:
            raise not_iso from None
        return pendulum.from_timestamp(seconds)
    if isinstance(parsed, datetime.datetime):
        return parsed
    if isinstance(parsed, datetime.date):
        return datetime.datetime(parsed.year, parsed.month, parsed.day)
    raise ValueError(f"Cannot coerce `{value}` to `pendulum.DateTime` object.")

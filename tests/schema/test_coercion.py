"""Parity of lakeload.schema.coercion with dlt's value coercion and timezone normalization."""

from __future__ import annotations

import copy
import datetime
import enum
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pendulum
import pytest
from dlt.common.data_types import type_helpers as dlt_types
from dlt.common.time import normalize_timezone as dlt_normalize_timezone
from dlt.common.wei import Wei as DltWei
from hypothesis import given, settings
from hypothesis import strategies as st

from lakeload.schema import coercion
from lakeload.schema.datatypes import DATA_TYPES, Wei


class IntEnum(enum.IntEnum):
    ONE = 1


def test_can_coerce_matches_dlt() -> None:
    for to_type in DATA_TYPES:
        for from_type in DATA_TYPES:
            expected = to_type == from_type or (to_type, from_type) in dlt_types._COERCE_DISPATCH
            assert coercion.can_coerce(to_type, from_type) == expected, (to_type, from_type)


SAMPLES: dict[str, list[Any]] = {
    "text": [
        "1", " 42 ", "0x1F", "0xZZ", "-7", "1.5", "1e3", "nan", "inf", "abc", "", "true", "False", "yes", "N", " 1",
        "2024-05-01T10:00:00Z", "2024-05-01T10:00:00+02:00", "2024-05-01", "2024-05-01 23:30:00-05:00", "10:00:00",
        "10:00:00+02:00", "10:00:00Z", "1714557600", "1714557600.5", "2024/05/01 10:00", "{\"a\": [1, 2]}", "[1]",
        "null", "AAFoZWxsbw==", "AAFoZWxsbw", "0x00ff", "1_000", "٣", "P1D", "2024-W01-1", "20240501", "Infinity",
        "2024-13-01", "1E+3", "0x", "24:00",
    ],
    "bigint": [0, 1, -1, 255, 2**40, 2**64, -(2**70), 1714557600, IntEnum.ONE],
    "double": [0.0, 1.5, -2.0, 1e20, 1e-7, float("nan"), float("inf"), 1714557600.25, 3.0],
    "decimal": [Decimal("1.5"), Decimal("2"), Decimal("-3.000"), Decimal("NaN"), Decimal("Infinity"), Decimal("1E+3")],
    "wei": [Wei("10"), Wei("1.5"), Wei(2**70)],
    "bool": [True, False],
    "binary": [b"", b"\x00\x01hello", b"\xff"],
    "timestamp": [
        datetime.datetime(2024, 5, 1, 10), datetime.datetime(2024, 5, 1, 23, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
        datetime.datetime(2024, 5, 1, 1, tzinfo=ZoneInfo("Europe/Berlin")), pendulum.datetime(2024, 5, 1, tz="Asia/Tokyo"),
        datetime.datetime(2024, 5, 1, tzinfo=datetime.timezone.utc),
    ],
    "date": [datetime.date(2024, 5, 1), pendulum.date(2020, 2, 29)],
    "time": [datetime.time(10, 0, 0, 500), pendulum.time(1, 2, 3)],
    "json": [{"a": [1, {"b": None}]}, [1, "x"], {"k": "\uf026marked", "d": Decimal("1.5")}],
}  # fmt: skip


def _dlt_value(from_type: str, value: Any) -> Any:
    return DltWei(value) if from_type == "wei" else value


def _outcome(fn: Any, to_type: str, from_type: str, value: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(to_type, from_type, copy.deepcopy(value))
    except ValueError:
        return "ValueError", None
    except TypeError:
        # dlt quirk kept on purpose: e.g. text "10:" into a timestamp column raises TypeError, not ValueError
        return "TypeError", None


def _comparable(value: Any) -> Any:
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, Decimal):
        return ("Decimal", str(value))
    if isinstance(value, datetime.datetime):
        return ("datetime", value.replace(tzinfo=None), value.utcoffset(), value.tzinfo is None)
    if isinstance(value, (datetime.date, datetime.time)):
        return (type(value).__mro__[-2].__name__, value.isoformat(), isinstance(value, (pendulum.Date, pendulum.Time)))
    return (type(value).__name__, value)


@pytest.mark.parametrize("from_type", list(SAMPLES))
def test_coerce_value_matches_dlt(from_type: str) -> None:
    for to_type in DATA_TYPES:
        for value in SAMPLES[from_type]:
            ours = _outcome(coercion.coerce_value, to_type, from_type, value)
            theirs = _outcome(dlt_types.coerce_value, to_type, from_type, _dlt_value(from_type, value))
            assert ours[0] == theirs[0], (to_type, from_type, value, ours, theirs)
            if ours[0] == "ok":
                assert _comparable(ours[1]) == _comparable(theirs[1]), (to_type, from_type, value, ours, theirs)
                assert isinstance(ours[1], Wei) == isinstance(theirs[1], DltWei)


@settings(max_examples=300, deadline=None)
@given(value=st.text(st.sampled_from(list("0123456789-:T Z+./x ,eE_abf")), max_size=25))
def test_coerce_random_text_matches_dlt(value: str) -> None:
    for to_type in ("bigint", "double", "decimal", "bool", "timestamp", "date", "time", "binary", "json"):
        ours = _outcome(coercion.coerce_value, to_type, "text", value)
        theirs = _outcome(dlt_types.coerce_value, to_type, "text", value)
        assert ours[0] == theirs[0], (to_type, value, ours, theirs)
        if ours[0] == "ok":
            assert _comparable(ours[1]) == _comparable(theirs[1]), (to_type, value)


def test_coercion_examples() -> None:
    ts = coercion.normalize_timezone(coercion.coerce_value("timestamp", "text", "2024-05-01T12:00:00+02:00"), True)
    assert ts == datetime.datetime(2024, 5, 1, 10, tzinfo=datetime.timezone.utc) and ts.utcoffset() == datetime.timedelta(0)
    assert coercion.coerce_value("bigint", "text", " 0x10 ") == 16
    assert coercion.coerce_value("text", "json", {"a": Decimal("1.5")}) == '{"a":"1.5"}'
    assert coercion.coerce_value("json", "text", "5") == 5  # dlt: text into a json column is parsed as JSON
    with pytest.raises(ValueError):
        coercion.coerce_value("bigint", "double", 1.5)
    with pytest.raises(ValueError):
        coercion.coerce_value("bigint", "bool", True)  # no such coercion


TZ_VALUES = [
    datetime.datetime(2024, 5, 1, 10), datetime.datetime(2024, 5, 1, 10, tzinfo=datetime.timezone.utc),
    datetime.datetime(2024, 5, 1, 10, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
    datetime.datetime(2024, 5, 1, 10, tzinfo=ZoneInfo("UTC")), datetime.datetime(2024, 5, 1, 10, tzinfo=ZoneInfo("Etc/UTC")),
    datetime.datetime(2024, 11, 3, 1, 30, tzinfo=ZoneInfo("America/New_York"), fold=1),
    pendulum.datetime(2024, 5, 1, 10, tz="Europe/Berlin"), pendulum.datetime(2024, 5, 1, 10, tz="UTC"),
    pendulum.parse("2024-05-01T10:00:00+00:00"),
]  # fmt: skip


@pytest.mark.parametrize("timezone", [True, False])
def test_normalize_timezone_matches_dlt(timezone: bool) -> None:
    for value in TZ_VALUES:
        ours, theirs = coercion.normalize_timezone(value, timezone), dlt_normalize_timezone(value, timezone)
        assert _comparable(ours) == _comparable(theirs), value
        assert type(ours) is type(theirs), value


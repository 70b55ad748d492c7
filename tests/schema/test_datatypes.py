"""Parity of lakeload.schema.datatypes with dlt's type mapping, detection and writers."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import enum
import uuid
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import orjson
import pendulum
import pyarrow as pa
import pytest
from dlt.common.data_types import type_helpers as dlt_types
from dlt.common.json import json as dlt_json
from dlt.common.schema import detections as dlt_detections
from dlt.common.wei import Wei as DltWei
from hypothesis import given, settings
from hypothesis import strategies as st

from lakeload.schema import coercion
from lakeload.schema import datatypes as dt
from lakeload.schema.arrow_types import to_arrow_type
from lakeload.schema.datatypes import DATA_TYPES, Wei


class StrEnum(str, enum.Enum):
    A = "a"


class IntEnum(enum.IntEnum):
    ONE = 1


class PlainEnum(enum.Enum):
    X = 1


@dataclasses.dataclass
class DC:
    x: int


NT = collections.namedtuple("NT", "a b")


class MyStr(str):
    pass


class MyDict(dict):  # type: ignore[type-arg]
    pass


TYPES: list[type] = [
    str, int, float, bool, bytes, dict, list, tuple, Decimal, datetime.datetime, datetime.date, datetime.time,
    pendulum.DateTime, pendulum.Date, pendulum.Time, StrEnum, IntEnum, PlainEnum, DC, NT, MyStr, MyDict,
    np.float64, np.int64, np.bool_, np.str_, uuid.UUID, set, bytearray, type(None), datetime.timedelta,
]  # fmt: skip


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.__name__)
def test_py_type_to_data_type_matches_dlt(t: type) -> None:
    try:
        expected: Any = dlt_types.py_type_to_sc_type(t)
    except TypeError:
        expected = TypeError
    if expected is TypeError:
        with pytest.raises(TypeError):
            dt.py_type_to_data_type(t)
    else:
        assert dt.py_type_to_data_type(t) == expected
    assert dt.py_type_to_data_type(Wei) == dlt_types.py_type_to_sc_type(DltWei) == "wei"


def test_data_types_match_dlt() -> None:
    from dlt.common.data_types import DATA_TYPES as DLT_DATA_TYPES

    assert set(DATA_TYPES) == set(DLT_DATA_TYPES) and len(DATA_TYPES) == len(DLT_DATA_TYPES)


TIMESTAMP_STRINGS = [
    "2024-05-01T10:00:00Z", "2024-05-01 11:30:00", "2024-05-01", "10:00:00", "2024-13-45", "2024/05/01 10:00",
    "2024 10:00", "20240501T1000", "10:", "2024-05-01T25:00:00", "1714557600", "", " ", "2024-W01-1T10:00",
    "P1D", "2024-05-01T10:00:00+25:00", "٢٠٢٤/٠٥/٠١ 10:00", "2024-05-01T10:00:00.123456789+02:00",
    "2024-05-01T10:00", "2024-05-01T10", "2024-02-30T10:00:00", "2024", "2024/05", "2024/05/01", "2024:05:01 1:2",
    "2024-05-01T10:00:00/2024-05-02T10:00:00", "2024-05-01T10:00:00/P1D", "12:30", "1:2:3", "24:00:00",
    "2024-05-01t10:00:00z", "2024-05-01T10:00:00+0200", "2024-05-01T10:00:00 +02:00", " 2024-05-01T10:00:00",
    "2024-05-01T10:00:00,5", "2024-001", "2024-05-01T10:00:00-00:00", "0000-01-01T00:00:00", "9999-12-31 23:59:59",
    "now", "yesterday", "May 1 2024", "2024-05-01T10:00:00Z ", "+2024-05-01", "20240501", "202405011000",
]  # fmt: skip


@pytest.mark.parametrize("value", TIMESTAMP_STRINGS)
def test_iso_detections_match_dlt_hand_list(value: str) -> None:
    assert dt.is_iso_timestamp(value) == (dlt_detections.is_iso_timestamp(str, value) == "timestamp")
    assert dt.is_iso_date(value) == (dlt_detections.is_iso_date(str, value) == "date")


_DATE_PIECES = st.sampled_from(
    ["2024", "05", "1", "-", ":", "/", "T", "t", " ", "Z", "+", "02", "00", ".", ",", "123", "W", "P", "D", "30", "13", "٣"]
)


@settings(max_examples=600, deadline=None)
@given(pieces=st.lists(_DATE_PIECES, max_size=12))
def test_iso_detections_match_dlt_generated(pieces: list[str]) -> None:
    value = "".join(pieces)
    assert dt.is_iso_timestamp(value) == (dlt_detections.is_iso_timestamp(str, value) == "timestamp"), value
    assert dt.is_iso_date(value) == (dlt_detections.is_iso_date(str, value) == "date"), value


@settings(max_examples=200, deadline=None)
@given(value=st.datetimes(timezones=st.none() | st.timezones()).map(lambda d: d.isoformat()))
def test_iso_detection_of_real_datetimes(value: str) -> None:
    assert dt.is_iso_timestamp(value) == (dlt_detections.is_iso_timestamp(str, value) == "timestamp"), value


INFER_VALUES: list[Any] = [
    "2024-05-01T10:00:00Z", "2024-05-01", "plain", "", 1, 2**63, 1.5, True, b"x", {"a": 1}, [1],
    Decimal("1.5"), datetime.datetime(2024, 1, 1), datetime.date(2024, 1, 1), datetime.time(1), StrEnum.A,
    IntEnum.ONE, PlainEnum.X, pendulum.now().timestamp(), 10**40, 10**50, Wei(5),
]  # fmt: skip


@pytest.mark.parametrize("detections", [(), ("iso_timestamp",), ("iso_date", "timestamp", "large_integer", "wei_to_double")])
def test_infer_data_type_matches_dlt(detections: tuple[str, ...]) -> None:
    from dlt.common.schema.utils import autodetect_sc_type

    for value in INFER_VALUES:
        theirs_value = DltWei(value) if isinstance(value, Wei) else value
        expected = autodetect_sc_type(list(detections), type(theirs_value), theirs_value) or dlt_types.py_type_to_sc_type(
            type(theirs_value)
        )
        assert dt.infer_data_type(value, detections) == expected, value



def test_to_arrow_type_matches_dlt_filesystem() -> None:
    from dlt.common.libs.pyarrow import get_py_arrow_datatype
    from dlt.destinations import filesystem

    caps = filesystem().capabilities()
    for data_type in DATA_TYPES:
        for precision, scale in [(None, None), (0, None), (3, None), (6, None), (9, None), (10, 2), (16, None), (50, 4), (80, 10)]:
            for timezone in (True, False):
                column: dict[str, Any] = {"data_type": data_type, "timezone": timezone}
                if precision is not None:
                    column["precision"] = precision
                if scale is not None:
                    column["scale"] = scale
                try:
                    expected: Any = get_py_arrow_datatype(column, caps, "UTC")  # type: ignore[arg-type]
                except ValueError:  # e.g. decimal precision 0: invalid for arrow in both
                    expected = ValueError
                if expected is ValueError:
                    with pytest.raises(ValueError):
                        to_arrow_type(data_type, precision, scale, timezone)
                else:
                    assert to_arrow_type(data_type, precision, scale, timezone) == expected, column
    assert to_arrow_type("timestamp") == pa.timestamp("us", tz="UTC")


ROWS: list[dict[str, Any]] = [
    {"t": "héllo \"q\" \u2028 <\n>", "i": 2**63 - 1, "f": 1e-7, "g": 1e20, "n": float("nan"), "b": True, "none": None},
    {"ts": datetime.datetime(2024, 5, 1, 8, 0, 0, 123456, tzinfo=datetime.timezone.utc), "naive": datetime.datetime(2024, 5, 1)},
    {"pend": pendulum.datetime(2024, 5, 1, tz="UTC"), "pd": pendulum.date(2024, 5, 1), "pt": pendulum.time(10, 0, 0, 500)},
    {"d": datetime.date(2024, 5, 1), "tm": datetime.time(10, 0, 0, 500), "dec": Decimal("1E+3"), "w": Wei("12")},
    {"bin": b"\x00\x01hello", "u": uuid.UUID(int=5), "js": {"a": [1, {"b": Decimal("2.50")}], 1: "int key"}},
    {"e": StrEnum.A, "ie": IntEnum.ONE, "nt": NT(1, 2), "dc": DC(3)},
]  # fmt: skip


@pytest.mark.parametrize("row", ROWS)
def test_jsonl_dumps_matches_dlt_writer(row: dict[str, Any]) -> None:
    assert dt.jsonl_dumps(row) == dlt_json.dumpb(row)


def test_jsonl_file_written_by_dlt_matches_our_chain(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Load a record with dlt into a local bucket; detection + coercion + jsonl rendering must agree."""
    import dlt

    monkeypatch.setenv("NORMALIZE__DATA_WRITER__DISABLE_COMPRESSION", "true")
    record = {
        "i": 1, "f": 1e-7, "b": True, "s": "x", "ts_str": "2024-05-01T12:00:00+02:00", "ts_naive_str": "2024-05-01 11:30:00",
        "d_str": "2024-05-01", "t_str": "10:00:00", "ts": datetime.datetime(2024, 5, 1, 10, tzinfo=ZoneInfo("Europe/Berlin")),
        "naive": datetime.datetime(2024, 5, 1, 10, 0, 0, 5), "d": datetime.date(2024, 5, 1), "t": datetime.time(10, 0, 0, 500),
        "dec": Decimal("1.23456789012"), "bin": b"\x00\x01hello", "u": uuid.UUID(int=7), "js": {"a": [1, None]},
    }  # fmt: skip
    pipeline = dlt.pipeline("lakeload_dt_parity", pipelines_dir=str(tmp_path / "p"), dataset_name="ds",
                            destination=dlt.destinations.filesystem((tmp_path / "bucket").as_uri()))  # fmt: skip
    pipeline.run([dict(record)], table_name="items", columns={"js": {"data_type": "json"}}, loader_file_format="jsonl")
    [path] = list((tmp_path / "bucket" / "ds" / "items").glob("*.jsonl"))
    written = orjson.loads(path.read_bytes().splitlines()[0])
    columns = pipeline.default_schema.get_table("items")["columns"]
    for key, value in record.items():
        py_value = str(value) if isinstance(value, uuid.UUID) else value  # orjson writes UUIDs as strings at extract
        data_type = "json" if key == "js" else dt.infer_data_type(py_value)
        assert data_type == columns[key]["data_type"], key
        ours = coercion.coerce_value(data_type, dt.py_type_to_data_type(type(py_value)), py_value)
        if data_type == "timestamp":
            ours = coercion.normalize_timezone(ours, True)
        assert orjson.loads(dt.jsonl_dumps({key: ours}))[key] == written[key], key

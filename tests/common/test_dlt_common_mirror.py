"""`lakeload.common` mirrors what user code imports from `dlt.common` (and `lakeload.extract` dlt's `DltResource`,
`DltSource`): each name is importable and behaves as dlt 1.31's, run side by side as the oracle; and scripts in the
style of dlt's documentation run with `import lakeload as dlt` and load what they load with dlt."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import enum
import importlib
import io
import os
import signal
import subprocess
import sys
import threading
import time
import typing
import uuid
import zoneinfo
from decimal import Decimal
from pathlib import Path
from typing import Any

import pendulum
import pydantic
import pytest

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = Path(__file__).parent / "dlt_style_snippets"

# module -> names user code imports from dlt's module of the same path (`lakeload.` for `dlt.`)
MIRRORED: dict[str, list[str]] = {
    "common": ["Decimal", "json", "logger", "pendulum", "sleep"],
    "common.typing": [
        "AnyFun", "AnyType", "CallableAny", "DictStrAny", "DictStrOptionalStr", "DictStrStr", "NoneType", "REPattern",
        "SecretSentinel", "StrAny", "StrOrBytesPath", "StrStr", "StrStrStr", "TAny", "TAnyClass", "TAnyDateTime",
        "TColumnNames", "TDataItem", "TDataItems", "TFileOrPath", "TFun", "TLoaderFileFormat", "TSecretStrValue",
        "TSecretValue", "TSortOrder", "TTableNames", "TTimeInterval", "TimedeltaSeconds", "TypedDict",
    ],
    "common.json": [
        "DatetimeEncoder", "JsonEncoder", "JsonSerializable", "json",
    ],
    "common.pendulum": ["UTC", "FixedTimezone", "Timezone", "datetime", "pendulum", "timedelta", "timezone", "tzinfo"],
    "common.time": [
        "FUTURE_TIMESTAMP", "PAST_TIMESTAMP", "datetime_to_timestamp", "datetime_to_timestamp_ms", "ensure_date",
        "ensure_datetime", "ensure_datetime_in_tz", "ensure_pendulum_date", "ensure_pendulum_datetime",
        "ensure_pendulum_time", "parse_iso_like_datetime", "timestamp_before", "timestamp_within", "to_py_date",
        "to_py_datetime", "to_seconds",
    ],
    "common.logger": [
        "LOGGER", "critical", "debug", "error", "exception", "fatal", "info", "is_logging", "log", "log_level", "metrics",
        "pretty_format_exception", "warn", "warning",
    ],
    "common.runtime.signals": [
        "exception_for_signal", "exit_event", "intercepted_signals", "raise_if_signalled", "set_received_signal",
        "SignalReceivedException", "sleep", "wake_all", "was_signal_received",
    ],
    "common.schema": [
        "COLUMN_HINTS", "DEFAULT_SCHEMA_CONTRACT_MODE", "DataValidationError", "Schema", "TColumnHint", "TColumnSchema",
        "TSchemaContractDict", "TSchemaTables", "TStoredSchema", "TTableSchema", "TTableSchemaColumns",
    ],
    "common.schema.typing": [
        "COLUMN_HINTS", "C_DLT_ID", "C_DLT_LOAD_ID", "DEFAULT_VALIDITY_COLUMN_NAMES", "DLT_NAME_PREFIX",
        "LOADS_TABLE_NAME", "PIPELINE_STATE_TABLE_NAME", "SCHEMA_ENGINE_VERSION", "SIMPLE_REGEX_PREFIX",
        "VERSION_TABLE_NAME", "TColumnHint", "TColumnName", "TColumnNames", "TColumnSchema", "TDataType", "TFileFormat",
        "TLoaderMergeStrategy", "TLoaderReplaceStrategy", "TNormalizersConfig", "TReferenceCardinality",
        "TSchemaContract", "TSchemaContractDict", "TSchemaContractEntities", "TSchemaEvolutionMode", "TSchemaSettings",
        "TSchemaTables", "TSimpleRegex", "TStoredSchema", "TTableFormat", "TTableReference", "TTableSchema",
        "TTableSchemaColumns", "TWriteDisposition",
    ],
    "common.utils": ["map_nested_values_in_place"],
    "common.exceptions": [
        "DltException", "MissingDependencyException", "SignalReceivedException", "TerminalException",
        "TerminalValueError", "TransientException",
    ],
    "extract": ["DltResource", "DltSource"],
}
# json's functions are attributes of dlt's `json` object (`dlt.common.json.json`), not of its package
JSON_FUNCTIONS = ["dump", "dumpb", "dumps", "load", "loadb", "loads", "set_custom_encoder", "typed_dump", "typed_dumpb",
                  "typed_dumps", "typed_loadb", "typed_loads"]
# in lakeload only: the name dlt's documentation uses for `ensure_pendulum_datetime(value, UTC)` after 1.31
NEWER_THAN_DLT_1_31 = {("common.time", "ensure_pendulum_datetime_utc")}


@pytest.mark.parametrize(("module", "name"), [(m, n) for m, names in MIRRORED.items() for n in names])
def test_each_mirrored_name_is_importable_and_dlt_has_it_too(module: str, name: str) -> None:
    ours = importlib.import_module(f"lakeload.{module}")
    assert name in ours.__all__
    assert getattr(ours, name) is not None or name == "NoneType"
    assert hasattr(importlib.import_module(f"dlt.{module}"), name)


def test_every_exported_name_is_listed_here() -> None:
    """Nothing is exported that this file does not check against dlt."""
    for module, names in MIRRORED.items():
        ours = set(importlib.import_module(f"lakeload.{module}").__all__)
        extra = {n for n in ours - set(names) if (module, n) not in NEWER_THAN_DLT_1_31}
        if module == "common.json":
            extra -= set(JSON_FUNCTIONS)
        assert not extra, (module, extra)


@pytest.mark.parametrize("name", JSON_FUNCTIONS)
def test_json_object_has_dlts_functions(name: str) -> None:
    from dlt.common import json as dlt_json

    from lakeload.common import json

    assert callable(getattr(json, name)) and callable(getattr(dlt_json, name))


def test_common_package_gives_the_objects_not_the_submodules() -> None:
    """As `from dlt.common import pendulum, json`: the `pendulum` module and the `json` object, also after the
    submodules were imported by their own names."""
    import dlt.common

    import lakeload.common.json
    import lakeload.common.pendulum  # noqa: F401 - binds the submodule, which the package replaces
    from lakeload.common import Decimal, json, logger, sleep
    from lakeload.common import pendulum as common_pendulum
    from lakeload.common.json import json as json_object
    from lakeload.common.pendulum import pendulum as pendulum_module

    assert common_pendulum is pendulum is pendulum_module is dlt.common.pendulum
    assert json is json_object is lakeload.common.json
    assert Decimal is dlt.common.Decimal
    assert logger.__name__ == "lakeload.common.logger"
    assert sleep is importlib.import_module("lakeload.common.runtime.signals").sleep


def test_the_common_package_imports_nothing_more_until_a_mirrored_name_is_used() -> None:
    """`import lakeload` costs what it did: the package `lakeload.common` (which lower layers import) loads none of
    the mirror's modules nor pendulum or orjson for them."""
    code = ("import sys, lakeload; before = set(sys.modules); import lakeload.common; "
            "print(sorted(set(sys.modules) - before))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() in ("[]", "['lakeload.common']")


def test_pendulum_local_timezone_is_utc_as_dlt_sets_it() -> None:
    code = ("import pendulum; pendulum.set_local_timezone(pendulum.timezone('Asia/Tokyo')); "
            "from lakeload.common import pendulum as p; print(p.now().timezone_name, p.today().timezone_name)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.split() == ["UTC", "UTC"]


# ---------------------------------------------------------------- json


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    on: dt.date


Pair = collections.namedtuple("Pair", "a b")


class Model(pydantic.BaseModel):
    count: int = pydantic.Field(alias="Count")
    at: dt.datetime


JSON_VALUES: list[Any] = [
    {"d": Decimal("1.10"), "big": Decimal("1e30"), "neg": Decimal("-0.000001")},
    {"utc": dt.datetime(2024, 5, 1, 12, tzinfo=dt.timezone.utc), "naive": dt.datetime(2024, 5, 1, 12, 30, 1, 5)},
    {"berlin": pendulum.datetime(2024, 5, 1, 12, tz="Europe/Berlin"), "p_utc": pendulum.datetime(2024, 1, 1)},
    {"date": dt.date(2024, 1, 2), "p_date": pendulum.date(2024, 1, 2), "time": dt.time(1, 2, 3, 4),
     "p_time": pendulum.time(1, 2, 3)},
    {"uuid": uuid.UUID(int=5), "bytes": b"\x00\xffabc", "enum": Color.RED, "dataclass": Point(1, dt.date(2024, 1, 1)),
     "namedtuple": Pair(1, Decimal(2))},
    {1: "int key", "nested": [Decimal("3"), dt.date(2020, 1, 1), {"x": b"y"}]},
    {"model": Model(Count=1, at=dt.datetime(2024, 1, 1))},
    {"offset": dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=-3))),
     "zoneinfo": dt.datetime(2024, 7, 1, tzinfo=zoneinfo.ZoneInfo("America/New_York"))},
    {"pua": "\uf026not a number", "pua_dt": "\uf027garbage", "past_pua": "\uf02dx", "one": "\uf026"},
    [1, 2.5, None, True, "x", {"deep": {"deeper": [dt.time(23, 59)]}}],
]


def _both(dlt_call: Any, our_call: Any) -> tuple[Any, Any]:
    results = []
    for call in (dlt_call, our_call):
        try:
            results.append(call())
        except Exception as exc:
            results.append(type(exc))
    return results[0], results[1]


@pytest.mark.parametrize("value", JSON_VALUES)
@pytest.mark.parametrize("function", ["dumps", "dumpb", "typed_dumps", "typed_dumpb"])
@pytest.mark.parametrize("options", [{}, {"pretty": True}, {"sort_keys": True}])
def test_json_dumps_as_dlt(value: Any, function: str, options: dict[str, bool]) -> None:
    from dlt.common.json import json as dlt_json

    from lakeload.common import json

    expected, got = _both(lambda: getattr(dlt_json, function)(value, **options),
                          lambda: getattr(json, function)(value, **options))
    assert got == expected


@pytest.mark.parametrize("value", JSON_VALUES)
def test_json_typed_round_trip_as_dlt(value: Any) -> None:
    from dlt.common.json import json as dlt_json

    from lakeload.common import json

    text = dlt_json.typed_dumps(value)
    for ours, theirs in ((json.typed_loads(text), dlt_json.typed_loads(text)),
                         (json.typed_loadb(text.encode()), dlt_json.typed_loadb(text.encode()))):
        assert ours == theirs and repr(ours) == repr(theirs)  # the same types too (stdlib, as in dlt 1.31)


@pytest.mark.parametrize("value", JSON_VALUES[:4])
def test_json_dumps_options_of_dlt_1_31(value: Any) -> None:
    from dlt.common.json import json as dlt_json

    from lakeload.common import json

    assert json.dumps(value, utc_z=True) == dlt_json.dumps(value, utc_z=True)
    assert (json.dumps(value, datetime_encoder=lambda d: d.timestamp())
            == dlt_json.dumps(value, datetime_encoder=lambda d: d.timestamp()))


def test_json_files_and_text_as_dlt(tmp_path: Path) -> None:
    from dlt.common.json import json as dlt_json

    from lakeload.common import json

    value = {"a": [1, {"b": Decimal("2.5")}], "at": dt.date(2024, 5, 1)}
    ours, theirs = io.BytesIO(), io.BytesIO()
    json.dump(value, ours, pretty=True)
    dlt_json.dump(value, theirs, pretty=True)
    assert ours.getvalue() == theirs.getvalue()
    ours, theirs = io.BytesIO(), io.BytesIO()
    json.typed_dump(value, ours)
    dlt_json.typed_dump(value, theirs)
    assert ours.getvalue() == theirs.getvalue()
    path = tmp_path / "data.json"
    path.write_bytes(theirs.getvalue())
    with path.open("rb") as binary, path.open("r", encoding="utf-8") as text:
        assert json.load(binary) == json.load(text) == dlt_json.loads(path.read_text())
    assert json.loads('{"x": [1, 2.5, null]}') == dlt_json.loads('{"x": [1, 2.5, null]}')
    assert json.loadb(b'"\xc3\xa9"') == dlt_json.loadb(b'"\xc3\xa9"') == "é"
    for bad in ("{", "[1,]", "nan"):
        expected, got = _both(lambda b=bad: dlt_json.loads(b), lambda b=bad: json.loads(b))
        assert got is expected and issubclass(got, ValueError)


def test_json_refuses_and_custom_encodes_as_dlt() -> None:
    from dlt.common.json import json as dlt_json

    from lakeload.common import json

    class Money:
        def __init__(self, cents: int) -> None:
            self.cents = cents

    value = {"price": Money(150), "tags": {"set"}}
    assert _both(lambda: dlt_json.dumps(value), lambda: json.dumps(value)) == (TypeError, TypeError)

    def encoder(obj: Any) -> Any:
        if isinstance(obj, Money):
            return f"{obj.cents / 100:.2f}"
        if isinstance(obj, set):
            return sorted(obj)
        raise TypeError(obj)

    try:
        dlt_json.set_custom_encoder(encoder)
        json.set_custom_encoder(encoder)
        for function in ("dumps", "typed_dumps"):
            assert getattr(json, function)(value) == getattr(dlt_json, function)(value) == '{"price":"1.50","tags":["set"]}'
    finally:
        dlt_json.set_custom_encoder(None)
        json.set_custom_encoder(None)
    assert _both(lambda: dlt_json.dumps(value), lambda: json.dumps(value)) == (TypeError, TypeError)


# ---------------------------------------------------------------- time

TIME_INPUTS: list[Any] = [
    "2024-05-01T12:00:00+02:00", "2024-05-01T12:00:00", "2024-05-01T12:00:00Z", "2024-05-01T12:00:00.123456-07:30",
    "2024-05-01", "2024/05/01", "2024", "2024-05-01 10:00", "20240501", "2024-W18", "1714564800", "1714564800.5",
    "12:30:00", "nonsense", "P1D", "", 1714564800, 1714564800.25, 0, -86400.5, dt.date(2024, 5, 1),
    pendulum.date(2024, 5, 1), dt.datetime(2024, 5, 1, 3), dt.datetime(2024, 5, 1, 3, tzinfo=dt.timezone(dt.timedelta(hours=5))),
    pendulum.datetime(2024, 5, 1, 3, tz="Asia/Tokyo"), dt.datetime(2024, 3, 31, 2, 30, tzinfo=zoneinfo.ZoneInfo("Europe/Berlin")),
    pendulum.naive(2024, 5, 1, 23, 59), None, [1],
]
ZONES: list[Any] = [None, dt.timezone.utc, zoneinfo.ZoneInfo("Europe/Berlin"), dt.timezone(dt.timedelta(hours=-7)),
                    pendulum.timezone("Asia/Kolkata")]


def _outcome(call: Any) -> Any:
    try:
        value = call()
    except Exception as exc:
        return type(exc)
    # the same value, type and UTC offset (an instant in the same zone offset; fold aside)
    return value, type(value), value.utcoffset() if isinstance(value, (dt.datetime, dt.time)) else None


@pytest.mark.parametrize("value", TIME_INPUTS, ids=repr)
@pytest.mark.parametrize("function", ["ensure_pendulum_datetime", "ensure_pendulum_date", "ensure_date",
                                      "ensure_datetime_in_tz"])
def test_time_coercion_in_a_zone_as_dlt(value: Any, function: str) -> None:
    import dlt.common.time as dlt_time

    import lakeload.common.time as ours

    for zone in ZONES:
        assert _outcome(lambda z=zone: getattr(ours, function)(value, z)) == _outcome(
            lambda z=zone: getattr(dlt_time, function)(value, z)), zone


@pytest.mark.parametrize("value", TIME_INPUTS, ids=repr)
@pytest.mark.parametrize("function", ["ensure_datetime", "parse_iso_like_datetime", "ensure_pendulum_time"])
def test_time_parsing_as_dlt(value: Any, function: str) -> None:
    import dlt.common.time as dlt_time

    import lakeload.common.time as ours

    assert _outcome(lambda: getattr(ours, function)(value)) == _outcome(lambda: getattr(dlt_time, function)(value))


@pytest.mark.parametrize("value", TIME_INPUTS, ids=repr)
def test_ensure_pendulum_datetime_utc_is_dlts_ensure_pendulum_datetime_in_utc(value: Any) -> None:
    import dlt.common.time as dlt_time

    from lakeload.common.time import ensure_pendulum_datetime_utc

    assert _outcome(lambda: ensure_pendulum_datetime_utc(value)) == _outcome(
        lambda: dlt_time.ensure_pendulum_datetime(value, dt.timezone.utc))


def test_time_helpers_as_dlt() -> None:
    import dlt.common.time as dlt_time

    import lakeload.common.time as ours

    times: list[Any] = [dt.time(12, 30, 1, 5), dt.time(23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-2))),
                        pendulum.time(1, 2, 3), dt.timedelta(hours=25, minutes=3, microseconds=7), dt.timedelta(0), 3600]
    for value in times:
        assert _outcome(lambda v=value: ours.ensure_pendulum_time(v)) == _outcome(
            lambda v=value: dlt_time.ensure_pendulum_time(v))
    moments = [dt.datetime(1970, 1, 1, 0, 1, 0, 900000), dt.datetime(1969, 12, 31, 23, 59, 59, 999),
               pendulum.datetime(2024, 5, 1, 12, tz="Europe/Berlin"), dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)]
    for moment in moments:
        assert ours.datetime_to_timestamp(moment) == dlt_time.datetime_to_timestamp(moment)
        assert ours.datetime_to_timestamp_ms(moment) == dlt_time.datetime_to_timestamp_ms(moment)
        assert _outcome(lambda m=moment: ours.to_py_datetime(m)) == _outcome(lambda m=moment: dlt_time.to_py_datetime(m))
    for day in (pendulum.date(2024, 5, 1), dt.date(2024, 5, 1)):
        assert _outcome(lambda d=day: ours.to_py_date(d)) == _outcome(lambda d=day: dlt_time.to_py_date(d))
    for bounds in [(10.0, 5.0, None), (5.0, 5.0, 10.0), (10.0, None, 10.0), (0.0, None, None), (1e10, None, None),
                   (3.0, 0.0, 0.0)]:
        assert ours.timestamp_within(*bounds) == dlt_time.timestamp_within(*bounds)
        assert ours.timestamp_before(bounds[0], bounds[2]) == dlt_time.timestamp_before(bounds[0], bounds[2])
    for seconds in (None, 5, 2.5, dt.timedelta(minutes=2, milliseconds=5)):
        assert ours.to_seconds(seconds) == dlt_time.to_seconds(seconds)
    assert (ours.PAST_TIMESTAMP, ours.FUTURE_TIMESTAMP) == (dlt_time.PAST_TIMESTAMP, dlt_time.FUTURE_TIMESTAMP)


@pytest.mark.parametrize("make", [
    lambda: {"a": 1, "b": [2, {"c": 3}, (4, 5)], "p": Pair(6, [7])},
    lambda: [{"id": 1}, [2, 3], Pair(a=4, b=(5,)), "x"],
    lambda: (1, {"a": 2}),
    lambda: Pair(1, 2),
    lambda: {},
    lambda: 5,
    lambda: "text",
])
def test_map_nested_values_in_place_as_dlt(make: Any) -> None:
    from dlt.common.utils import map_nested_values_in_place as dlt_map

    from lakeload.common.utils import map_nested_values_in_place

    def scaled(value: Any, factor: int, suffix: str = "") -> Any:
        return f"{value}{suffix}" if isinstance(value, str) else value * factor

    ours_input, theirs_input = make(), make()
    ours = _both(lambda: dlt_map(scaled, theirs_input, 10, suffix="!"),
                 lambda: map_nested_values_in_place(scaled, ours_input, 10, suffix="!"))
    assert ours[0] == ours[1] and type(ours[0]) is type(ours[1])
    if isinstance(ours_input, (dict, list)):  # changed in place, as dlt changes its input
        assert ours[1] is ours_input and ours_input == theirs_input


# ---------------------------------------------------------------- typing and schema types


def _flat_args(alias: Any) -> set[Any]:
    """The members of a Union or Literal alias (nested ones flattened; Annotated as its type and metadata)."""
    args = typing.get_args(alias)
    if isinstance(alias, typing.NewType):  # a NewType of each library: the same when named the same
        return {f"NewType {alias.__name__}"}
    if not args:
        return {alias}
    if typing.get_origin(alias) is typing.Annotated:
        return {*_flat_args(args[0]), *(type(m).__name__ if not isinstance(m, type) else m.__name__ for m in args[1:])}
    return set().union(*(_flat_args(a) for a in args))


@pytest.mark.parametrize(("module", "name"), [
    ("common.typing", n) for n in ("TAnyDateTime", "TDataItems", "TColumnNames", "TTableNames", "TimedeltaSeconds",
                                  "TSortOrder", "TLoaderFileFormat", "TSecretStrValue", "TSecretValue")
] + [
    ("common.schema.typing", n) for n in ("TWriteDisposition", "TDataType", "TColumnHint", "TSchemaEvolutionMode",
                                         "TSchemaContractEntities", "TLoaderMergeStrategy", "TLoaderReplaceStrategy",
                                         "TTableFormat", "TFileFormat", "TReferenceCardinality")
])
def test_type_aliases_accept_what_dlts_accept(module: str, name: str) -> None:
    ours = getattr(importlib.import_module(f"lakeload.{module}"), name)
    theirs = getattr(importlib.import_module(f"dlt.{module}"), name)

    def normalized(members: set[Any]) -> set[Any]:  # typing.List[x] and list[x] are the same type
        return {typing.get_origin(m) or m if typing.get_args(m) and typing.get_origin(m) is not typing.Annotated
                else m for m in members}

    assert normalized(_flat_args(ours)) == normalized(_flat_args(theirs))


def test_typing_aliases_type_check_as_plain_types() -> None:
    import dlt.common.typing as dlt_typing

    from lakeload.common.typing import DictStrAny, StrAny, TFun, TTimeInterval

    interval = TTimeInterval(dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 2))
    assert interval == dlt_typing.TTimeInterval(*interval) and interval._fields == dlt_typing.TTimeInterval._fields
    assert typing.get_origin(DictStrAny) is dict and typing.get_args(DictStrAny) == (str, Any)
    assert typing.get_origin(StrAny) is typing.get_origin(typing.Mapping[str, Any])
    assert TFun.__bound__ is not None


def test_schema_types_and_constants_as_dlt() -> None:
    import dlt.common.schema as dlt_schema
    import dlt.common.schema.typing as dlt_typing

    import lakeload
    import lakeload.common.schema as ours
    import lakeload.common.schema.typing as ours_typing
    from lakeload.errors import DataValidationError

    assert ours.Schema is lakeload.Schema and ours.DataValidationError is DataValidationError
    assert ours.COLUMN_HINTS == dlt_schema.COLUMN_HINTS
    assert ours.DEFAULT_SCHEMA_CONTRACT_MODE == dlt_schema.DEFAULT_SCHEMA_CONTRACT_MODE
    for name in ("C_DLT_ID", "C_DLT_LOAD_ID", "DEFAULT_VALIDITY_COLUMN_NAMES", "DLT_NAME_PREFIX", "LOADS_TABLE_NAME",
                 "PIPELINE_STATE_TABLE_NAME", "SCHEMA_ENGINE_VERSION", "SIMPLE_REGEX_PREFIX", "VERSION_TABLE_NAME"):
        assert getattr(ours_typing, name) == getattr(dlt_typing, name), name
    # every key dlt's column and contract dicts take, lakeload's take too
    assert set(dlt_typing.TColumnSchema.__annotations__) <= set(ours_typing.TColumnSchema.__annotations__)
    assert set(dlt_typing.TSchemaContractDict.__annotations__) == set(ours_typing.TSchemaContractDict.__annotations__)
    written = {"name", "columns", "write_disposition", "parent", "description", "table_format", "file_format",
               "schema_contract", "references", "resource"}
    assert written <= set(dlt_typing.TTableSchema.__annotations__) & set(ours_typing.TTableSchema.__annotations__)


def test_secret_str_value_is_resolved_as_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    import lakeload
    from lakeload.common.typing import TSecretStrValue

    monkeypatch.setenv("SOURCES__API_KEY", "secret-42")

    @lakeload.source
    def api(api_key: TSecretStrValue = lakeload.secrets.value) -> Any:
        return lakeload.resource([{"suffix": api_key[-2:]}], name="rows")

    assert list(api().resources["rows"]) == [{"suffix": "42"}]


def test_extract_gives_dlts_resource_and_source_classes() -> None:
    import lakeload
    from lakeload.extract import DltResource, DltSource

    @lakeload.resource
    def rows() -> Any:
        yield {"id": 1}

    @lakeload.source
    def both() -> Any:
        return rows

    assert DltResource is lakeload.Resource and DltSource is lakeload.Source
    assert isinstance(rows(), DltResource) and isinstance(both(), DltSource)


# ---------------------------------------------------------------- logger and signals


def test_logger_logs_to_lakeload_at_the_callers_line(caplog: pytest.LogCaptureFixture) -> None:
    from lakeload.common import logger

    def fetch_page() -> None:
        logger.info("page %s", 3)
        try:
            raise ValueError("bad page")
        except ValueError:
            logger.exception("failed")

    with caplog.at_level("INFO", logger="lakeload"):
        fetch_page()
        logger.metrics("progress", {"pages": 3})
    records = [r for r in caplog.records if r.name == "lakeload"]
    assert [(r.getMessage(), r.levelname, r.funcName) for r in records[:2]] == [
        ("page 3", "INFO", "fetch_page"), ("failed", "ERROR", "fetch_page")]
    assert records[1].exc_info is not None and records[2].pages == 3  # type: ignore[attr-defined]
    assert logger.is_logging() and logger.log_level() in ("INFO", "WARNING", "NOTSET", "DEBUG")


def test_signals_sleep_and_wake_as_dlt() -> None:
    from dlt.common.runtime import signals as dlt_signals

    from lakeload.common.runtime import signals

    for module in (signals, dlt_signals):
        started = time.monotonic()
        module.sleep(0.05)
        assert time.monotonic() - started >= 0.04
        waker = threading.Timer(0.05, module.wake_all)
        waker.start()
        started = time.monotonic()
        module.sleep(10)
        assert time.monotonic() - started < 5
        waker.join()
        assert not module.was_signal_received()
        module.raise_if_signalled()  # nothing received: no error
        with pytest.raises(RuntimeError):
            module.exception_for_signal()


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals need the main thread")
def test_intercepted_signal_is_recorded_then_raised_as_dlt() -> None:
    from dlt.common.runtime import signals as dlt_signals

    from lakeload.common.runtime import signals

    before = signal.getsignal(signal.SIGTERM)
    outcomes = []
    for module in (dlt_signals, signals):
        with module.intercepted_signals():
            with module.intercepted_signals():  # nested: no change
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)  # the handler runs between bytecodes of the main thread
            received = module.was_signal_received()
            with pytest.raises(KeyboardInterrupt) as raised:
                module.raise_if_signalled()
            outcomes.append((received, raised.value.signal_code, str(raised.value)))  # type: ignore[attr-defined]
        assert not module.was_signal_received() and signal.getsignal(signal.SIGTERM) == before
    assert outcomes[0] == outcomes[1] == (True, signal.SIGTERM, f"Received `signal_code={int(signal.SIGTERM)}`")


# ---------------------------------------------------------------- scripts in the style of dlt's documentation

SNIPPET_NAMES = ["typed_pages", "json_items", "schema_hints", "polite_source", "incremental_cursor"]


def _run_snippets(folder: Path, library: str) -> dict[str, str]:
    """Every snippet run in one child process with `library` in place of `lakeload`; the RESULT line of each."""
    folder.mkdir()
    for path in SNIPPETS.glob("*.py"):
        (folder / path.name).write_text(path.read_text().replace("lakeload", library))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SNIPPETS_ROOT": str(folder / "out"), "SOURCES__API_KEY": "secret-42"}
    out = subprocess.run([sys.executable, "_run_all.py", *SNIPPET_NAMES], cwd=folder, env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    results, current = {}, ""
    for line in out.stdout.splitlines():
        if line.startswith("SNIPPET "):
            current = line.split()[1]
        elif line.startswith(("RESULT ", "FAILED ")):
            results[current] = line
    return results


@pytest.mark.slow
def test_dlt_style_snippets_load_what_dlt_loads(tmp_path: Path) -> None:
    """Type hints, pendulum, json, signals, logger and schema types from `lakeload.common` in resources, a
    transformer and a source, loaded to a local folder by a real pipeline (Spark), as dlt 1.31 loads them."""
    expected = _run_snippets(tmp_path / "dlt", "dlt")
    assert set(expected) == set(SNIPPET_NAMES) and all(v.startswith("RESULT ") for v in expected.values()), expected
    assert _run_snippets(tmp_path / "lakeload", "lakeload") == expected


def test_exceptions_are_caught_and_raised_as_in_dlt() -> None:
    from dlt.common import exceptions as theirs

    from lakeload.common import exceptions as ours
    from lakeload.errors import LakeloadError, MissingDependencyError, SchemaError

    assert ours.DltException is LakeloadError and issubclass(SchemaError, ours.DltException)
    for name in ("TerminalException", "TransientException"):
        assert not issubclass(getattr(ours, name), Exception) and not issubclass(getattr(theirs, name), Exception)
    assert issubclass(ours.TerminalValueError, ValueError) and issubclass(ours.TerminalValueError, ours.TerminalException)
    error = ours.MissingDependencyException("my source", ["a>=1", "b"], "see the docs")
    assert isinstance(error, (ImportError, MissingDependencyError)) and error.caller == "my source"
    assert error.dependencies == ["a>=1", "b"]
    for text in ("`my source`", 'pip install "a>=1"', 'pip install "b"', "see the docs"):
        assert text in str(error) and text in str(theirs.MissingDependencyException("my source", ["a>=1", "b"], "see the docs"))

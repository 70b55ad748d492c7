"""Round trip, dlt parity and errors of lakeload.schema.typed_json; executor import hygiene."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import enum
import subprocess
import sys
import uuid
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import orjson
import pendulum
import pytest
from dlt.common.json import json as dlt_json
from hypothesis import given, settings
from hypothesis import strategies as st

from lakeload.errors import ExtractError
from lakeload.schema import typed_json as tj
from lakeload.schema.datatypes import py_type_to_data_type


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    when: datetime.date


Pair = collections.namedtuple("Pair", "a b")

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), st.floats(allow_nan=False, allow_infinity=False),
    st.text(), st.text().map(lambda s: tj.TAG + s), st.text().map(lambda s: tj.TAG + "t" + s),
    st.datetimes(timezones=st.none() | st.timezones()), st.dates(), st.times(),
    st.decimals(allow_nan=False, allow_infinity=False), st.decimals(allow_nan=True), st.binary(),
)  # fmt: skip
ITEMS = st.recursive(
    SCALARS, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4), max_leaves=20
)


def _same(a: Any, b: Any) -> bool:
    """Equality that also checks types, offsets and NaN decimals."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Decimal):
        return isinstance(b, Decimal) and str(a) == str(b)
    if isinstance(a, datetime.datetime):
        # zones come back as fixed offsets (as in dlt): compare instant and rendering, not tzinfo
        same_instant = a.timestamp() == b.timestamp() if a.tzinfo else a == b
        return isinstance(b, datetime.datetime) and same_instant and a.isoformat() == b.isoformat()
    if isinstance(a, datetime.date):  # pendulum dates come back as stdlib dates, like in dlt
        return type(b) is datetime.date and a == b
    if isinstance(a, datetime.time):
        return type(b) is datetime.time and a.isoformat() == b.isoformat()
    return type(a) is type(b) and a == b


@settings(max_examples=300, deadline=None)
@given(item=ITEMS)
def test_round_trip(item: Any) -> None:
    line, tagged = tj.dumps_tracked(item)
    assert b"\n" not in line
    assert _same(item, tj.loads(line, tagged))
    if not tagged:
        assert _same(item, tj.loads(line, False))


def test_tracking_flag() -> None:
    assert tj.dumps_tracked({"a": 1, "b": ["x", {"c": 1.5}]})[1] is False
    for value in (datetime.datetime(2024, 1, 1), datetime.date(2024, 1, 1), datetime.time(1), Decimal("1"), b"x"):
        line, tagged = tj.dumps_tracked({"nested": [{"v": value}]})
        assert tagged and tj.may_have_tags(line)
        assert tj.loads(line, True) == {"nested": [{"v": value}]}
    # a user string carrying the tag character alone is not a tagged value: no flag needed
    assert tj.dumps_tracked({"s": "a" + tj.TAG})[1] is False


def test_user_strings_starting_with_tag_survive() -> None:
    item = {"a": tj.TAG + "n1.5", "b": [tj.TAG + "t2024-01-01"], "c": datetime.date(2024, 1, 1), tj.TAG + "k": 1}
    line, tagged = tj.dumps_tracked(item)
    assert tagged
    assert tj.loads(line, True) == item


@settings(max_examples=100, deadline=None)
@given(items=st.lists(ITEMS, max_size=6))
def test_a_page_is_its_items_line_by_line(items: list[Any]) -> None:
    """`dumps_page` gives exactly the lines of `dumps_tracked`, where each ends, and the page's tag flag."""
    block, ends, tagged = tj.dumps_page(items)
    one_by_one = [tj.dumps_tracked(item) for item in items]
    assert block == b"".join(line + b"\n" for line, _ in one_by_one)
    assert [block[end - 1 : end] for end in ends] == [b"\n"] * len(items) and ends[-1:] == ([len(block)] if items else [])
    assert tagged == any(flag for _, flag in one_by_one)


KEYS_OF_OTHER_TYPES = [{1: "a"}, {True: 1, None: 2}, {1.5: [1]}, {datetime.date(2024, 5, 1): 1}, {uuid.UUID(int=1): "u"}]


@pytest.mark.parametrize("odd", KEYS_OF_OTHER_TYPES)
def test_keys_of_other_types_than_str_dump_as_orjson_with_non_str_keys(odd: dict[Any, Any]) -> None:
    """Items are dumped with str keys first; a key of another type makes orjson refuse, and the item or page is
    dumped again with OPT_NON_STR_KEYS: the bytes and tag flags are those of that option alone."""
    every_key = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS
    items = [{"at": datetime.datetime(2024, 5, 1, 12)}, {"nested": [odd]}, {"x": 1}]
    block, ends, tagged = tj.dumps_page(items)
    assert block == b"".join(orjson.dumps(item, default=tj._Tagger(), option=every_key) + b"\n" for item in items)
    assert tagged and len(ends) == 3
    line, flag = tj.dumps_tracked({"k": odd})
    assert line == orjson.dumps({"k": odd}, option=every_key) and not flag
    assert tj.dumps_page([{"k": odd}]) == (line + b"\n", [len(line) + 1], False)


def test_a_page_with_a_user_tag_string_escapes_like_single_items() -> None:
    items = [{"n": Decimal("1.5")}, {"s": tj.TAG + "n2.5"}, {"plain": 1}]
    block, ends, tagged = tj.dumps_page(items)
    assert tagged and len(ends) == 3
    assert [tj.loads(line, True) for line in block.splitlines()] == items


@pytest.mark.parametrize("text", ["\U00100000", "x\U0010ffff", "\U0010fffc" + tj.TAG, tj.TAG + "n1"])
def test_strings_sharing_the_tags_lead_byte_are_checked_in_full(text: str) -> None:
    """The tag check looks for the tag's first byte, which other plane-16 characters share: those pages are
    checked for the tag itself, and a user string carrying it is still escaped."""
    items = [{"s": text}, {"at": datetime.date(2024, 5, 1)}]
    assert tj.TAG_LEAD in text.encode("utf-8")
    block, ends, tagged = tj.dumps_page(items)
    assert [tj.loads(line, True) for line in block.splitlines()] == items
    assert block == b"".join(tj.dumps_tracked(item)[0] + b"\n" for item in items) and tagged
    line, flag = tj.dumps_tracked(items[0])
    assert tj.loads(line, True) == items[0] and tj.may_have_tags(line) == (tj.TAG in text)
    assert (line == orjson.dumps(items[0])) != text.startswith(tj.TAG)  # only a string starting with the tag is escaped


def test_an_unserializable_item_in_a_page_raises_extract_error() -> None:
    with pytest.raises(ExtractError, match="builtins.set"):
        tj.dumps_page([{"ok": 1}, {"bad": {1, 2}}])


def test_decoded_types_drive_inference_like_dlt() -> None:
    """After the round trip each value infers the same dlt type as after dlt's own typed jsonl round trip."""
    item = {
        "ts": pendulum.datetime(2024, 5, 1, 10, tz="Europe/Berlin"), "ts_z": datetime.datetime(2024, 5, 1, tzinfo=ZoneInfo("UTC")),
        "naive": datetime.datetime(2024, 5, 1, 10, 0, 0, 5), "d": pendulum.date(2024, 5, 1), "t": datetime.time(10, 0, 0, 500),
        "dec": Decimal("1.23456789012"), "bin": b"\x00\x01", "u": uuid.UUID(int=3), "e": Color.RED, "p": Point(1, datetime.date(2020, 1, 2)),
        "nt": Pair(1, Decimal("2")), "k": {1: "int key", "n": float("nan")}, "big": 2**64 - 1, "s": "2024-05-01",
    }  # fmt: skip
    ours = tj.loads(tj.dumps(item), True)
    theirs = dlt_json.typed_loadb(dlt_json.typed_dumpb(item))
    assert _same(theirs, ours)
    for key in item:
        assert py_type_to_data_type(type(ours[key])) == py_type_to_data_type(type(theirs[key])), key


@pytest.mark.parametrize(
    "value, type_name",
    [(np.int64(1), "numpy.int64"), ({1, 2}, "builtins.set"), (datetime.timedelta(1), "datetime.timedelta"), (object(), "builtins.object")],
)  # fmt: skip
def test_unserializable_values_raise_extract_error(value: Any, type_name: str) -> None:
    with pytest.raises(ExtractError) as exc:
        tj.dumps({"nested": {"v": value}})
    assert type_name in str(exc.value) and "Fix:" in str(exc.value)
    with pytest.raises(TypeError):  # dlt's extract fails on the same values
        dlt_json.typed_dumpb({"nested": {"v": value}})


def test_integers_beyond_64_bits_raise_extract_error() -> None:
    for value in (2**64, -(2**63) - 1):
        with pytest.raises(ExtractError, match="64"):
            tj.dumps({"v": value})
        with pytest.raises(TypeError):
            dlt_json.typed_dumpb({"v": value})


def _record(i: int) -> dict[str, Any]:
    return {
        "id": i, "name": f"user_{i}", "email": f"user{i}@example.com", "active": i % 2 == 0, "score": i * 1.5,
        "created_at": datetime.datetime(2024, 5, 1, 10, i % 60, tzinfo=datetime.timezone.utc),
        "birthday": datetime.date(1990, 1, 1 + i % 28), "balance": Decimal("1234.56"), "tags": ["a", "b", "c"],
        "address": {"street": "Main Street 1", "city": "Berlin", "zip": "10115", "geo": {"lat": 52.52, "lng": 13.405}},
        "notes": "x" * 300, "items": [{"sku": f"SKU{j}", "qty": j, "price": 9.99} for j in range(4)],
    }  # fmt: skip


def test_a_typical_record_round_trips() -> None:
    """The ~900-byte event `bench/bench_typed_json.py` times (the speed is measured there, not asserted here)."""
    records = [_record(i) for i in range(50)]
    assert 700 <= len(tj.dumps(records[0])) <= 1100
    for record in records:
        line, tagged = tj.dumps_tracked(record)
        back = tj.loads(line, tagged)
        assert back == record and all(type(back[k]) is type(record[k]) for k in record)
        assert back == dlt_json.typed_loadb(dlt_json.typed_dumpb(record))  # what dlt's typed JSON gives back


_IMPORT_CHECK = """
import sys, types
{prelude}
import lakeload.schema.naming, lakeload.schema.datatypes, lakeload.schema.coercion, lakeload.schema.typed_json
allowed = {{'lakeload', 'lakeload.errors', 'lakeload.schema', 'lakeload.schema.naming',
           'lakeload.schema.datatypes', 'lakeload.schema.coercion', 'lakeload.schema.typed_json'}}
bad = sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j', 'dlt')
             or (m.startswith('lakeload') and m not in allowed and not m.startswith('lakeload.errors.')))
print(','.join(bad))
"""
# `lakeload/__init__.py` re-exports the whole public API, so importing any submodule runs it; stub the
# package object to measure what the executor-safe modules themselves pull in
_STUB_PACKAGE = "pkg = types.ModuleType('lakeload'); pkg.__path__ = [{path!r}]; sys.modules['lakeload'] = pkg"


def _imported(prelude: str) -> str:
    code = _IMPORT_CHECK.format(prelude=prelude)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    return result.stdout.strip()


def test_executor_modules_import_nothing_else() -> None:
    import lakeload

    assert _imported(_STUB_PACKAGE.format(path=lakeload.__path__[0])) == ""


def test_executor_modules_never_import_pyspark_even_through_package_init() -> None:
    bad = _imported("").split(",")
    assert not [m for m in bad if m.split(".")[0] in ("pyspark", "py4j", "dlt")], bad

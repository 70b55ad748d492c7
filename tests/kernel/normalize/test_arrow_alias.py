"""A field's rare type is read by pyarrow in the same parse under a renamed key, and the rows stay the Python path's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from arrow_compare import run_both

from lakeload.demo.events import generate_events
from lakeload.kernel.normalize.arrow_alias import ALIAS_BYTE, rename_rare
from lakeload.kernel.normalize.arrow_lines import LineIndex
from lakeload.kernel.normalize.arrow_read import parse_records

ALIAS = chr(ALIAS_BYTE)


def _lines(records: list[Any]) -> LineIndex:
    return LineIndex.build(bytearray(b"".join((r if isinstance(r, bytes) else orjson.dumps(r)) + b"\n" for r in records)))


def test_the_demo_events_flips_are_parsed_with_the_others() -> None:
    events = list(generate_events(3000))
    lines = _lines(events)
    parsed = parse_records(lines, set(), 600)
    assert parsed is not None and parsed.python == set()
    assert parsed.aliases == {ALIAS + "xternal_ref": "external_ref"}
    texts = [e["external_ref"] for e in events if isinstance(e.get("external_ref"), str)]
    assert parsed.table.column(ALIAS + "xternal_ref").drop_null().to_pylist() == texts
    flipped = [i for i, e in enumerate(events) if isinstance(e.get("external_ref"), str)]
    assert sorted(lines.originals) == flipped  # what the replay reads: the records as they were
    assert all(orjson.loads(lines.line(i)) == events[i] for i in flipped)


def test_rows_equal_the_python_path_with_renamed_values(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    records: list[Any] = []
    for i in range(400):
        record: dict[str, Any] = {"id": i, "ref": i * 10, "on": i % 2, "items": [{"ref": i, "q": 1}]}
        if i % 50 == 1:
            record["child"] = {"ref": f"c{i}"}  # the key elsewhere, always a string: renamed there too
        if i % 37 == 5:
            record["ref"] = f"r-{i}"  # rare string: a variant column
        if i % 53 == 7:
            record["ref"] = str(i)  # rare string that dlt coerces into the bigint column
        if i % 61 == 3:
            record["on"] = True  # rare boolean
        if i % 41 == 9:
            record["items"] = [{"ref": "x", "q": 2}]  # rare string in a child table
        records.append(record)
    records[11]["note"] = 'quoted {"ref": "not a key", "id": "x"} text'  # a key's bytes inside a string
    parsed = parse_records(_lines(records), set(), 80)
    assert parsed is not None and parsed.python == set() and set(parsed.aliases.values()) == {"ref", "on"}
    report, rows = run_both(monkeypatch, tmp_path, records, expect_fast=True)
    columns = report["tables"]["events"]["columns"]
    assert "ref__v_text" in columns and "child__ref" in columns
    assert [r["id"] for r in rows["events"]] == list(range(400))
    assert "ref__v_text" in report["tables"]["events__items"]["columns"]


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_a_rare_string_first_in_the_split(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str) -> None:
    """The string comes first: the column is text, and the usual numbers are coerced into it."""
    records = [{"a": "first"}] + [{"a": i} for i in range(200)] + [{"a": "again"}]
    run_both(monkeypatch, tmp_path, records, expect_fast=None, fmt=fmt)


def test_keys_that_are_not_renamed_leave_their_records_to_python() -> None:
    records: list[Any] = [{"n": i, "s": "x", "é": 1, "k": 1} for i in range(300)]
    records[10] = {"n": 1.5, "s": 2, "é": "u", "k": "v"}
    lines = _lines(records)
    for key, kinds in ((b"n", ("number", "number")), (b"s", ("string", "number")), ("é".encode(), ("number", "string"))):
        assert not rename_rare(lines, key, [0], kinds, 0, {})
    lines = _lines([{"\x7f": 1, "k": 1}] * 5 + [{"\x7f": 2, "k": "v"}])  # the alias is a key of the split
    assert not rename_rare(lines, b"k", [int(lines.starts[5]) + 11], ("number", "string"), 5, {})
    assert bytes(lines.data).count(b'"k"') == 6


def test_a_quote_that_does_not_open_a_key_is_never_renamed() -> None:
    line = b'{"a":1,"t":"x\\"k\\": 1","k":"s"}'
    lines = LineIndex.build(bytearray(line + b"\n"))
    inner = line.index(b'\\"k') + 1
    assert not rename_rare(lines, b"k", [inner], ("number", "string"), 0, {})
    outer = line.rindex(b'"k"')
    assert rename_rare(lines, b"k", [outer], ("number", "string"), 0, aliases := {})
    assert aliases == {ALIAS: "k"} and orjson.loads(bytes(lines.data))["t"] == 'x"k": 1'

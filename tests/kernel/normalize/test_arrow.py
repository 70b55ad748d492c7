"""The Arrow fast path of normalize gives exactly what the Python path gives (no Spark needed).

Every test normalizes one split both ways and compares reports and rows (see `arrow_compare`).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arrow_compare import canonical, make_plan, read_rows, run_both, write_lines

from lakeload.demo.events import generate_events
from lakeload.errors import NormalizeError
from lakeload.kernel.normalize import arrow as executor_arrow
from lakeload.kernel.normalize import tasks as executor_tasks
from lakeload.kernel.normalize.plan import NormalizePlan, Split
from lakeload.kernel.normalize.relational import OCCURRENCE_SHIFT, RootTableSettings
from lakeload.kernel.normalize.tasks import finalize_split, normalize_split

# ------------------------------------------------------------------------------------------ demo events


@pytest.mark.parametrize("fmt", ["parquet", "jsonl", "csv"])
def test_demo_events_with_flipped_types(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str) -> None:
    events = list(generate_events(5000))
    report, rows = run_both(monkeypatch, tmp_path, events, fmt=fmt)
    columns = report["tables"]["events"]["columns"]
    assert columns["external_ref"]["data_type"] == "bigint" and columns["external_ref__v_text"]["variant"]
    assert columns["created_at"]["data_type"] == "timestamp"
    assert report["row_counts"]["events"] == 5000 and len(rows["events"]) == 5000
    assert sum("external_ref__v_text" in r for r in rows["events"]) == 50


def test_demo_events_gzip_and_finalize(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    events = list(generate_events(1200, seed=7, start_id=40))
    report, _ = run_both(monkeypatch, tmp_path, events, suffix=".jsonl.gz")
    plan = make_plan(tmp_path / "split.jsonl.gz", tmp_path / "out1")
    plan.tables = report["tables"] | {n: t for n, t in plan.tables.items() if n not in report["tables"]}
    files = finalize_split(plan, {"split": plan.splits[0], "chunks": report["files"]})
    assert sum(f["rows"] for f in files) == sum(report["row_counts"].values())


def test_demo_events_seeded_schema_makes_variants(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    events = list(generate_events(800))
    stored = {
        "events": {"name": "events", "columns": {
            "id": {"name": "id", "data_type": "text", "nullable": True},
            "public": {"name": "public", "data_type": "bigint", "nullable": True},
            "actor__login": {"name": "actor__login", "data_type": "bigint", "nullable": True},
            "created_at": {"name": "created_at", "data_type": "text", "nullable": True},
            "external_ref": {"name": "external_ref", "data_type": "double", "nullable": True},
        }},
        "events__tags": {"name": "events__tags", "parent": "events", "columns": {
            "value": {"name": "value", "data_type": "bigint", "nullable": True},
        }},
    }
    report, _ = run_both(monkeypatch, tmp_path, events, tables=stored)
    assert "actor__login__v_text" in report["tables"]["events"]["columns"]


STORED_TYPES = {
    "d": "decimal", "w": "wei", "day": "date", "t": "time", "b": "binary", "ts": "timestamp", "j": "text", "f": "double",
}


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_stored_columns_of_every_type(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str) -> None:
    columns = {n: {"name": n, "data_type": t, "nullable": True} for n, t in STORED_TYPES.items()}
    stored = {"events": {"name": "events", "columns": columns}}
    usual = {"d": "1.5", "w": "0x10", "day": "2024-05-01", "t": "10:00:00", "b": "aGVsbG8=", "ts": 1714557600, "j": 7, "f": 3}
    odd = [{"d": "x", "w": "big", "day": "2024-05-01T23:00:00+02:00", "t": "nope", "b": "!!", "ts": 1.5, "j": 8, "f": 2.5},
           {"d": 2, "w": 10, "day": 1714557600, "j": True, "f": "2.5"}, {"f": "nan?", "ts": "2024-05-01"}]
    records = [usual] * 30 + odd + [usual] * 30
    run_both(monkeypatch, tmp_path, records, tables=stored, fmt=fmt, expect_fast=fmt == "parquet")


def test_all_detections(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    records = [{"at": 1714557600, "big": 2**62, "day": "2024-05-01", "ts": "2024-05-01T10:00:00Z", "n": 5}] * 20
    records += [{"at": 1714557601.5, "big": 5, "day": "x", "ts": "later", "n": 2**62}] + records
    detections = ("iso_timestamp", "timestamp", "iso_date", "large_integer")
    report, _ = run_both(monkeypatch, tmp_path, records, detections=detections)
    assert report["tables"]["events"]["columns"]["at"]["data_type"] == "timestamp"
    assert report["tables"]["events"]["columns"]["day"]["data_type"] == "date"


def test_hints_on_user_columns(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    hints = {"not_null": ["re:^must$"], "partition": ["re:^day$"]}
    records = [{"must": i, "day": "d", "other": None if i % 3 else i} for i in range(30)]
    report, _ = run_both(monkeypatch, tmp_path, records, hints=hints)
    assert report["tables"]["events"]["columns"]["must"]["nullable"] is False
    assert report["tables"]["events"]["columns"]["day"]["partition"] is True
    run_both(monkeypatch, tmp_path / "nulls", records + [{"must": None}] + records, hints=hints)  # both fail alike


def test_timezone_hint_takes_the_python_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    stored = {"events": {"name": "events", "columns": {"ts": {"name": "ts", "data_type": "timestamp", "timezone": False}}}}
    run_both(monkeypatch, tmp_path, [{"ts": "2024-05-01T10:00:00+02:00"}] * 5, tables=stored, expect_fast=False)


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_merge_and_upsert_root_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str) -> None:
    events = list(generate_events(600))
    roots = {"events": RootTableSettings(row_id="key_hash", primary_key=("id",), propagate_root_key=True, occurrence=True)}
    _, rows = run_both(monkeypatch, tmp_path, events, roots=roots, fmt=fmt)
    assert rows["events__tags"][0]["_dlt_root_id"] in {r["_dlt_id"] for r in rows["events"]}
    assert rows["events"][5]["_lakeload_seq"] == (3 << OCCURRENCE_SHIFT) + 5
    roots = {"events": RootTableSettings(propagate_root_key=True)}
    run_both(monkeypatch, tmp_path / "merge", events, roots=roots, fmt=fmt)


def test_key_hash_ids_equal_the_python_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    records = [{"id": i, "name": f"n{i}", "items": [{"k": i}, {"k": i + 1}]} for i in range(50)]
    roots = {"events": RootTableSettings(row_id="key_hash", primary_key=("id", "name"), propagate_root_key=True)}
    _, fast_rows = run_both(monkeypatch, tmp_path, records, roots=roots)
    monkeypatch.setenv(executor_arrow.SWITCH, "0")
    plan = make_plan(tmp_path / "split.jsonl", tmp_path / "again", roots=roots)
    python_rows = read_rows(plan, normalize_split(plan, plan.splits[0]))
    assert python_rows == fast_rows  # deterministic ids: identical rows


# ------------------------------------------------------------------------------------------ edge cases

EDGE_CASES: dict[str, list[Any]] = {
    "odd_keys": [{"+1": 1, "a b": {"C d": 2, "": 3, "-": 4}, "Café": "x", "snake__double": 5, "camelCase": True}] * 3,
    "empty_keys": [{"a": {"": 3, " ": 4}}],
    "nested_lists": [{"m": [[1, 2], [3], []], "e": [], "l": [{"x": [{"y": 1}, {"y": 2}]}, {"x": []}]}, {"m": [[4]]}],
    "scalar_lists": [{"t": ["a", "b"]}, {"t": []}, {"t": ["c"]}, {"u": [1.5, 2]}],
    "late_columns": [{"id": i, **({"late": i} if i > 30 else {}), **({"rare": {"x": "y"}} if i == 37 else {})} for i in range(40)],
    "type_conflicts": [{"a": 1, "b": "x", "c": 1.5, "d": True}, {"a": "two", "b": 2, "c": 3, "d": "no"},
                       {"a": 3.5, "b": True, "c": "z", "d": 0}, {"a": {"n": 1}, "b": [1]}, {"a": 7, "b": "q"}],
    "timestamps": [{"ts": "2024-05-01T10:00:00Z", "d": "2024-05-01"}, {"ts": "2024-05-01 11:00:00", "d": "x"},
                   {"ts": "2024-05-01T12:00:00.5+02:00"}, {"ts": "hello"}, {"ts": 1714557600}, {"ts": "2024-02-30T00:00:00Z"}],
    "nulls": [{"a": None, "b": {"c": None}, "l": None}, {"a": 1, "b": {"c": 2}, "l": [1]}, {"a": None, "x": None},
              {"b": None, "n": [{"q": None}, {"q": 1}]}],
    "null_list_elements": [{"l": [None, {"a": 1}]}, {"l": [{"a": 2}, None]}, {"s": [1, None]}, {"s": [None]}] + [{"l": [{"a": 3}]}] * 5,
    "not_objects": [{"a": 1}, 5, "x", [1, 2], {"a": 2}],
    "collisions": [{"a b": 1, "a_b": 2}, {"a b": 3}],
    "dlt_columns": [{"_dlt_id": "mine", "a": 1}],
    "empty_structs": [{"a": {}, "b": 1}, {"a": {"x": 1}}, {"a": None}],
    "floats_that_look_like_ints": [{"f": 1.0, "g": 2}, {"f": 2.5, "g": 3.0}, {"f": 3, "g": 4.5}],
    "big_numbers": [{"n": 2**62}, {"n": 2**63 + 5}, {"x": 1e300}],
    "bools_and_ints": [{"b": True, "i": 1}, {"b": 1, "i": True}, {"b": "yes", "i": "0x10"}],
    "deep": [{"a": {"b": {"c": {"d": [{"e": {"f": [[{"g": 1}]]}}]}}}}] * 2,
    "unicode": [{"ключ": "значение", "emoji😀": "🎉", "text": "line\nbreak \"quoted\" null, [null]"}] * 2,
    "malformed_utf8": [{"a": 1}] * 5 + [b'{"a":"\xff\xfe"}'],
    "malformed_bom": [{"a": 1}] * 5 + [b'\xef\xbb\xbf{"a":2}'],
    "malformed_two_documents": [{"a": 1}] * 5 + [b'{"a":2} {"b":3}'],
    "malformed_nan": [{"a": 1.5}] * 5 + [b'{"a":NaN}'],
    "malformed_leading_zero": [{"a": 1}] * 5 + [b'{"a":01}'],
    "malformed_surrogate": [{"a": "x"}] * 5 + [b'{"a":"\\ud800"}'],
    "nulls_in_strings": [{"t": "a null", "u": "x:null", "v": ",null", "w": "[null"}, {"t": "null"}],
}


COERCED_CASES = {"type_conflicts", "timestamps", "bools_and_ints"}  # dlt's relational rows hold them uncoerced


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_edge_cases(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, case: str, fmt: str) -> None:
    """Against dlt's relational rows too (arrow_compare.structure); every value as well where none is coerced."""
    values = case not in COERCED_CASES
    run_both(monkeypatch, tmp_path, EDGE_CASES[case], expect_fast=None, fmt=fmt, values_from_dlt=values)


@pytest.mark.parametrize("case", ["odd_keys", "nested_lists", "scalar_lists", "late_columns", "timestamps", "nulls", "deep"])
def test_edge_cases_take_the_fast_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, case: str) -> None:
    run_both(monkeypatch, tmp_path, EDGE_CASES[case], expect_fast=True)


def test_rare_conflicting_records_stay_in_python_and_keep_their_place(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rng = random.Random(5)
    records: list[Any] = []
    for i in range(600):
        record: dict[str, Any] = {"id": i, "meta": {"k": f"v{i}", "n": i % 7}, "items": [{"q": i, "w": "x"}] * (i % 3), "s": ["a"] * (i % 2)}
        odd = rng.random()
        if odd < 0.01:
            record["meta"] = "flat"  # dict vs scalar
        elif odd < 0.02:
            record["id"] = f"id-{i}"  # number vs string
        elif odd < 0.03:
            record["items"] = [None, {"q": 1}]  # a null list element
        elif odd < 0.04:
            record["s"] = "not a list"
        elif odd < 0.05:
            record = [i]  # not an object
        records.append(record)
    report, rows = run_both(monkeypatch, tmp_path, records)
    assert "meta" in report["tables"]["events"]["columns"] and "id__v_text" in report["tables"]["events"]["columns"]
    expected = [r["id"] if isinstance(r, dict) else None for r in records]
    assert [r.get("id", r.get("id__v_text")) for r in rows["events"]] == expected  # Python records in place


def test_nesting_limit_takes_the_python_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    records = [{"a": {"b": {"c": 1}}, "l": [{"m": [1]}]}] * 3
    run_both(monkeypatch, tmp_path, records, expect_fast=False, roots={"events": RootTableSettings(max_nesting=2)})


def _source_splits(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, records: list[Any], add_file_name: bool = False
) -> tuple[Iterator[tuple[str, NormalizePlan]], list[Any]]:
    """Plans of a user file's split (a file source's, read in place) for the Python path ("0"), then the fast
    path ("1"); and the fast path's results (None: it stepped aside), filled as the plans are normalized."""
    from fsspec.implementations.local import LocalFileSystem

    from lakeload.kernel.normalize.split_io import SourceFile, file_version

    path = write_lines(tmp_path / "user.jsonl", records)
    info = LocalFileSystem().info(str(path))
    source = SourceFile(url="file:///data/user.jsonl", path=str(path), size=int(info["size"]), version=file_version(info),
                        add_file_name=add_file_name, bucket_url=f"file://{tmp_path}")
    ran: list[Any] = []
    original = executor_arrow.normalize_arrow
    monkeypatch.setattr(executor_arrow, "normalize_arrow", lambda *a: ran.append(original(*a)) or ran[-1])

    def plans() -> Iterator[tuple[str, NormalizePlan]]:
        for mode in ("0", "1"):
            monkeypatch.setenv(executor_arrow.SWITCH, mode)
            plan = make_plan(path, tmp_path / f"o{mode}")
            plan.splits = [Split(0, str(path), "events", source=source)]
            yield mode, plan

    return plans(), ran


def test_source_file_split_with_file_name(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    plans, ran = _source_splits(monkeypatch, tmp_path, list(generate_events(300)), add_file_name=True)
    results = {}
    for mode, plan in plans:
        report = normalize_split(plan, plan.splits[0])
        results[mode] = (report["added"], report["tables"], canonical(read_rows(plan, report)))
    assert results["0"] == results["1"] and ran and isinstance(ran[-1], dict)
    assert results["1"][2]["events"][0]["_file_name"] == "file:///data/user.jsonl"


def test_invalid_utf8_in_a_source_file_is_refused_by_both_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A user's file is checked for UTF-8 after pyarrow's parse (which does not check it); the package files
    extract writes are not: orjson writes only valid UTF-8."""
    plans, ran = _source_splits(monkeypatch, tmp_path, [{"a": "x"}] * 5 + [b'{"a":"\xff\xfe"}'])
    for _, plan in plans:
        with pytest.raises(NormalizeError, match="line 6"):
            normalize_split(plan, plan.splits[0])
    assert len(ran) == 1 and isinstance(ran[0], str)  # the fast path stepped aside, saying why


def test_blank_lines_crlf_and_leading_blanks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    body = [b'{"a":%d,"b":[%d]}\r' % (i, i) for i in range(40)]
    lines = [*body, b"\r", b"  ", b"\x0c", b'  {"a":2,"b":[1]}', b"", b'{"a":"x"}', *body, b'{"a":3}']
    _, rows = run_both(monkeypatch, tmp_path, lines)
    assert len(rows["events"]) == 83


def test_switch_and_eligibility(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(executor_arrow.SWITCH, "0")
    assert not executor_arrow.enabled()
    monkeypatch.setenv(executor_arrow.SWITCH, "1")
    assert executor_arrow.enabled() and executor_arrow.plain_json(Split(0, "x", "t"))
    assert not executor_arrow.plain_json(Split(0, "x", "t", may_have_tags=True))
    assert not executor_arrow.plain_json(Split(0, "x", "t", file_format="parquet"))
    assert executor_tasks.normalize_split is normalize_split

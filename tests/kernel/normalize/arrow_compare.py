"""Helpers of the Arrow fast path tests: normalize one split both ways and compare (no Spark needed).

`run_both` normalizes the same split with `LAKELOAD_ARROW_NORMALIZE=0` (Python path) and with the fast
path, and compares the reports and the rows of every table in order. Random root `_dlt_id`s differ
between runs, so ids are compared by structure: each id becomes the position of its row.

Both paths are lakeload's, so both could be wrong together: for records with the default settings (no stored
tables, hints, detections or root settings) the rows are also compared with an independent oracle, dlt 1.31's
relational normalizer, see `dlt_rows` (`ORACLE_RUNS` counts the comparisons made). dlt's relational rows are not
coerced yet (dlt 1.31 coerces inside its JSONL items normalizer), so what is compared is the relational result
(`structure`): the tables, every row's columns (a variant column `x__v_text` as `x`), `_dlt_list_idx`,
`_dlt_load_id` and which row each id names; the values are compared with dlt's only in `comparable`'s form where no
coercion takes place (`values_from_dlt=True`: `test_executor_arrow.py::test_edge_cases` but its COERCED_CASES).
"""

from __future__ import annotations

import copy
import gzip
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from lakeload.kernel.normalize import arrow as executor_arrow
from lakeload.kernel.normalize.plan import NormalizePlan, Split
from lakeload.kernel.normalize.relational import NormalizerSettings, RootTableSettings, nested_row_id
from lakeload.kernel.normalize.tasks import conform, normalize_split
from lakeload.kernel.normalize.writers import arrow_schema, complete_columns, read_staged
from lakeload.schema.naming import SnakeCaseNaming
from lakeload.schema.schema import Schema

ID_COLUMNS = ("_dlt_id", "_dlt_parent_id", "_dlt_root_id")
ORACLE_RUNS: list[int] = []  # one entry per run_both call compared with dlt's rows
LOAD_ID = "1715.5"


def write_lines(path: Path, records: list[Any]) -> Path:
    data = b"".join((r if isinstance(r, bytes) else orjson.dumps(r)) + b"\n" for r in records)  # bytes: a raw line
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


def make_plan(
    path: Path, out: Path, fmt: str = "parquet", root: str = "events", tables: dict[str, Any] | None = None,
    roots: dict[str, RootTableSettings] | None = None, split_index: int = 3,
    detections: tuple[str, ...] | None = None, hints: dict[str, list[str]] | None = None,
) -> NormalizePlan:
    schema = Schema("s")
    if detections is not None:
        schema.settings["detections"] = list(detections)
    for hint, patterns in (hints or {}).items():
        schema.settings["default_hints"].setdefault(hint, []).extend(patterns)
    if tables:
        for table in tables.values():
            schema.update_table(copy.deepcopy(table))
    naming = SnakeCaseNaming()
    settings = NormalizerSettings(load_id=LOAD_ID, naming=naming, roots=roots or {root: RootTableSettings()})
    return NormalizePlan(
        load_id=LOAD_ID, naming=naming, tables=copy.deepcopy(schema.tables), detections=tuple(schema.settings["detections"]),
        default_hints=schema.settings["default_hints"], normalizer=settings, splits=[Split(split_index, str(path), root)],
        file_format=fmt, compressed=fmt != "parquet", output_dir=str(out),
    )


def read_rows(plan: NormalizePlan, report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Rows per table as written (jsonl files, or Arrow chunks and draft Parquet files conformed to the split's schema)."""
    tables: dict[str, list[dict[str, Any]]] = {}
    for f in report["files"]:
        if f.get("chunk") or f.get("draft"):
            schema = arrow_schema(complete_columns(report["tables"][f["table"]]))
            rows = conform(read_staged(f["path"]), schema).to_pylist()
            rows = [{k: v for k, v in r.items() if v is not None} for r in rows]
        else:
            opener: Any = gzip.open if f["path"].endswith(".gz") else open
            with opener(f["path"], "rb") as stream:
                rows = [orjson.loads(line) for line in stream if line.strip()]
        tables.setdefault(f["table"], []).extend(rows)
    return tables


def canonical(tables: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Rows with every id replaced by (table, position) of the row it names."""
    position = {}
    for name, rows in tables.items():
        for i, row in enumerate(rows):
            position[row["_dlt_id"]] = (name, i)
    return {
        name: [{k: position[v] if k in ID_COLUMNS else v for k, v in row.items()} for row in rows]
        for name, rows in tables.items()
    }


def check_child_ids(tables: dict[str, list[dict[str, Any]]]) -> None:
    for name, rows in tables.items():
        for row in rows:
            if "_dlt_parent_id" in row:
                assert row["_dlt_id"] == nested_row_id(row["_dlt_parent_id"], name, row["_dlt_list_idx"])


def run_both(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, records: list[Any], expect_fast: bool | None = True,
    suffix: str = ".jsonl", values_from_dlt: bool = False, **plan_args: Any,
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """Normalize `records` both ways; assert equal results; return the fast path's report and rows.

    Under default settings the relational result is also compared with dlt's (`structure`), and with
    `values_from_dlt` (records whose values need no coercion) every value too (`comparable`)."""
    source = write_lines(tmp_path / f"split{suffix}", records)
    fast_results: list[Any] = []
    original = executor_arrow.normalize_arrow

    def spy(*args: Any, **kwargs: Any) -> Any:
        fast_results.append(original(*args, **kwargs))
        return fast_results[-1]

    monkeypatch.setattr(executor_arrow, "normalize_arrow", spy)
    outcome = {}
    errors: dict[str, type] = {}
    for mode in ("0", "1"):
        monkeypatch.setenv(executor_arrow.SWITCH, mode)
        plan = make_plan(source, tmp_path / f"out{mode}", **plan_args)
        try:
            report = normalize_split(plan, plan.splits[0])
        except Exception as exc:  # the Python path fails: so must the fast path (by falling back)
            errors[mode] = type(exc)
            continue
        outcome[mode] = (plan, report, read_rows(plan, report))
    if errors:
        assert errors.get("0") is not None and errors.get("0") == errors.get("1"), errors
        assert isinstance(fast_results[-1], str)  # the reason the row path took the split
        return {}, {}
    if expect_fast is not None:
        assert isinstance(fast_results[-1], dict) is expect_fast, "fast path ran" if not expect_fast else "fast path fell back"
    (_, python, python_rows), (plan, fast, fast_rows) = outcome["0"], outcome["1"]
    for key in ("collisions", "split", "new_tables", "added", "row_counts", "null_only", "tables"):
        assert fast[key] == python[key], key
    for name in python["tables"]:
        if name in fast["tables"]:
            assert list(fast["tables"][name]["columns"]) == list(python["tables"][name]["columns"]), name
    assert sorted(fast_rows) == sorted(python_rows)
    assert canonical(fast_rows) == canonical(python_rows)
    check_child_ids(fast_rows)
    if _oracle_applies(records, plan_args):
        expected = dlt_rows(records, plan_args.get("root", "events"))
        assert structure(fast_rows) == structure(expected)
        if values_from_dlt:
            assert comparable(fast_rows) == comparable(expected)
        ORACLE_RUNS.append(1)
    return fast, fast_rows


def _oracle_applies(records: list[Any], plan_args: dict[str, Any]) -> bool:
    """dlt's rows are the expected value when the split is plain records under default settings."""
    custom = ("tables", "roots", "detections", "hints")
    return all(isinstance(r, dict) for r in records) and not any(plan_args.get(k) for k in custom)


def dlt_rows(records: list[dict[str, Any]], root: str) -> dict[str, list[dict[str, Any]]]:
    """Rows per table that dlt 1.31's relational normalizer makes of `records` (read back from its typed JSON, as
    its normalize does): tables, flattened columns, `_dlt_list_idx`, ids, before type coercion."""
    import dlt
    from dlt.common.json import json as dlt_json

    schema = dlt.Schema("oracle")
    normalizer = schema.data_item_normalizer
    tables: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        item = dlt_json.loadb(dlt_json.typed_dumpb(record))
        for (table, _, _), row in normalizer.normalize_data_item(item, LOAD_ID, root):
            tables.setdefault(table, []).append(row)
    return tables


def _value(value: Any) -> Any:
    """A value as both writers' rows can be compared: instants in UTC ISO form, decimals and dates as text."""
    import datetime as dt
    from decimal import Decimal

    if isinstance(value, dt.datetime):
        value = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc).isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {k: _value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_value(v) for v in value]
    if isinstance(value, str) and len(value) >= 19 and value[4:5] == "-" and value[10:11] in ("T", " "):
        try:  # an instant written as text (jsonl)
            return _value(dt.datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            return value
    return value


def structure(tables: dict[str, list[dict[str, Any]]]) -> dict[str, list[tuple[Any, ...]]]:
    """Per table and row: its columns (variants under their column's name), list index, load id and ids by position."""
    kept = (*ID_COLUMNS, "_dlt_list_idx", "_dlt_load_id")
    return {
        name: [(sorted({re.sub(r"__v_[a-z]+$", "", k) for k, v in row.items() if v is not None}),
                [(k, row.get(k)) for k in kept]) for row in rows]
        for name, rows in canonical(tables).items()
    }


def comparable(tables: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """`canonical` rows without nulls, values in one form (see `_value`), a variant column under its column's name."""
    return {
        name: [{re.sub(r"__v_[a-z]+$", "", k): _value(v) for k, v in row.items() if v is not None} for row in rows]
        for name, rows in canonical(tables).items()
    }

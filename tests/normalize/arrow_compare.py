"""Helpers of the Arrow fast path tests: normalize one split both ways and compare (no Spark needed).

`run_both` normalizes the same split with `LAKELOAD_ARROW_NORMALIZE=0` (Python path) and with the fast
path, and compares the reports and the rows of every table in order. Random root `_dlt_id`s differ
between runs, so ids are compared by structure: each id becomes the position of its row.
"""

from __future__ import annotations

import copy
import gzip
from pathlib import Path
from typing import Any

import orjson
import pytest

from lakeload.normalize import executor_arrow
from lakeload.normalize.executor_relational import NormalizerSettings, RootTableSettings, nested_row_id
from lakeload.normalize.executor_tasks import NormalizePlan, Split, conform, normalize_split
from lakeload.normalize.executor_writers import arrow_schema, complete_columns, read_staged
from lakeload.schema.naming import SnakeCaseNaming
from lakeload.schema.schema import Schema

ID_COLUMNS = ("_dlt_id", "_dlt_parent_id", "_dlt_root_id")


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
    settings = NormalizerSettings(load_id="1715.5", naming=naming, roots=roots or {root: RootTableSettings()})
    return NormalizePlan(
        load_id="1715.5", naming=naming, tables=copy.deepcopy(schema.tables), detections=tuple(schema.settings["detections"]),
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
    suffix: str = ".jsonl", **plan_args: Any,
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """Normalize `records` both ways; assert equal results; return the fast path's report and rows."""
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
        assert fast_results[-1] is None
        return {}, {}
    if expect_fast is not None:
        assert (fast_results[-1] is not None) is expect_fast, "fast path ran" if not expect_fast else "fast path fell back"
    (_, python, python_rows), (plan, fast, fast_rows) = outcome["0"], outcome["1"]
    for key in ("collisions", "split", "new_tables", "added", "row_counts", "null_only", "tables"):
        assert fast[key] == python[key], key
    for name in python["tables"]:
        if name in fast["tables"]:
            assert list(fast["tables"][name]["columns"]) == list(python["tables"][name]["columns"]), name
    assert sorted(fast_rows) == sorted(python_rows)
    assert canonical(fast_rows) == canonical(python_rows)
    check_child_ids(fast_rows)
    return fast, fast_rows

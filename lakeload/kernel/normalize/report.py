"""Executor-safe: `SplitReport`, what every normalizer returns for one split (records and JSONL pages on the row
path or the Arrow path, Arrow items, Spark DataFrames), and the one function that builds it. The driver folds
the reports in split order (`lakeload.normalize.fold`); from executors they arrive as JSON, the same shape.

>>> report = split_report(3, new_tables=["users"], added={"users": ["id"]}, tables={}, row_counts={"users": 2})
>>> report["split"], report["null_only"], report["violation"], report["files"]
(3, {}, None, [])
"""

from __future__ import annotations

from typing import TypedDict

from lakeload.kernel.contracts import TPackageFile
from lakeload.kernel.normalize.contract import Violation
from lakeload.schema.typing import TTable


class _SplitReport(TypedDict):
    split: int  # the split's index in the package
    new_tables: list[str]  # tables this split created, in order
    added: dict[str, list[str]]  # table -> columns added or completed, in order
    tables: dict[str, TTable]  # the touched tables' schemas (dlt's table dicts) as this split left them
    row_counts: dict[str, int]
    null_only: dict[str, list[str]]  # table -> columns seen with nulls only
    collisions: dict[str, dict[str, list[str]]]  # table -> column -> the record keys that normalize to it
    violation: Violation | None  # a schema contract's violation (the driver raises it or normalizes again)
    discarded_rows: int  # rows a contract discarded
    files: list[TPackageFile]  # the files written (final, drafts or Arrow chunks)


class SplitReport(_SplitReport, total=False):
    row_path: str  # why the Arrow path left this plain JSON split to the row path


def split_report(
    split: int, *, new_tables: list[str], added: dict[str, list[str]], tables: dict[str, TTable],
    row_counts: dict[str, int], null_only: dict[str, list[str]] | None = None,
    collisions: dict[str, dict[str, list[str]]] | None = None, violation: Violation | None = None,
    discarded_rows: int = 0, files: list[TPackageFile] | None = None,
) -> SplitReport:
    """The report of one split (see `SplitReport`)."""
    return SplitReport(
        split=split, new_tables=new_tables, added=added, tables=tables, row_counts=row_counts,
        null_only=null_only or {}, collisions=collisions or {}, violation=violation, discarded_rows=discarded_rows,
        files=files or [],
    )

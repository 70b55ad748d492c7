"""Executor-safe: the normalize tasks over one split (one extracted file) of a load package.

- `normalize_split` (pass 1) parses the split once: it runs dlt's sequential schema inference from the
  stored schema and writes the coerced rows: jsonl straight into final files, parquet/csv as Arrow
  IPC chunks in the split's own column set. It returns its schema additions, in order, and its files.
  Plain JSON lines (no typed-JSON tags) take the vectorized pyarrow path of `kernel.normalize.arrow` first,
  which gives the same result or steps aside (`LAKELOAD_ARROW_NORMALIZE=0` turns it off).
- `finalize_split` (pass 2) turns a split's Arrow chunks into final parquet/csv files with the final
  table schema (columns in final order, nulls for columns the split never saw): Arrow work only. The
  vectorized path writes Parquet tables straight into final files (drafts, see `kernel.normalize.arrow`): the
  driver keeps those whose columns and types are the table's final ones, and only the others come here.
- A split whose first guesses disagreed with the folded schema (rare) runs pass 1 again, seeded with the
  schema of the splits before it, so the result is exactly that of one sequential normalizer.

All run inside Spark executors (see `lakeload.kernel.spark.runner`), import no driver-side
lakeload module and never send table rows back to the driver.
"""

from __future__ import annotations

import copy
import gzip
import os
import uuid
from collections.abc import Iterator
from typing import Any, Protocol, TypedDict

import pyarrow as pa
import pyarrow.parquet as pq

import lakeload.kernel.spark.working as wio
from lakeload.errors import NormalizeError
from lakeload.kernel.contracts import TPackageFile
from lakeload.kernel.filesystem.safe_paths import check_table_name
from lakeload.kernel.normalize import arrow as executor_arrow
from lakeload.kernel.normalize.arrow_items import normalize_arrow_items
from lakeload.kernel.normalize.coerce import RowCoercer
from lakeload.kernel.normalize.contract import ContractChecker, ContractViolation, Violation
from lakeload.kernel.normalize.plan import NormalizePlan, Split
from lakeload.kernel.normalize.relational import OCCURRENCE_SHIFT, NormalizedRow, RelationalNormalizer
from lakeload.kernel.normalize.report import SplitReport, split_report
from lakeload.kernel.normalize.split_io import SourceFile, iter_split_lines, read_split_bytes
from lakeload.kernel.normalize.writers import (
    ArrowChunkWriter,
    TableFileWriter,
    arrow_schema,
    complete_columns,
    file_extension,
    of_split,
    read_staged,
)
from lakeload.schema import typed_json
from lakeload.schema.typing import TTable

CONTRACT_ROWS = "a schema contract: rows are checked one by one"
Writers = dict[str, TableFileWriter | ArrowChunkWriter]  # table -> the writer of its rows in this split


class FinalizeJob(TypedDict):
    """One `finalize_split` task: a split and its staged files (Arrow chunks, draft files) to rewrite."""

    split: Split
    chunks: list[TPackageFile]


def read_records(split: Split) -> Iterator[Any]:
    """The items of a split, in order, with their original Python types."""
    if split.file_format == "parquet":
        with wio.open_input(split.path) as raw:
            for batch in pq.ParquetFile(raw).iter_batches(batch_size=10_000):
                yield from batch.to_pylist()
        return
    if split.source is not None:
        yield from _source_records(split.source)
        return
    loads = typed_json.loads
    with wio.open_input(split.path) as raw, (gzip.open(raw, "rb") if split.path.endswith(".gz") else raw) as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield loads(line, split.may_have_tags)
            except ValueError as exc:
                raise NormalizeError(
                    f"Malformed record at line {line_no} of extracted file {split.path}: {exc}. "
                    "The package is kept; fix or remove the record and run `pipeline.normalize()` again."
                ) from exc


def _source_records(source: SourceFile) -> Iterator[Any]:
    """The records of a source file's split (plain JSON lines, no typed-JSON tags)."""
    loads = typed_json.loads
    for line_no, line in enumerate(iter_split_lines(source), 1):
        if not line.strip():
            continue
        try:
            record = loads(line, False)
        except ValueError as exc:
            raise NormalizeError(
                f"Malformed JSON at line {line_no} of {source.describe()}: {exc}. The package is kept; "
                "fix the file, or remove the pending package from the pipeline's working folder."
            ) from exc
        if source.add_file_name and isinstance(record, dict):
            record["_file_name"] = source.url
        yield record


def _normalizer(plan: NormalizePlan, split: Split) -> RelationalNormalizer:
    normalizer = RelationalNormalizer(plan.normalizer)
    normalizer.occurrence_base = split.index << OCCURRENCE_SHIFT
    return normalizer


def _rows(
    plan: NormalizePlan, split: Split, normalizer: RelationalNormalizer | None = None
) -> Iterator[NormalizedRow]:
    normalizer = normalizer or _normalizer(plan, split)
    for item in read_records(split):
        yield from normalizer.normalize(item, split.root_table)


def _coercer(plan: NormalizePlan, split: Split, tables: dict[str, TTable]) -> RowCoercer:
    checker = None
    if plan.contracts is not None:
        checker = ContractChecker(plan.contracts, tables, arrow=split.file_format == "parquet")
    return RowCoercer(tables, plan.naming, plan.detections, plan.default_hints, contracts=checker)


def _report(
    split: Split, coercer: RowCoercer, tables: dict[str, TTable], normalizer: RelationalNormalizer,
    files: list[TPackageFile], violation: Violation | None = None,
) -> SplitReport:
    touched = set(coercer.added) | set(coercer.new_tables) | set(coercer.row_counts)
    return split_report(
        split.index, new_tables=coercer.new_tables, added=coercer.added, tables={name: tables[name] for name in touched},
        row_counts=coercer.row_counts, null_only={t: sorted(c) for t, c in coercer.null_only.items()},
        collisions=normalizer.collisions, violation=violation, files=files,
        discarded_rows=coercer.contracts.discarded_rows if coercer.contracts is not None else 0,
    )


def _new_file_path(plan: NormalizePlan, table_name: str, ext: str) -> tuple[str, str]:
    file_id = uuid.uuid4().hex[:10]
    return file_id, wio.join(plan.output_dir, f"{check_table_name(table_name)}.{file_id}.{ext}")


def _final_writer(plan: NormalizePlan, split: Split, table_name: str, tables: dict[str, TTable]) -> TableFileWriter:
    file_format = plan.format_for(split.root_table)
    ext = file_extension(file_format, plan.compressed)
    file_id, path = _new_file_path(plan, table_name, ext)
    columns = complete_columns(tables[table_name])
    return TableFileWriter(path, file_format, columns, plan.compressed, table_name, file_id, ext, plan.file_limits)


def _close_all(writers: Writers, split: Split) -> list[TPackageFile]:
    files: list[TPackageFile] = []
    for writer in writers.values():
        files.extend(of_split(writer.close(), split.index))
    return files


def _abort_all(writers: Writers) -> None:
    for writer in writers.values():
        writer.abort()


def _arrow_fast_path(plan: NormalizePlan, split: Split) -> SplitReport | str | None:
    """`normalize_split` vectorized for plain JSON lines (`kernel.normalize.arrow`); else why the row path takes
    the split (a fallback the driver reports), or None for splits that are the row path's by design (typed JSON)."""
    if not executor_arrow.plain_json(split):
        return None
    if not executor_arrow.enabled():
        return f"the Arrow path is turned off ({executor_arrow.SWITCH}=0)"
    if plan.contracts is not None:
        return CONTRACT_ROWS
    file_name = None
    data: bytes | bytearray
    if split.source is not None:
        data = read_split_bytes(split.source)
        file_name = split.source.url if split.source.add_file_name else None
    elif split.path.endswith(".gz"):
        with wio.open_input(split.path) as raw, gzip.open(raw, "rb") as unzipped:
            data = unzipped.read()
    elif wio.is_remote(split.path):
        data = bytearray(wio.read_bytes(split.path))
    else:  # mutable: the fast path blanks the records it leaves to Python in place
        data = bytearray(os.path.getsize(split.path))
        with open(split.path, "rb") as f:
            del data[f.readinto(data) :]

    def new_writer(table_name: str, tables: dict[str, TTable]) -> TableFileWriter:
        return _final_writer(plan, split, table_name, tables)

    base = _normalizer(plan, split).occurrence_base
    return executor_arrow.normalize_arrow(plan, split, data, base, file_name, new_writer)


class ItemsNormalizer(Protocol):
    """One way to run pass 1 over a split, for one kind of input (as dlt has an items normalizer per kind).

    `normalize` returns the split's report; a reason (text) when it steps aside for a split of its kind (a
    fallback the driver counts in the trace and logs); None when the split is not of its kind."""

    name: str

    def normalize(self, plan: NormalizePlan, split: Split) -> SplitReport | str | None: ...


class ArrowItemsNormalizer:
    """Arrow tables and pandas frames (Parquet splits): their Arrow schema is the table's, as in dlt."""

    name = "arrow items"

    def normalize(self, plan: NormalizePlan, split: Split) -> SplitReport | str | None:
        if split.file_format != "parquet":
            return None
        items = normalize_arrow_items(plan, split, lambda name, tables: _final_writer(plan, split, name, tables))
        return items if items is not None else CONTRACT_ROWS


class ArrowJsonNormalizer:
    """Plain JSON lines (records, JSONL pages, files): vectorized with pyarrow (`kernel.normalize.arrow`)."""

    name = "arrow json"

    def normalize(self, plan: NormalizePlan, split: Split) -> SplitReport | str | None:
        return _arrow_fast_path(plan, split)


class RowNormalizer:
    """Record by record: dlt's relational normalizer and coercion in Python; takes every split."""

    name = "rows"

    def normalize(self, plan: NormalizePlan, split: Split) -> SplitReport:
        return _row_path(plan, split)


# pass 1 on executors: the first that takes a split normalizes it (Spark DataFrames are planned on the driver,
# `normalize.kinds.FrameSplits`, into the same `SplitReport`)
EXECUTOR_NORMALIZERS: tuple[ItemsNormalizer, ...] = (ArrowItemsNormalizer(), ArrowJsonNormalizer(), RowNormalizer())


def normalize_split(plan: NormalizePlan, split: Split) -> SplitReport:
    """Pass 1: infer and write in one parse, by the first of `EXECUTOR_NORMALIZERS` that takes the split. Files are
    final (jsonl, Arrow's Parquet) or Arrow chunks (parquet, csv). A split an Arrow normalizer left to the row path
    says why in its report (`row_path`)."""
    reason: str | None = None
    for normalizer in EXECUTOR_NORMALIZERS:
        report = normalizer.normalize(plan, split)
        if isinstance(report, str):
            reason = reason or report
        elif report is not None:
            if reason is not None:
                report["row_path"] = reason
            return report
    raise NormalizeError(f"No normalizer took split {split.index} ({split.path}): a bug in lakeload, please report it")


def _row_path(plan: NormalizePlan, split: Split) -> SplitReport:
    """Pass 1 record by record: dlt's relational normalizer and coercion in Python, for any split."""
    tables = copy.deepcopy(plan.tables)
    coercer = _coercer(plan, split, tables)
    writers: Writers = {}
    staged = plan.format_for(split.root_table) != "jsonl"
    normalizer = _normalizer(plan, split)
    try:
        for table_name, parent_table, row in _rows(plan, split, normalizer):
            out = coercer.coerce_row(table_name, parent_table, row)
            if not out:
                continue
            writer = writers.get(table_name)
            if writer is None:
                if staged:
                    stem = wio.join(plan.output_dir, f"_chunks.{split.index:06d}.{check_table_name(table_name)}")
                    writer = ArrowChunkWriter(stem, table_name, tables)
                else:
                    writer = _final_writer(plan, split, table_name, tables)
                writers[table_name] = writer
            writer.write(out)
        files = _close_all(writers, split)
    except ContractViolation as stop:  # the driver decides: the error, or this split again with the folded schema
        _abort_all(writers)
        return _report(split, coercer, tables, normalizer, [], stop.violation)
    except BaseException:
        _abort_all(writers)
        raise
    return _report(split, coercer, tables, normalizer, files)


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` with exactly the columns of `schema`, in its order; missing columns are all null."""
    arrays = []
    for target in schema:
        index = table.schema.get_field_index(target.name)
        if index < 0:
            arrays.append(pa.nulls(table.num_rows, target.type))
        else:
            column = table.column(index)
            arrays.append(column if column.type == target.type else column.cast(target.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def finalize_split(plan: NormalizePlan, job: FinalizeJob) -> list[TPackageFile]:
    """Pass 2 for one split: its Arrow chunks and unfitting draft files to final files in the final schema."""
    split = job["split"]
    files: list[TPackageFile] = []
    by_table: dict[str, list[str]] = {}
    for chunk in job["chunks"]:
        by_table.setdefault(chunk["table"], []).append(chunk["path"])
    for table_name, paths in by_table.items():
        writer = _final_writer(plan, split, table_name, plan.tables)
        schema = arrow_schema(writer.columns)
        try:
            for path in paths:
                writer.write_arrow(conform(read_staged(path), schema))
            files.extend(of_split(writer.close(), split.index))
        except BaseException:
            writer.abort()
            raise
        for path in paths:
            wio.remove(path)
    return files

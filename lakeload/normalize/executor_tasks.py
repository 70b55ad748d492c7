"""Executor-safe: the two normalize passes over one split (one extracted file) of a load package.

- `infer_split` runs dlt's sequential schema inference over the split, starting from the stored
  schema, and returns only what it added (tables and columns, in order) plus counts: metadata, no rows.
- `write_split` normalizes the split again against the final schema and writes one file per table into
  the package's normalized folder, returning the files' metadata.

Both run inside Spark executors (see `spark_job`), import no driver-side lakeload module and never
send table rows back to the driver.
"""

from __future__ import annotations

import copy
import gzip
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow.parquet as pq

from lakeload.errors import NormalizeError
from lakeload.normalize.executor_coerce import RowCoercer
from lakeload.normalize.executor_relational import NormalizerSettings, RelationalNormalizer
from lakeload.normalize.executor_writers import TableFileWriter, file_extension
from lakeload.schema import typed_json
from lakeload.schema.naming import NamingConvention

TTable = dict[str, Any]


@dataclass(frozen=True)
class Split:
    """One extracted file of a package: JSONL of typed-JSON items, or Parquet written by Spark."""

    index: int
    path: str
    root_table: str
    file_format: str = "jsonl"  # "jsonl" | "parquet"
    may_have_tags: bool = False


@dataclass
class NormalizePlan:
    """Everything executors need for one package; picklable and free of table rows."""

    load_id: str
    naming: NamingConvention
    tables: dict[str, TTable]
    detections: tuple[str, ...]
    default_hints: dict[str, list[str]]
    normalizer: NormalizerSettings
    splits: list[Split]
    file_format: str = "jsonl"
    compressed: bool = True
    output_dir: str = ""
    settings: dict[str, Any] = field(default_factory=dict)


def read_records(split: Split) -> Iterator[Any]:
    """The items of a split, in order, with their original Python types."""
    if split.file_format == "parquet":
        parquet = pq.ParquetFile(split.path)
        for batch in parquet.iter_batches(batch_size=10_000):
            yield from batch.to_pylist()
        return
    opener = gzip.open if split.path.endswith(".gz") else open
    loads = typed_json.loads
    with opener(split.path, "rb") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield loads(line, split.may_have_tags)
            except ValueError as exc:
                raise NormalizeError(
                    f"Malformed record at line {line_no} of extracted file {split.path}: {exc}. "
                    "The package is kept; remove or fix the record and run `pipeline.normalize()` again."
                ) from exc


def _rows(plan: NormalizePlan, split: Split) -> Iterator[tuple[str, str | None, dict[str, Any]]]:
    normalizer = RelationalNormalizer(plan.normalizer)
    for item in read_records(split):
        yield from normalizer.normalize(item, split.root_table)


def infer_split(plan: NormalizePlan, split: Split) -> dict[str, Any]:
    """Sequential dlt inference over one split; returns the schema additions in order."""
    tables = copy.deepcopy(plan.tables)
    coercer = RowCoercer(tables, plan.naming, plan.detections, plan.default_hints)
    for table_name, parent_table, row in _rows(plan, split):
        coercer.coerce_row(table_name, parent_table, row)
    touched = set(coercer.added) | set(coercer.new_tables) | set(coercer.row_counts)
    return {
        "split": split.index,
        "new_tables": coercer.new_tables,
        "added": coercer.added,
        "tables": {name: tables[name] for name in touched},
        "row_counts": coercer.row_counts,
        "null_only": {t: sorted(c) for t, c in coercer.null_only.items()},
    }



def write_split(plan: NormalizePlan, split: Split) -> list[dict[str, Any]]:
    """Normalize one split against the final schema and write one file per table."""
    tables = plan.tables
    coercer = RowCoercer(tables, plan.naming, plan.detections, plan.default_hints, frozen=True)
    writers: dict[str, TableFileWriter] = {}
    ext = file_extension(plan.file_format, plan.compressed)
    try:
        for table_name, parent_table, row in _rows(plan, split):
            out = coercer.coerce_row(table_name, parent_table, row)
            if not out:
                continue
            writer = writers.get(table_name)
            if writer is None:
                file_id = uuid.uuid4().hex[:10]
                path = os.path.join(plan.output_dir, f"{table_name}.{file_id}.{ext}")
                columns = {n: c for n, c in tables[table_name]["columns"].items() if c.get("data_type")}
                writer = writers[table_name] = TableFileWriter(path, plan.file_format, columns, plan.compressed)
                writer.file_id = file_id  # type: ignore[attr-defined]
            writer.write(out)
    except BaseException:
        for writer in writers.values():
            if os.path.exists(writer.tmp_path):
                os.remove(writer.tmp_path)
        raise
    files = []
    for table_name, writer in writers.items():
        meta = writer.close()
        meta.update(table=table_name, file_id=writer.file_id, ext=ext, split=split.index)  # type: ignore[attr-defined]
        files.append(meta)
    return files

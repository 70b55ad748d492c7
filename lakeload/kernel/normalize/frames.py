"""Executor-safe: write the rows of one normalized table of a Spark DataFrame split into final files.

`write_partition(spec)` is the function Spark's `mapInArrow` runs on every partition of a table's
DataFrame (already flattened and typed by Spark, see `lakeload.normalize.spark_frames`): the Arrow
batches coming from the JVM are conformed to the table's final Arrow schema and written into one file
of the package's format (more when `[normalize.data_writer]` limits its rows or bytes); the task yields one row of JSON metadata per file. No row reaches the driver.
Imports only pyarrow, orjson and executor-safe lakeload modules.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import orjson
import pyarrow as pa

import lakeload.kernel.spark.working as wio
from lakeload.kernel.contracts import TRow
from lakeload.kernel.filesystem.safe_paths import check_table_name
from lakeload.kernel.normalize.tasks import conform
from lakeload.kernel.normalize.writers import (
    NO_LIMITS,
    FileLimits,
    TableFileWriter,
    arrow_schema,
    file_extension,
)
from lakeload.kernel.spark.working import WorkingStore
from lakeload.schema.typing import TColumn

META_SCHEMA = "result string"


@dataclass(frozen=True)
class FrameWriteSpec:
    """What the writer tasks of one table need: picklable, no rows."""

    table: str
    columns: dict[str, TColumn]  # the table's final, complete columns in order
    file_format: str
    compressed: bool
    output_dir: str
    split: int
    working: WorkingStore | None = None  # the bucket of `output_dir` when it is a URL
    limits: FileLimits = NO_LIMITS  # when a file is full and the next one begins

    @property
    def json_columns(self) -> frozenset[str]:
        return frozenset(n for n, c in self.columns.items() if c.get("data_type") == "json")


def conform_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.Table:
    """`batch` with exactly the columns of `schema`, in its order, cast to its types (nulls where absent)."""
    return conform(pa.Table.from_batches([batch]), schema)


def _json_rows(table: pa.Table, json_columns: frozenset[str]) -> Iterator[TRow]:
    """Rows as the jsonl writer wants them: no null values, json columns embedded as JSON."""
    for row in table.to_pylist():
        out: TRow = {}
        for name, value in row.items():
            if value is None:
                continue
            out[name] = orjson.Fragment(value) if name in json_columns else value
        yield out


def _writer(spec: FrameWriteSpec) -> TableFileWriter:
    ext = file_extension(spec.file_format, spec.compressed)
    file_id = uuid.uuid4().hex[:10]
    path = wio.join(spec.output_dir, f"{check_table_name(spec.table)}.{file_id}.{ext}")
    return TableFileWriter(path, spec.file_format, spec.columns, spec.compressed, spec.table, file_id, ext, spec.limits)


def write_partition(spec: FrameWriteSpec) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The `mapInArrow` function writing one file per non-empty partition of the table's DataFrame."""
    schema = arrow_schema(spec.columns)
    json_columns = spec.json_columns

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        wio.use(spec.working)
        writer: TableFileWriter | None = None
        try:
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                writer = writer or _writer(spec)
                table = conform_batch(batch, schema)
                if spec.file_format == "jsonl":
                    for row in _json_rows(table, json_columns):
                        writer.write(row)
                else:
                    writer.write_arrow(table)
            files = writer.close() if writer is not None else []
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        for meta in files:
            encoded = orjson.dumps(dict(meta, split=spec.split)).decode()
            yield pa.RecordBatch.from_pydict({"result": [encoded]})

    return run

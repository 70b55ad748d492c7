"""Executor-safe: a Spark DataFrame's Parquet parts in the working bucket, written and read from Python tasks.

Spark here has no Hadoop connector for buckets, so with `[spark] working_url` on an object store a
DataFrame item is written by `mapInArrow(write_parts(spec))` (one Parquet part per non-empty partition,
written to executor-local temp and uploaded in one PUT) and read back by
`spark.range(n).mapInArrow(read_parts(spec))`, which adds what `_metadata.file_name` / `row_index` give on
local folders: the part's file name and the row's index in it.
Imports only the standard library, pyarrow, orjson and `kernel.spark.working`.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

import lakeload.kernel.spark.working as wio
from lakeload.kernel.spark.working import WorkingStore

BATCH_ROWS = 10_000
SCHEMA_FILE = "_spark_schema.json"  # the DataFrame's Spark schema (JSON); parts never start with "_"
RESULT_SCHEMA = "result string"


@dataclass(frozen=True)
class PartsSpec:
    """The folder URL of one DataFrame split and the bucket's store; picklable."""

    folder: str
    working: WorkingStore | None
    names: tuple[str, ...] = ()  # the part files to read, in order
    schema: pa.Schema | None = None  # what Spark expects when reading (file name and row index included)
    file_column: str = ""
    row_column: str = ""


def write_parts(spec: PartsSpec) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The `mapInArrow` function writing one Parquet part per non-empty partition; yields its name and rows."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        wio.use(spec.working)
        name = f"part-{uuid.uuid4().hex}.parquet"
        local, writer, rows = wio.local_temp(name), None, 0
        try:
            for batch in batches:
                if batch.num_rows:
                    writer = writer or pq.ParquetWriter(local, batch.schema, compression="snappy")
                    writer.write_batch(batch)
                    rows += batch.num_rows
            if writer is not None:  # an empty partition makes no part
                writer.close()
                wio.upload(local, wio.join(spec.folder, name))
        finally:
            if writer is not None:
                writer.close()
            os.remove(local)
        if rows:
            yield pa.RecordBatch.from_pydict({"result": [orjson.dumps({"name": name, "rows": rows}).decode()]})

    return run


def _conform(spec: PartsSpec, batch: pa.RecordBatch, file_name: str, start: int) -> pa.RecordBatch:
    assert spec.schema is not None
    arrays = []
    for target in spec.schema:
        index = batch.schema.get_field_index(target.name)
        if target.name == spec.file_column:
            arrays.append(pa.array([file_name] * batch.num_rows, target.type))
        elif target.name == spec.row_column:
            arrays.append(pa.array(range(start, start + batch.num_rows), target.type))
        elif index < 0:
            arrays.append(pa.nulls(batch.num_rows, target.type))
        else:
            column = batch.column(index)
            arrays.append(column if column.type == target.type else column.cast(target.type, safe=False))
    return pa.RecordBatch.from_arrays(arrays, schema=spec.schema)


def read_part(spec: PartsSpec, index: int) -> Iterator[pa.RecordBatch]:
    """The rows of part `index` with its file name and each row's index in it."""
    name, start = spec.names[index], 0
    with wio.open_input(wio.join(spec.folder, name)) as raw:
        for batch in pq.ParquetFile(raw).iter_batches(batch_size=BATCH_ROWS):
            yield _conform(spec, batch, name, start)
            start += batch.num_rows


def read_parts(spec: PartsSpec) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A `mapInArrow` function over `spark.range(len(spec.names))`: the rows of part `id` for every id."""

    def run(ids: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        wio.use(spec.working)
        for batch in ids:
            for index in batch.column(0).to_pylist():
                yield from read_part(spec, index)

    return run

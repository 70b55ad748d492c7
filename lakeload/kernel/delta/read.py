"""Executor-safe: read a Delta snapshot's data files on Spark executors.

The driver lists the files of the current snapshot from the Delta log (delta-rs) and hands each
task `(path, partition values)` rows; the task reads the Parquet file itself (locally or through
fsspec from a bucket, since Spark here has no object-store connectors), adds the partition columns
from the log, conforms the batches to the table schema (columns added by later versions read as
null) and yields them, optionally with the file each row came from.

Imports only pyarrow, fsspec and executor-safe lakeload modules.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq

from lakeload.kernel.contracts import TFsOptions
from lakeload.kernel.delta.files import FILE_COLUMN, ROW_INDEX, conform
from lakeload.kernel.filesystem.fs import url_to_fs

LISTING_SCHEMA = pa.schema([("path", pa.string()), ("partition_values", pa.string())])
BATCH_ROWS = 10_000


@dataclass
class SnapshotSpec:
    """Which table to read and how; shipped to executors (credentials stay in fs_kwargs)."""

    bucket_url: str
    fs_kwargs: TFsOptions
    table_dir: str
    schema: pa.Schema  # the output schema (the table's, then FILE_COLUMN when with_file, then ROW_INDEX when with_row_index)
    with_file: bool = False
    is_local: bool = True
    with_row_index: bool = False

    def __repr__(self) -> str:
        return f"SnapshotSpec(table_dir={self.table_dir!r})"


def _partition_column(value: str | None, arrow_type: pa.DataType, rows: int) -> pa.Array:
    if value is None:
        return pa.nulls(rows, arrow_type)
    text = pa.array([value], pa.string())
    if pa.types.is_timestamp(arrow_type):
        parsed = text.cast(pa.timestamp("us")).cast(arrow_type)  # log values are UTC without a zone
    elif pa.types.is_boolean(arrow_type):
        parsed = pa.array([value.lower() == "true"])
    else:
        parsed = text.cast(arrow_type)
    return pa.repeat(parsed[0], rows)


def file_name(path: str) -> str:
    """The value of the file column for a data file (`path` as in the log): its file name, unique in a table."""
    return posixpath.basename(unquote(path))


def read_file(spec: SnapshotSpec, path: str, partition_values: dict[str, str | None]) -> Iterator[pa.Table]:
    """The rows of one data file (`path` as in the log, relative and URL-encoded), in the output schema.

    Only the output schema's columns are read from the file; the row index is the row's position in it.
    """
    physical = f"{spec.table_dir}/{unquote(path)}"
    table_schema = pa.schema([f for f in spec.schema if f.name not in (FILE_COLUMN, ROW_INDEX)])
    offset = 0
    if spec.is_local:
        handle: Any = open(physical, "rb")  # noqa: SIM115 - closed below
    else:
        fs, _ = url_to_fs(spec.bucket_url, spec.fs_kwargs)
        handle = fs.open(physical, "rb")
    with handle:
        parquet = pq.ParquetFile(handle)
        present = [n for n in table_schema.names if n in parquet.schema_arrow.names]
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=present):
            table = pa.Table.from_batches([batch])
            for name, value in partition_values.items():
                if name not in table_schema.names:
                    continue
                table = table.append_column(name, _partition_column(value, table_schema.field(name).type, table.num_rows))
            table = conform(table, table_schema)
            if spec.with_file:
                table = table.append_column(FILE_COLUMN, pa.array([file_name(path)] * table.num_rows, pa.string()))
            if spec.with_row_index:
                table = table.append_column(ROW_INDEX, pa.array(range(offset, offset + table.num_rows), pa.int64()))
            offset += table.num_rows
            yield table


def read_task(spec: SnapshotSpec, listings: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The `mapInArrow` body: read every file listed in this task's rows."""
    for listing in listings:
        for row in listing.to_pylist():
            partition_values = cast(dict[str, str | None], json.loads(row["partition_values"]))
            for table in read_file(spec, row["path"], partition_values):
                yield from table.to_batches()

"""Executor-safe: read Parquet or CSV files of a bucket as Arrow batches inside Spark tasks (`mapInArrow`).

The driver builds `spark.range(n).mapInArrow(file_batches(plan), schema)`: the task for id `i` opens
the bucket with the plan's fsspec options and streams file `i` in batches, cast to the Arrow schema Spark
expects (columns a file lacks are null). Errors name the file and never show the bucket's secrets.
Imports only the standard library, pyarrow, `kernel.filesystem.fs` (fsspec) and `lakeload.errors`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from lakeload.errors import SourceError
from lakeload.kernel.filesystem.fs import url_to_fs

BATCH_ROWS = 10_000
FILE_NAME_COLUMN = "_file_name"


@dataclass(frozen=True)
class FileReadPlan:
    """What the tasks of one files source read; picklable (Arrow schemas pickle)."""

    paths: tuple[str, ...]  # in the filesystem of `bucket_url`
    urls: tuple[str, ...]  # shown in errors and in `_file_name`
    file_format: str  # "parquet" | "csv"
    schema: pa.Schema  # what Spark expects, `_file_name` included when asked for
    csv_types: Mapping[str, pa.DataType] = field(default_factory=dict)  # column types inferred on the driver
    add_file_name: bool = False
    bucket_url: str = field(default="", repr=False)
    options: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    secrets: tuple[str, ...] = field(default=(), repr=False, compare=False)


def conform_batch(batch: pa.RecordBatch | pa.Table, schema: pa.Schema, file_name: str | None = None) -> pa.RecordBatch:
    """`batch` with exactly the columns of `schema`, in order and cast; missing columns are null."""
    arrays = []
    for target in schema:
        if file_name is not None and target.name == FILE_NAME_COLUMN:
            arrays.append(pa.array([file_name] * batch.num_rows, target.type))
            continue
        index = batch.schema.get_field_index(target.name)
        if index < 0:
            arrays.append(pa.nulls(batch.num_rows, target.type))
        else:
            column = batch.column(index)
            # Spark keeps microseconds: finer timestamps are truncated, every other cast must be exact
            arrays.append(column if column.type == target.type else column.cast(target.type, safe=not _has_timestamp(column.type)))
    return pa.RecordBatch.from_arrays([_combined(a) for a in arrays], schema=schema)


def _has_timestamp(arrow_type: pa.DataType) -> bool:
    if pa.types.is_timestamp(arrow_type):
        return True
    return any(_has_timestamp(arrow_type.field(i).type) for i in range(arrow_type.num_fields))


def _combined(array: Any) -> pa.Array:
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _parquet_batches(fs: Any, path: str) -> Iterator[pa.RecordBatch]:
    import pyarrow.parquet as pq

    with fs.open(path, "rb") as f:
        yield from pq.ParquetFile(f).iter_batches(batch_size=BATCH_ROWS)


def _csv_batches(fs: Any, path: str, types: Mapping[str, pa.DataType]) -> Iterator[pa.RecordBatch]:
    import pyarrow.csv as pacsv

    compression = "gzip" if path.lower().endswith((".gz", ".gzip")) else None
    with fs.open(path, "rb", compression=compression) as f:
        yield from pacsv.open_csv(f, convert_options=pacsv.ConvertOptions(column_types=dict(types)))


def _scrub(text: str, secrets: tuple[str, ...]) -> str:
    for value in secrets:
        text = text.replace(value, "***")
    return text


def read_file(fs: Any, plan: FileReadPlan, index: int) -> Iterator[pa.RecordBatch]:
    """The batches of file `index`, conformed to the plan's schema."""
    path, url = plan.paths[index], plan.urls[index]
    file_name = url if plan.add_file_name else None
    try:
        batches = _parquet_batches(fs, path) if plan.file_format == "parquet" else _csv_batches(fs, path, plan.csv_types)
        for batch in batches:
            yield conform_batch(batch, plan.schema, file_name)
    except Exception as exc:
        message = _scrub(f"{type(exc).__name__}: {exc}", plan.secrets)
    else:
        return
    raise SourceError(f"Cannot read {plan.file_format} file {url}: {message}")


def file_batches(plan: FileReadPlan) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A `mapInArrow` function over a `range` DataFrame: the batches of file `id` for every id."""

    def run(ids: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        fs = None
        for batch in ids:
            for index in batch.column(0).to_pylist():
                if fs is None:
                    fs = url_to_fs(plan.bucket_url, plan.options)[0]
                yield from read_file(fs, plan, index)

    return run

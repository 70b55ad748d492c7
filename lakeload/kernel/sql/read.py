"""Executor-safe: read a table's files from any fsspec bucket into Arrow batches of the table's Spark schema.

Runs inside `mapInArrow` on Spark executors, so it imports only pyarrow, fsspec and the standard library.
Credentials travel inside `fs_kwargs` of the payload and are never logged.

>>> import pyarrow as pa
>>> convert("2024-01-01T10:00:00+02:00", "timestamp", pa.timestamp("us", tz="UTC"), from_text=False)
datetime.datetime(2024, 1, 1, 8, 0, tzinfo=datetime.timezone.utc)
"""

from __future__ import annotations

import base64
import csv
import datetime as dt
import decimal
import gzip
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any, cast

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from lakeload.kernel.contracts import TFsOptions, TRow
from lakeload.kernel.filesystem.fs import url_to_fs

BATCH_ROWS = 10_000
_TRUE = frozenset({"true", "t", "1", "yes", "y"})


@dataclass
class ReadPayload:
    """What read tasks need: the bucket, each column's dlt type, and the Arrow schema to produce."""

    bucket_url: str
    fs_kwargs: TFsOptions
    columns: list[tuple[str, str]]
    schema: pa.Schema

    def __repr__(self) -> str:
        return f"ReadPayload(bucket_url={self.bucket_url!r}, columns={[c for c, _ in self.columns]})"


def _timestamp(value: Any, target: pa.DataType) -> dt.datetime:
    moment = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if getattr(target, "tz", None):
        return moment.replace(tzinfo=dt.timezone.utc) if moment.tzinfo is None else moment.astimezone(dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc).replace(tzinfo=None) if moment.tzinfo else moment


def convert(value: Any, data_type: str, target: pa.DataType, from_text: bool) -> Any:
    """One value from a jsonl record (`from_text=False`) or a csv cell (`from_text=True`) as a Python value."""
    if value is None or (from_text and value == "" and data_type != "text"):
        return None
    if data_type == "json":
        return value if from_text else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if data_type == "binary":
        return value.encode("utf-8") if from_text else base64.b64decode(value)
    if data_type == "bigint":
        return int(value)
    if data_type == "double":
        return float(value)
    if data_type == "bool":
        return value if isinstance(value, bool) else str(value).strip().lower() in _TRUE
    if data_type == "timestamp":
        return _timestamp(value, target)
    if data_type == "date":
        return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value)[:10])
    if data_type in ("decimal", "wei"):
        return decimal.Decimal(str(value))
    return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list)) else str(value)


def _records_table(records: list[TRow], payload: ReadPayload, from_text: bool) -> pa.Table:
    arrays = []
    for (name, data_type), field in zip(payload.columns, payload.schema, strict=True):
        values = [convert(r.get(name), data_type, field.type, from_text) for r in records]
        arrays.append(pa.array(values, type=field.type))
    return pa.Table.from_arrays(arrays, schema=payload.schema)


def _parquet_table(raw: IO[bytes], payload: ReadPayload) -> pa.Table:
    table = pq.read_table(raw)
    arrays = []
    for (name, data_type), field in zip(payload.columns, payload.schema, strict=True):
        if name in table.column_names and data_type == "time" and pa.types.is_temporal(table[name].type):
            times = [None if t is None else t.isoformat() for t in table[name].to_pylist()]
            arrays.append(pa.array(times, type=field.type))  # "07:03:00", as jsonl and csv files hold it
        elif name in table.column_names:
            arrays.append(table[name].cast(field.type))
        else:
            arrays.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(arrays, schema=payload.schema)


def _text(raw: IO[bytes], path: str) -> IO[str]:
    stream: IO[bytes] = gzip.GzipFile(fileobj=raw) if path.endswith(".gz") else raw  # type: ignore[assignment]
    return io.TextIOWrapper(stream, encoding="utf-8", newline="")


def read_file(fs: fsspec.AbstractFileSystem, path: str, payload: ReadPayload) -> pa.Table:
    """One data file (parquet, jsonl or csv, optionally gzipped) as a table of `payload.schema`."""
    name = path[:-3] if path.endswith(".gz") else path
    with fs.open(path, "rb") as raw:
        if name.endswith(".parquet"):
            return _parquet_table(raw, payload)
        text = _text(raw, path)
        if name.endswith(".jsonl"):
            rows = [cast(TRow, json.loads(line)) for line in text if line.strip()]
            return _records_table(rows, payload, from_text=False)
        if name.endswith(".csv"):
            return _records_table(list(csv.DictReader(text)), payload, from_text=True)
    raise ValueError(f"Not a parquet, jsonl or csv file: {path}")


def read_batches(payload: ReadPayload, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """`mapInArrow` function: the input batches hold a `path` column; yields the rows of those files."""
    fs, _ = url_to_fs(payload.bucket_url, payload.fs_kwargs)
    for batch in batches:
        for path in batch.column("path").to_pylist():
            yield from read_file(fs, path, payload).to_batches(max_chunksize=BATCH_ROWS)

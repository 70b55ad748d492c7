"""Executor-safe: writers for normalized rows of one table.

- `TableFileWriter` writes final files (jsonl, parquet or csv) from rows or Arrow tables,
  buffering rows so memory stays bounded by the chunk size; a new file begins when one holds `FileLimits.max_rows`
  rows (exactly) or has reached `max_bytes` (checked after each chunk, so a file may pass it by one chunk).
- `ArrowChunkWriter` stages rows as Arrow IPC chunks in the split's current column set (pass 1
  of normalize), to be conformed to the final schema later without touching Python rows again.

Files are written under a temporary name and renamed when complete, so nobody (a reader, or a
resumed load) takes a half-written file for a complete one.
"""

from __future__ import annotations

import gzip
import os
import uuid
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

import lakeload.kernel.spark.working as wio
from lakeload.errors import DecimalOutOfRangeError, IntegerOutOfRangeError
from lakeload.kernel.contracts import TPackageFile, TRow
from lakeload.schema import datatypes
from lakeload.schema.arrow_types import column_arrow_type
from lakeload.schema.typing import TColumn, TTable

FLUSH_ROWS = 20_000
FILE_FORMATS = ("jsonl", "parquet", "csv")


@dataclass(frozen=True)
class FileLimits:
    """When a table's file is full and the next one begins (dlt's `[normalize.data_writer]`); None: no limit."""

    max_rows: int | None = None
    max_bytes: int | None = None


NO_LIMITS = FileLimits()


def file_extension(file_format: str, compressed: bool) -> str:
    """`jsonl.gz`, `csv.gz` or `parquet` (parquet is never gzipped)."""
    if file_format not in FILE_FORMATS:
        raise ValueError(f"Unknown loader_file_format '{file_format}'; use one of {', '.join(FILE_FORMATS)}.")
    if file_format == "parquet":
        return "parquet"
    return f"{file_format}.gz" if compressed else file_format


def complete_columns(table: TTable) -> dict[str, TColumn]:
    """The columns of a table that have a data type, in schema order."""
    return {n: c for n, c in table["columns"].items() if c.get("data_type")}


def arrow_schema(columns: dict[str, TColumn]) -> pa.Schema:
    """The Arrow schema of complete columns, in order, as dlt's parquet writer types them."""
    fields = []
    for name, column in columns.items():
        fields.append(pa.field(name, column_arrow_type(column), nullable=column.get("nullable", True)))
    return pa.schema(fields)


def rows_to_arrow(rows: list[TRow], columns: dict[str, TColumn], schema: pa.Schema, table: str = "") -> pa.Table:
    """Rows to an Arrow table of `schema` (of table `table`); `json` columns become JSON strings as dlt stores them.

    Filled row by row, touching only the keys a row has: wide tables whose rows are sparse (event
    payloads of many kinds) convert several times faster than with `Table.from_pylist`.
    """
    n = len(rows)
    values: dict[str, list[Any]] = {field.name: [None] * n for field in schema}
    for i, row in enumerate(rows):
        for name, value in row.items():
            values[name][i] = value
    for name, column in columns.items():
        if column["data_type"] == "json" and pa.types.is_string(schema.field(name).type):  # else: a nested Arrow type
            dumps, default = orjson.dumps, datatypes.jsonl_default
            values[name] = [v if v is None or isinstance(v, str) else dumps(v, default=default).decode() for v in values[name]]
    return pa.Table.from_arrays([_column_array(values[f.name], f, table) for f in schema], schema=schema)


def _column_array(values: list[Any], field: pa.Field, table: str) -> pa.Array:
    """One column's Arrow array; an integer a `bigint` column cannot hold (2**63 and above: JSON and Python carry
    up to 2**64-1), or a decimal its column's scale would cut, fails naming the table and column, as dlt's Parquet
    writer fails on them too."""
    try:
        return pa.array(values, type=field.type)
    except OverflowError as exc:
        raise IntegerOutOfRangeError(table, field.name) from exc
    except pa.ArrowInvalid as exc:
        if pa.types.is_decimal(field.type):
            raise DecimalOutOfRangeError(table, field.name, str(field.type)) from exc
        raise


def write_ipc(path: str, data: pa.Table) -> None:
    """Write an Arrow IPC file (a chunk of a split's rows) at a local path or a bucket URL."""
    with wio.local_target(path) as local:
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with pa.OSFile(local, "wb") as sink, pa.ipc.new_file(sink, data.schema) as writer:
            writer.write_table(data)


def read_staged(path: str) -> pa.Table:
    """Read a staged file of pass 1: an Arrow IPC chunk, or a draft Parquet file of the vectorized path."""
    if path.endswith(".parquet"):
        with wio.open_input(path) as raw:
            return pq.read_table(raw)
    return read_ipc(path)


def of_split(files: list[TPackageFile], split: int) -> list[TPackageFile]:
    """`files` (as a writer's `close()` returns them) marked with the index of the split they came from."""
    return [{**meta, "split": split} for meta in files]


def schema_signature(schema: pa.Schema) -> dict[str, str]:
    """Column name -> Arrow type text: what decides whether a draft file already fits its final table."""
    return {f.name: str(f.type) for f in schema}


def read_ipc(path: str) -> pa.Table:
    """Read an Arrow IPC file written by `write_ipc`."""
    if not wio.is_remote(path):
        with pa.memory_map(path) as source:
            return pa.ipc.open_file(source).read_all()
    return pa.ipc.open_file(pa.py_buffer(wio.read_bytes(path))).read_all()


class TableFileWriter:
    """Writes the rows of one table into final files (one, unless `limits` split them); `close()` returns the files'
    metadata."""

    def __init__(
        self, path: str, file_format: str, columns: dict[str, TColumn], compressed: bool,
        table: str = "", file_id: str = "", ext: str = "", limits: FileLimits = NO_LIMITS,
    ) -> None:
        self.file_format = file_format
        self.columns = columns
        self.compressed = compressed and file_format != "parquet"
        self.table = table
        self.ext = ext or file_extension(file_format, compressed)
        self.limits = limits
        self._buffer: list[TRow] = []
        self._schema = arrow_schema(columns) if file_format != "jsonl" else None
        self._published: list[TPackageFile] = []  # the files that were full
        self._begin(path, file_id)

    def _begin(self, path: str, file_id: str) -> None:
        self.path = path
        self.file_id = file_id
        self.tmp_path = wio.local_temp(path) if wio.is_remote(path) else path + ".tmp"  # uploaded in close()
        self.rows = 0  # of the current file
        self._full = False
        self._raw: IO[bytes] | None = None
        self._stream: IO[bytes] | None = None
        self._parquet: pq.ParquetWriter | None = None
        self._csv: pacsv.CSVWriter | None = None

    def _room(self) -> int | None:
        """Rows the current file still takes (a full file is published and the next begun first); None: any."""
        if self._full:
            self._published.append(self._publish())
            file_id = uuid.uuid4().hex[:10]
            self._begin(_sibling(self.path, self.file_id, self.ext, file_id), file_id)
        return None if self.limits.max_rows is None else self.limits.max_rows - self.rows

    def _wrote(self) -> None:
        """After rows went to the file: is it full?"""
        max_rows, max_bytes = self.limits.max_rows, self.limits.max_bytes
        self._full = (max_rows is not None and self.rows >= max_rows) or (max_bytes is not None and self._size() >= max_bytes)

    def _size(self) -> int:
        if self._raw is not None:
            return self._raw.tell()
        return os.path.getsize(self.tmp_path) if os.path.exists(self.tmp_path) else 0

    def write(self, row: TRow) -> None:
        self._buffer.append(row)
        max_rows, current = self.limits.max_rows, 0 if self._full else self.rows
        if len(self._buffer) >= FLUSH_ROWS or (max_rows is not None and current + len(self._buffer) >= max_rows):
            self._flush()

    def _open_stream(self) -> IO[bytes]:
        if self._stream is None:
            os.makedirs(os.path.dirname(self.tmp_path), exist_ok=True)
            self._raw = open(self.tmp_path, "wb")  # noqa: SIM115 - closed in close()
            if self.compressed:
                self._stream = gzip.GzipFile(fileobj=self._raw, mode="wb", compresslevel=5, mtime=0)  # type: ignore[assignment]
            else:
                self._stream = self._raw
        assert self._stream is not None
        return self._stream

    def _flush(self) -> None:
        rows, self._buffer = self._buffer, []
        if not rows:
            return
        if self.file_format != "jsonl":
            assert self._schema is not None
            self.write_arrow(rows_to_arrow(rows, self.columns, self._schema, self.table))
            return
        dumps, default, option = orjson.dumps, datatypes.jsonl_default, datatypes.JSONL_OPTIONS
        while rows:
            room = self._room()
            part, rows = (rows, []) if room is None else (rows[:room], rows[room:])
            self.rows += len(part)
            self._open_stream().write(b"".join(dumps(r, default=default, option=option) + b"\n" for r in part))
            self._wrote()

    def write_lines(self, lines: bytes, rows: int) -> None:
        """Append `rows` rows already rendered as jsonl lines, each ending with a newline (jsonl only)."""
        self._flush()
        ends = None
        while True:
            room = self._room()
            if room is not None and rows > room:
                if ends is None:  # where each line ends, found once
                    ends = np.flatnonzero(np.frombuffer(lines, np.uint8) == 10) + 1
                cut = int(ends[room - 1])
                part, lines, ends = lines[:cut], lines[cut:], ends[room:] - cut
                written, rows = room, rows - room
            else:
                part, written = lines, rows
            self.rows += written
            self._open_stream().write(part)
            self._wrote()
            if part is lines:
                return

    def write_arrow(self, table: pa.Table) -> None:
        """Append an Arrow table that already has this file's schema (parquet and csv only)."""
        while True:
            room = self._room()
            part = table if room is None or table.num_rows <= room else table.slice(0, room)
            self._write_table(part)
            self._wrote()
            if part is table:
                return
            table = table.slice(room)

    def _write_table(self, table: pa.Table) -> None:
        self.rows += table.num_rows
        if self.file_format == "parquet":
            if self._parquet is None:
                os.makedirs(os.path.dirname(self.tmp_path), exist_ok=True)
                self._parquet = pq.ParquetWriter(
                    self.tmp_path, table.schema, version="2.4", compression="snappy", use_compliant_nested_type=True
                )
            self._parquet.write_table(table)
        else:
            if self._csv is None:
                options = pacsv.WriteOptions(include_header=True, quoting_style="needed")
                self._csv = pacsv.CSVWriter(self._open_stream(), table.schema, write_options=options)
            self._csv.write_table(table)

    def _publish(self) -> TPackageFile:
        """Close the current file and publish it under its final name."""
        for closable in (self._parquet, self._csv, self._stream, self._raw):
            if closable is not None:
                closable.close()
        size = os.path.getsize(self.tmp_path)
        if wio.is_remote(self.path):
            wio.upload(self.tmp_path, self.path)
            os.remove(self.tmp_path)
        else:
            os.replace(self.tmp_path, self.path)
        return TPackageFile(table=self.table, file_id=self.file_id, ext=self.ext, path=self.path, rows=self.rows, bytes=size)

    def close(self) -> list[TPackageFile]:
        """Flush, close and publish the files under their final names."""
        self._flush()
        if self._published and not self.rows:  # nothing after the last full file: no empty file
            self._discard()
            return self._published
        return [*self._published, self._publish()]

    def _discard(self) -> None:
        for closable in (self._parquet, self._csv, self._stream, self._raw):
            try:
                if closable is not None:
                    closable.close()
            except Exception:  # the task already failed, or the file is dropped; the original error matters
                pass
        if os.path.exists(self.tmp_path):
            os.remove(self.tmp_path)

    def abort(self) -> None:
        """Close and remove the temporary file of a failed task, and the files it published."""
        self._discard()
        for meta in self._published:
            wio.remove(meta["path"])


def _sibling(path: str, file_id: str, ext: str, new_id: str) -> str:
    """The path of the next file of a table: `path` with `new_id` for `file_id` (`<table>.<file_id>.<ext>`)."""
    suffix = f"{file_id}.{ext}"
    if file_id and path.endswith(suffix):
        return path[: -len(suffix)] + f"{new_id}.{ext}"
    return f"{path[: -len(ext) - 1]}.{new_id}.{ext}"


class ArrowChunkWriter:
    """Stages rows of one table as Arrow IPC files, each in the table's columns at flush time."""

    def __init__(self, stem: str, table: str, tables: dict[str, TTable]) -> None:
        self.stem = stem
        self.table = table
        self.tables = tables  # the split's live local schema: grows while rows are coerced
        self._buffer: list[TRow] = []
        self._chunks: list[TPackageFile] = []

    def write(self, row: TRow) -> None:
        self._buffer.append(row)
        if len(self._buffer) >= FLUSH_ROWS:
            self._flush()

    def _flush(self) -> None:
        rows, self._buffer = self._buffer, []
        if not rows:
            return
        columns = complete_columns(self.tables[self.table])
        data = rows_to_arrow(rows, columns, arrow_schema(columns), self.table)
        path = f"{self.stem}.{len(self._chunks):04d}.arrow"
        write_ipc(path, data)
        self._chunks.append(TPackageFile(table=self.table, path=path, rows=data.num_rows, chunk=True))

    def close(self) -> list[TPackageFile]:
        self._flush()
        return self._chunks

    def abort(self) -> None:
        for chunk in self._chunks:
            wio.remove(chunk["path"])

"""Executor-safe: writers for normalized rows of one table.

- `TableFileWriter` writes one final file (jsonl, parquet or csv) from rows or Arrow tables,
  buffering rows so memory stays bounded by the chunk size.
- `ArrowChunkWriter` stages rows as Arrow IPC chunks in the split's current column set (pass 1
  of normalize), to be conformed to the final schema later without touching Python rows again.

Files are written under a temporary name and renamed when complete, so nobody (a reader, or a
resumed load) takes a half-written file for a complete one.
"""

from __future__ import annotations

import gzip
import os
from typing import IO, Any

import orjson
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

import lakeload.kernel.spark.working as wio
from lakeload.errors import IntegerOutOfRangeError
from lakeload.kernel.contracts import TPackageFile, TRow
from lakeload.schema import datatypes
from lakeload.schema.arrow_types import column_arrow_type
from lakeload.schema.typing import TColumn, TTable

FLUSH_ROWS = 20_000
FILE_FORMATS = ("jsonl", "parquet", "csv")


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
    up to 2**64-1) fails naming the table and column, as dlt's Parquet writer fails on it too."""
    try:
        return pa.array(values, type=field.type)
    except OverflowError as exc:
        raise IntegerOutOfRangeError(table, field.name) from exc


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
    """Writes the rows of one table into one final file; `close()` returns the file's metadata."""

    def __init__(
        self, path: str, file_format: str, columns: dict[str, TColumn], compressed: bool,
        table: str = "", file_id: str = "", ext: str = "",
    ) -> None:
        self.path = path
        self.tmp_path = wio.local_temp(path) if wio.is_remote(path) else path + ".tmp"  # uploaded in close()
        self.file_format = file_format
        self.columns = columns
        self.compressed = compressed and file_format != "parquet"
        self.table = table
        self.file_id = file_id
        self.ext = ext or file_extension(file_format, compressed)
        self.rows = 0
        self._buffer: list[TRow] = []
        self._schema = arrow_schema(columns) if file_format != "jsonl" else None
        self._raw: IO[bytes] | None = None
        self._stream: IO[bytes] | None = None
        self._parquet: pq.ParquetWriter | None = None
        self._csv: pacsv.CSVWriter | None = None

    def write(self, row: TRow) -> None:
        self._buffer.append(row)
        if len(self._buffer) >= FLUSH_ROWS:
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
        if self.file_format == "jsonl":
            self.rows += len(rows)
            dumps, default, option = orjson.dumps, datatypes.jsonl_default, datatypes.JSONL_OPTIONS
            self._open_stream().write(b"".join(dumps(r, default=default, option=option) + b"\n" for r in rows))
            return
        assert self._schema is not None
        self.write_arrow(rows_to_arrow(rows, self.columns, self._schema, self.table))

    def write_lines(self, lines: bytes, rows: int) -> None:
        """Append `rows` rows already rendered as jsonl lines, each ending with a newline (jsonl only)."""
        self._flush()
        self.rows += rows
        self._open_stream().write(lines)

    def write_arrow(self, table: pa.Table) -> None:
        """Append an Arrow table that already has this file's schema (parquet and csv only)."""
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

    def close(self) -> list[TPackageFile]:
        """Flush, close and publish the file under its final name."""
        self._flush()
        for closable in (self._parquet, self._csv, self._stream, self._raw):
            if closable is not None:
                closable.close()
        size = os.path.getsize(self.tmp_path)
        if wio.is_remote(self.path):
            wio.upload(self.tmp_path, self.path)
            os.remove(self.tmp_path)
        else:
            os.replace(self.tmp_path, self.path)
        return [TPackageFile(table=self.table, file_id=self.file_id, ext=self.ext, path=self.path, rows=self.rows, bytes=size)]

    def abort(self) -> None:
        """Close and remove the temporary file of a failed task."""
        for closable in (self._parquet, self._csv, self._stream, self._raw):
            try:
                if closable is not None:
                    closable.close()
            except Exception:  # the task already failed; the original error matters
                pass
        if os.path.exists(self.tmp_path):
            os.remove(self.tmp_path)


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

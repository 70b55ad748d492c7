"""Executor-safe: writers that turn coerced rows of one table into a jsonl, parquet or csv file.

A writer buffers rows and flushes them in chunks, so memory stays bounded by the chunk size. Files
are written under a temporary name and renamed when closed, so a reader (or a resumed load) never
takes a half-written file for a complete one.
"""

from __future__ import annotations

import gzip
import io
import os
from typing import IO, Any

import orjson
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from lakeload.schema import datatypes

TColumn = dict[str, Any]
FLUSH_ROWS = 20_000
FILE_FORMATS = ("jsonl", "parquet", "csv")


def file_extension(file_format: str, compressed: bool) -> str:
    """`jsonl.gz`, `csv.gz` or `parquet` (parquet is never gzipped)."""
    if file_format == "parquet":
        return "parquet"
    return f"{file_format}.gz" if compressed else file_format


def arrow_schema(columns: dict[str, TColumn]) -> pa.Schema:
    """The Arrow schema of a table's complete columns, in schema order."""
    fields = []
    for name, column in columns.items():
        arrow_type = datatypes.to_arrow_type(
            column["data_type"], column.get("precision"), column.get("scale"), column.get("timezone", True)
        )
        fields.append(pa.field(name, arrow_type, nullable=column.get("nullable", True)))
    return pa.schema(fields)


def rows_to_arrow(rows: list[dict[str, Any]], columns: dict[str, TColumn], schema: pa.Schema) -> pa.Table:
    """Column-wise conversion; `json` columns become JSON strings as dlt stores them."""
    arrays = []
    for field in schema:
        values = [row.get(field.name) for row in rows]
        if columns[field.name]["data_type"] == "json":
            values = [None if v is None else orjson.dumps(v, default=datatypes.jsonl_default).decode() for v in values]
        arrays.append(pa.array(values, type=field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


class TableFileWriter:
    """Writes the rows of one table into one file; `close()` returns the file's metadata."""

    def __init__(self, path: str, file_format: str, columns: dict[str, TColumn], compressed: bool) -> None:
        if file_format not in FILE_FORMATS:
            raise ValueError(f"Unknown file format '{file_format}', expected one of {FILE_FORMATS}")
        self.path = path
        self.tmp_path = path + ".tmp"
        self.file_format = file_format
        self.columns = columns
        self.compressed = compressed and file_format != "parquet"
        self.rows = 0
        self._buffer: list[dict[str, Any]] = []
        self._schema = arrow_schema(columns) if file_format != "jsonl" else None
        self._raw: IO[bytes] | None = None
        self._stream: IO[bytes] | None = None
        self._parquet: pq.ParquetWriter | None = None
        self._csv: pacsv.CSVWriter | None = None

    def write(self, row: dict[str, Any]) -> None:
        self._buffer.append(row)
        if len(self._buffer) >= FLUSH_ROWS:
            self._flush()

    def _open_stream(self) -> IO[bytes]:
        if self._stream is None:
            os.makedirs(os.path.dirname(self.tmp_path), exist_ok=True)
            self._raw = open(self.tmp_path, "wb")  # noqa: SIM115 - closed in close()
            self._stream = gzip.GzipFile(fileobj=self._raw, mode="wb", compresslevel=5, mtime=0) if self.compressed else self._raw
        return self._stream

    def _flush(self) -> None:
        rows, self._buffer = self._buffer, []
        if not rows:
            return
        self.rows += len(rows)
        if self.file_format == "jsonl":
            dumps, default, option = orjson.dumps, datatypes.jsonl_default, datatypes.JSONL_OPTIONS
            self._open_stream().write(b"".join(dumps(r, default=default, option=option) + b"\n" for r in rows))
            return
        assert self._schema is not None
        table = rows_to_arrow(rows, self.columns, self._schema)
        if self.file_format == "parquet":
            if self._parquet is None:
                os.makedirs(os.path.dirname(self.tmp_path), exist_ok=True)
                self._parquet = pq.ParquetWriter(
                    self.tmp_path, self._schema, version="2.4", compression="snappy", use_compliant_nested_type=True
                )
            self._parquet.write_table(table)
        else:
            if self._csv is None:
                self._csv = pacsv.CSVWriter(self._open_stream(), self._schema, write_options=pacsv.WriteOptions(include_header=True, quoting_style="needed"))
            self._csv.write_table(table)

    def close(self) -> dict[str, Any]:
        """Flush, close and publish the file under its final name."""
        self._flush()
        if self._parquet is not None:
            self._parquet.close()
        if self._csv is not None:
            self._csv.close()
        if self._stream is not None:
            self._stream.close()
        if self._raw is not None and not self._raw.closed:
            self._raw.close()
        if not os.path.exists(self.tmp_path):
            self._write_empty()
        os.replace(self.tmp_path, self.path)
        return {"path": self.path, "rows": self.rows, "bytes": os.path.getsize(self.path)}

    def _write_empty(self) -> None:
        os.makedirs(os.path.dirname(self.tmp_path), exist_ok=True)
        if self.file_format == "parquet":
            assert self._schema is not None
            pq.write_table(self._schema.empty_table(), self.tmp_path, version="2.4")
            return
        with open(self.tmp_path, "wb") as raw:
            out: IO[bytes] = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if self.compressed else io.BytesIO()
            if self.file_format == "csv":
                header = ",".join(f'"{c}"' for c in self.columns).encode() + b"\n"
                out.write(header)
            if self.compressed:
                out.close()
            else:
                raw.write(out.getvalue())  # type: ignore[attr-defined]

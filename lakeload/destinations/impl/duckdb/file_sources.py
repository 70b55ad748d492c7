"""The `FROM` source that reads a table's package files into DuckDB, chosen by each file's format: DuckDB's own
readers, so no row passes through Python.

- Parquet (`.parquet`): `read_parquet([...], union_by_name = true)`; a column no file has is filled later
  (`sql.select_list`).
- jsonl (`.jsonl`, gzipped `.jsonl.gz`): `read_json` of newline-delimited records, every column of the table given
  its DuckDB type from the schema (`columns = {...}`), so DuckDB guesses no type and a key no record has is null.
  The writer renders values as dlt's jsonl writer does (decimals, `wei`, dates, times and timestamps as ISO
  strings, `json` columns as embedded JSON, `binary` as base64): the typed reader turns the strings back into
  values, and `binary` columns are read as text and decoded (`from_base64`), so the rows are those of the Parquet
  path.

Files of several formats (or compressions) are read each by its reader and stacked by column name.

>>> file_source(["/p/users.1.parquet"], {"name": "users", "columns": {}})
"read_parquet(['/p/users.1.parquet'], union_by_name = true)"
>>> print(file_source(["/p/users.1.jsonl.gz"], {"name": "users", "columns": {
...     "id": {"name": "id", "data_type": "bigint"}, "photo": {"name": "photo", "data_type": "binary"}}}))
(SELECT * REPLACE (from_base64("photo") AS "photo") FROM read_json(['/p/users.1.jsonl.gz'], \
format = 'newline_delimited', compression = 'gzip', columns = {'id': 'BIGINT', 'photo': 'VARCHAR'}))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeload.destinations.impl.duckdb.sql import (
    column_type,
    complete_columns,
    ident,
    literal,
    parquet_source,
)
from lakeload.destinations.impl.duckdb.wide_decimals import arrow_source, wide_columns
from lakeload.errors import DestinationError
from lakeload.schema.typing import TTable

if TYPE_CHECKING:
    import duckdb

READERS = {".parquet": ("parquet", ""), ".jsonl": ("jsonl", "none"), ".jsonl.gz": ("jsonl", "gzip")}


def file_kind(path: str, table_name: str) -> tuple[str, str]:
    """The format and compression of a package file, from its name (`.parquet`, `.jsonl`, `.jsonl.gz`)."""
    for suffix, kind in sorted(READERS.items(), key=lambda item: -len(item[0])):
        if path.endswith(suffix):
            return kind
    raise DestinationError(
        f"Table '{table_name}': the DuckDB destination cannot read the file {path}: it loads Parquet and jsonl files "
        "(.parquet, .jsonl, .jsonl.gz). Fix: run the pipeline with loader_file_format='parquet' or 'jsonl', then "
        "drop this package: pipeline.drop_pending_packages()."
    )


def json_source(paths: list[str], table: TTable, compression: str) -> str:
    """`read_json` of newline-delimited files with every column of `table` typed (binary decoded from base64)."""
    columns = complete_columns(table)
    types = ", ".join(
        f"{literal(c['name'])}: {literal('VARCHAR' if c.get('data_type') == 'binary' else column_type(c))}" for c in columns
    )
    reader = (
        f"read_json([{', '.join(literal(p) for p in paths)}], format = 'newline_delimited', "
        f"compression = {literal(compression)}, columns = {{{types}}})"
    )
    binary = [ident(c["name"]) for c in columns if c.get("data_type") == "binary"]
    if not binary:
        return reader
    decoded = ", ".join(f"from_base64({name}) AS {name}" for name in binary)
    return f"(SELECT * REPLACE ({decoded}) FROM {reader})"


def file_source(paths: list[str], table: TTable, connection: duckdb.DuckDBPyConnection | None = None) -> str:
    """The source of `table`'s rows in the files `paths`, each read by its format's reader (see the module); with
    the `connection`, Parquet files holding decimals wider than DuckDB's are read exactly through Arrow
    (`wide_decimals`)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for path in paths:
        groups.setdefault(file_kind(path, table["name"]), []).append(path)
    sources = [
        _parquet(files, table, connection) if file_format == "parquet" else json_source(files, table, compression)
        for (file_format, compression), files in groups.items()
    ]
    if len(sources) <= 1:
        return sources[0] if sources else parquet_source([])
    return "(" + " UNION ALL BY NAME ".join(f"SELECT * FROM {source}" for source in sources) + ")"


def _parquet(paths: list[str], table: TTable, connection: duckdb.DuckDBPyConnection | None) -> str:
    wide = wide_columns(connection, paths, table) if connection is not None else []
    return arrow_source(connection, paths, table, wide) if connection is not None and wide else parquet_source(paths)

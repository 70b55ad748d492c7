"""The SQL of the DuckDB view over one table's files, per file format.

Files are found by listing the table's folder and keeping the paths that start with the layout's table
prefix (no globbing: globs differ by backend). Column types come from the lakeload schema, so a view has
the same columns and types whatever the file format, and a table without files is an empty view.

>>> empty_select([{"name": "id", "data_type": "bigint"}])
'SELECT CAST(NULL AS BIGINT) AS "id" WHERE false'
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lakeload.kernel.filesystem.protocols import SFTP_PROTOCOLS
from lakeload.schema.typing import TColumn
from lakeload.sql.types import WEI_DUCKDB, duckdb_type

if TYPE_CHECKING:
    import duckdb

    from lakeload.destinations.impl.filesystem.client import FilesystemClient
    from lakeload.kernel.filesystem.layout import Layout

FORMATS = ("parquet", "jsonl", "csv")


def quote_ident(name: str) -> str:
    """A DuckDB identifier in double quotes. Example: `quote_ident('a"b')` -> `'"a""b"'`."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """A DuckDB string literal. Example: `quote_literal("it's")` -> `"'it''s'"`."""
    return "'" + text.replace("'", "''") + "'"


def file_format(name: str) -> str | None:
    """The format of a data file from its name (`.gz` allowed), or None for other files.

    >>> file_format("1.2.ab.jsonl.gz"), file_format("init")
    ('jsonl', None)
    """
    base = posixpath.basename(name)
    if base.endswith(".gz"):
        base = base[:-3]
    ext = base.rsplit(".", 1)[-1] if "." in base else ""
    return ext if ext in FORMATS else None


def list_table_files(client: FilesystemClient, layout: Layout, schema_name: str, table: str) -> list[str]:
    """Full fsspec paths of a table's data files, sorted: listed below the table folder, filtered by prefix."""
    files = []
    for relative in client.find(layout.table_dir(schema_name, table).rstrip("/")):
        if layout.is_table_file(relative, schema_name, table) and file_format(relative):
            files.append(client.path(relative))
    return sorted(files)


_sftp_caches: dict[int, str] = {}


def _local_copy(client: FilesystemClient, path: str) -> str:
    """A local copy of a remote file (data file names never change content, so a copy is reused)."""
    cache = _sftp_caches.get(id(client))
    if cache is None:
        cache = _sftp_caches[id(client)] = tempfile.mkdtemp(prefix="lakeload-sql-")
        weakref.finalize(client, shutil.rmtree, cache, True)
    local = os.path.join(cache, path.lstrip("/"))
    if not os.path.exists(local):
        os.makedirs(os.path.dirname(local), exist_ok=True)
        client.fs.get_file(path, local + ".part")
        os.replace(local + ".part", local)
    return local


def duckdb_path(client: FilesystemClient, path: str) -> str:
    """The path DuckDB reads: local paths as they are, object stores through the registered filesystem.

    SFTP files are copied to a local cache when the view is made (DuckDB's parallel range reads can
    deadlock a paramiko session), which matches the view's snapshot semantics.
    """
    if client.config.is_local:
        return path
    if client.config.protocol in SFTP_PROTOCOLS:
        return _local_copy(client, path)
    protocol = client.fs.protocol
    protocol = protocol[0] if isinstance(protocol, (tuple, list)) else protocol
    return f"{protocol}://{path}"


def _file_list(paths: Sequence[str]) -> str:
    return "[" + ", ".join(quote_literal(p) for p in paths) + "]"


def _struct(types: dict[str, str]) -> str:
    return "{" + ", ".join(f"{quote_literal(n)}: {quote_literal(t)}" for n, t in types.items()) + "}"


def describe_source(con: duckdb.DuckDBPyConnection, source: str) -> dict[str, str]:
    """Column names and DuckDB types of a FROM source (a reader call or a registered name)."""
    rows = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
    return {str(r[0]): str(r[1]) for r in rows}


def empty_select(columns: Sequence[TColumn]) -> str:
    """A query with no rows and the table's columns (for a table that has no files yet)."""
    items = [f"CAST(NULL AS {duckdb_type(c)}) AS {quote_ident(c['name'])}" for c in columns]
    return f"SELECT {', '.join(items)} WHERE false"


def project_columns(columns: Sequence[TColumn], present: dict[str, str], source: str) -> str:
    """Select the schema's columns from `source`: cast to the schema type, NULL when no file has the column."""
    items = []
    for column in columns:
        name, target = column["name"], duckdb_type(column)
        ident = quote_ident(name)
        found = present.get(name)
        if found is None:
            items.append(f"CAST(NULL AS {target}) AS {ident}")
        elif found == target or (target == WEI_DUCKDB and not found.startswith("DECIMAL")):
            items.append(ident)  # a wei stored wider than DuckDB's decimals stays as DuckDB reads it
        else:
            items.append(f"CAST({ident} AS {target}) AS {ident}")
    return f"SELECT {', '.join(items)} FROM {source}"


def parquet_select(con: duckdb.DuckDBPyConnection, columns: Sequence[TColumn], paths: Sequence[str]) -> str:
    """`read_parquet([...], union_by_name=true)`, columns cast to the schema types where the files differ."""
    source = f"read_parquet({_file_list(paths)}, union_by_name=true)"
    return project_columns(columns, describe_source(con, source), source)


def jsonl_select(columns: Sequence[TColumn], paths: Sequence[str]) -> str:
    """`read_json([...], format='newline_delimited', columns={...})`; binary columns are base64-decoded."""
    types = {c["name"]: ("VARCHAR" if c.get("data_type") == "binary" else duckdb_type(c)) for c in columns}
    source = f"read_json({_file_list(paths)}, format='newline_delimited', columns={_struct(types)})"
    items = [
        f"from_base64({quote_ident(c['name'])}) AS {quote_ident(c['name'])}" if c.get("data_type") == "binary"
        else quote_ident(c["name"])
        for c in columns
    ]
    return f"SELECT {', '.join(items)} FROM {source}"


def csv_select(con: duckdb.DuckDBPyConnection, columns: Sequence[TColumn], paths: Sequence[str]) -> str:
    """`read_csv([...], union_by_name=true, header=true, types={...})` over the columns the files have."""
    files = _file_list(paths)
    present = describe_source(con, f"read_csv({files}, union_by_name=true, header=true, all_varchar=true)")
    types = {c["name"]: duckdb_type(c) for c in columns if c["name"] in present}
    not_null = [
        quote_literal(c["name"]) for c in columns
        if c["name"] in present and c.get("nullable") is False and duckdb_type(c) == "VARCHAR"
    ]
    force = f", force_not_null=[{', '.join(not_null)}]" if not_null else ""
    source = f"read_csv({files}, union_by_name=true, header=true{force}, types={_struct(types)})"
    return project_columns(columns, types, source)


def view_select(con: duckdb.DuckDBPyConnection, columns: Sequence[TColumn], paths: Sequence[str]) -> str:
    """The SELECT of a table's view over `paths` (DuckDB paths); several formats are combined with UNION ALL.

    >>> view_select(None, [{"name": "id", "data_type": "bigint"}], ["/b/ds/t/1.a.jsonl.gz"])  # doctest: +ELLIPSIS
    'SELECT "id" FROM read_json([\\'/b/ds/t/1.a.jsonl.gz\\'], format=\\'newline_delimited\\', columns={\\'id\\': \\'BIGINT\\'})'
    """
    by_format: dict[str, list[str]] = {}
    for path in paths:
        fmt = file_format(path)
        if fmt:
            by_format.setdefault(fmt, []).append(path)
    if not by_format:
        return empty_select(columns)
    parts = []
    for fmt in FORMATS:
        group = by_format.get(fmt)
        if not group:
            continue
        if fmt == "parquet":
            parts.append(parquet_select(con, columns, group))
        elif fmt == "jsonl":
            parts.append(jsonl_select(columns, group))
        else:
            parts.append(csv_select(con, columns, group))
    return " UNION ALL ".join(parts)

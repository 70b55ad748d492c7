"""Opening a DuckDB database file for the destination, with a named error instead of DuckDB's `IOException`.

`connect(path)` opens the file (creating it, as DuckDB does); `database_errors(path)` turns a DuckDB I/O error met
while working on it (a read-only file found at the first write) into the same named error. Each
`DatabaseUnavailableError` names the file, what was found and the fix:

>>> unavailable("/nonexistent/dir/x.duckdb", 'IO Error: Cannot open file "/nonexistent/dir/x.duckdb": No such file or directory').reason
'its folder /nonexistent/dir does not exist'
>>> "one process" in str(unavailable("/d/x.duckdb", 'IO Error: Could not set lock on file "/d/x.duckdb": Conflicting lock is held in python (PID 7)'))
True
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Collection, Iterator

import duckdb

from lakeload.destinations.impl.duckdb.sql import ident, literal
from lakeload.errors import DatabaseUnavailableError

ANOTHER_FILE = "or load into another file (credentials=... of lakeload.destinations.duckdb, or [destination.duckdb] credentials)"


def unavailable(path: str, message: str) -> DatabaseUnavailableError:
    """The named error for DuckDB's `message` about the database `path`."""
    first = message.splitlines()[0] if message else ""
    folder = os.path.dirname(path) or "."
    if "Conflicting lock" in first or "Could not set lock" in first:
        holder = re.search(r"\(PID (\d+)\)", first)
        who = f"another process (PID {holder.group(1)})" if holder else "another process"
        return DatabaseUnavailableError(
            path, f"{who} holds it, and DuckDB lets one process write a database at a time",
            f"close the other process (or its connection) and run again, {ANOTHER_FILE}. The package stays pending and "
            "the next run loads it.",
        )
    if "No such file or directory" in first and not os.path.isdir(folder):
        return DatabaseUnavailableError(path, f"its folder {folder} does not exist",
                                        f"create the folder (mkdir -p {folder}), {ANOTHER_FILE}.")
    if "Is a directory" in first:
        return DatabaseUnavailableError(path, "it is a folder, not a file", f"name a file in it, {ANOTHER_FILE}.")
    if "not a valid DuckDB database" in first:
        return DatabaseUnavailableError(path, "the file exists but is not a DuckDB database",
                                        f"move the file away, {ANOTHER_FILE}.")
    if any(word in first for word in ("Permission denied", "Operation not permitted", "Read-only", "read-only")):
        return DatabaseUnavailableError(
            path, f"it is read-only ({first})",
            f"make the file and its folder writable (chmod u+w {path}), {ANOTHER_FILE}.",
        )
    return DatabaseUnavailableError(path, first or "DuckDB could not open it", f"check the path and its permissions, {ANOTHER_FILE}.")


def catalog_name(path: str) -> str:
    """The name DuckDB gives the catalog of the database file `path`: the file's name without its extension.

    >>> catalog_name("/data/bench.duckdb"), catalog_name(":memory:")
    ('bench', 'memory')
    """
    return "memory" if path == ":memory:" else os.path.splitext(os.path.basename(path))[0]


def connect(path: str, read_only: bool = False, schemas: Collection[str] = ()) -> duckdb.DuckDBPyConnection:
    """The database file `path` opened for writing (created when missing), or for reading only; a
    `DatabaseUnavailableError` when it cannot be.

    DuckDB cannot tell a schema from the database's catalog of the same name (`bench.duckdb` holding the dataset
    `bench`: "Ambiguous reference to catalog or schema", which stops dlt's own DuckDB destination): when one of
    `schemas` is named as the file, the file is attached under the catalog name `<name>_db` instead.
    """
    writable = read_only or path == ":memory:" or not os.path.isfile(path) or os.access(path, os.W_OK)
    if not writable:
        raise unavailable(path, "Permission denied")  # (DuckDB would open it read-only only when asked)
    catalog = catalog_name(path)
    try:
        if path == ":memory:" or catalog.lower() not in {s.lower() for s in schemas}:
            return duckdb.connect(path, read_only=read_only and path != ":memory:")
        connection = duckdb.connect(":memory:")
        alias = ident(f"{catalog}_db")
        connection.execute(f"ATTACH {literal(path)} AS {alias}" + (" (READ_ONLY)" if read_only else ""))
        connection.execute(f"USE {alias}")
        return connection
    except duckdb.Error as exc:
        raise unavailable(path, str(exc)) from None


@contextlib.contextmanager
def database_errors(path: str) -> Iterator[None]:
    """DuckDB's I/O errors inside the block as the named error (a file that opened but cannot be written)."""
    try:
        yield
    except duckdb.IOException as exc:
        raise unavailable(path, str(exc)) from None

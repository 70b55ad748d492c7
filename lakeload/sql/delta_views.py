"""DuckDB views over Delta tables: one snapshot of the Delta log, never a listing of the folder.

A Delta table's folder holds files of old versions too (replaced, overwritten, merged away), so its view
reads `deltalake.DeltaTable(...).to_pyarrow_dataset()` of one version: the version recorded with the last
completed load (`lakeload.delta.load_versions`), so that the views of all tables show the same loads,
or the latest one for tables without such a record. The Arrow dataset is registered
on the DuckDB connection under a name derived from the snapshot (`_lakeload_delta__<table>__<digest>`), and
the view selects the schema's columns from it: partition values come back as columns, and columns added
in later versions read as NULL for older files. delta-rs reads the bucket itself with its own
`storage_options`, so no credential appears in SQL text. Registrations belong to one DuckDB connection:
`register` must be called again on every cursor that queries the views.

>>> import tempfile
>>> import duckdb
>>> import pyarrow as pa
>>> from deltalake import write_deltalake
>>> from lakeload.destinations.impl.filesystem.client import FilesystemClient
>>> from lakeload.destinations.impl.filesystem.configuration import resolve_configuration
>>> tmp = tempfile.TemporaryDirectory()
>>> fs_client = FilesystemClient(resolve_configuration({"bucket_url": tmp.name}, "filesystem", None), "mydata")
>>> write_deltalake(fs_client.path("users"), pa.table({"id": [1, 2], "name": ["Alice", "Bob"]}))
>>> snapshot = open_snapshot(fs_client, "users")
>>> snapshot.version, len(snapshot.files)
(0, 1)
>>> con = duckdb.connect()
>>> columns = [{"name": "id", "data_type": "bigint"}, {"name": "name", "data_type": "text"}]
>>> view_select(con, columns, snapshot)
'SELECT "id", "name" FROM "_lakeload_delta__users__..."'
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lakeload.delta.tables import open_delta_table
from lakeload.schema.typing import TColumn
from lakeload.sql.views import describe_source, empty_select, project_columns, quote_ident

logger = logging.getLogger("lakeload.sql")

if TYPE_CHECKING:
    import duckdb
    import pyarrow.dataset as pads

    from lakeload.destinations.impl.filesystem.client import FilesystemClient


@dataclass(frozen=True)
class DeltaSnapshot:
    """One version of a Delta table: its data files (fsspec-style URIs) and the Arrow dataset over them."""

    table: str
    version: int
    files: tuple[str, ...]
    dataset: pads.Dataset = field(repr=False, compare=False)

    @property
    def key(self) -> tuple[int, tuple[str, ...]]:
        """What identifies the snapshot: a view is re-created only when this changes."""
        return self.version, self.files

    @property
    def registered_name(self) -> str:
        """The DuckDB name of the registered Arrow dataset (no path, no credentials)."""
        digest = hashlib.sha256(repr(self.key).encode()).hexdigest()[:10]
        return f"_lakeload_delta__{self.table}__{digest}"


def open_snapshot(client: FilesystemClient, table: str, version: int | None = None) -> DeltaSnapshot | None:
    """The snapshot of `table`'s Delta table at `version` (the latest when None, or when that version cannot
    be loaded any more, with a warning); None when the table has no `_delta_log` yet."""
    delta = open_delta_table(client, table)
    if delta is None:
        return None
    if version is not None and version != delta.version():
        try:
            delta.load_as_version(version)
        except Exception as exc:  # noqa: BLE001 - any delta-rs failure: the latest version is still readable
            logger.warning("Delta table '%s' cannot be read at version %s recorded with the last completed load "
                           "(%s); reading its latest version %s", table, version, type(exc).__name__, delta.version())
    files = tuple(sorted(delta.file_uris()))
    return DeltaSnapshot(table, delta.version(), files, delta.to_pyarrow_dataset())


def register(con: duckdb.DuckDBPyConnection, snapshots: Mapping[str, DeltaSnapshot | None]) -> None:
    """Register the Arrow datasets of `snapshots` on `con` (a new cursor sees none of the main connection's)."""
    for snapshot in snapshots.values():
        if snapshot is not None:
            con.register(snapshot.registered_name, snapshot.dataset)


def unregister(con: duckdb.DuckDBPyConnection, snapshot: DeltaSnapshot | None) -> None:
    """Drop a snapshot's registration once no view reads it."""
    if snapshot is not None:
        con.unregister(snapshot.registered_name)


def view_select(con: duckdb.DuckDBPyConnection, columns: Sequence[TColumn],
                snapshot: DeltaSnapshot | None) -> str:
    """The SELECT of a Delta table's view: the schema's columns, cast to the schema types, from the snapshot
    (registered on `con` here); an empty select when the table has not been created yet."""
    if snapshot is None:
        return empty_select(columns)
    register(con, {snapshot.table: snapshot})
    source = quote_ident(snapshot.registered_name)
    return project_columns(columns, describe_source(con, source), source)

"""DuckDB views over Iceberg tables: one snapshot of the table's metadata, never a listing of its folder.

DuckDB here has no `iceberg` extension it can install (offline, and none is published for DuckDB 2), so a view
reads an Arrow dataset over the data files of the table's current snapshot, opened through lakeload's
filesystem of the bucket (no credential in SQL text), with the table's Arrow schema: columns added by later
snapshots read as NULL in older files. lakeload and pyiceberg write copy-on-write (no delete files); a table
with delete files (another engine's merge-on-read) is read through a pyiceberg scan instead. The snapshot is
registered and its view made as a Delta table's is (`lakeload.sql.delta_views`, whose `DeltaSnapshot` it is), and
its files are fsspec paths as a listing gives them (`.spark()` reads them as Parquet files).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lakeload.iceberg.catalog import DatasetCatalog
from lakeload.iceberg.schema import iceberg_schema
from lakeload.sql.delta_views import DeltaSnapshot

if TYPE_CHECKING:
    from lakeload.destinations.impl.filesystem.client import FilesystemClient

logger = logging.getLogger("lakeload.sql")


def open_snapshot(client: FilesystemClient, table: str, recorded: tuple[int, str] | None = None) -> DeltaSnapshot | None:
    """The snapshot of `table`'s Iceberg table recorded with the last completed load (`recorded`: its sequence
    number and the table's uuid), else its current one; None when the table has not been created yet (or has no
    snapshot)."""
    import pyarrow.dataset as pads
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    iceberg = DatasetCatalog(client).load(table)
    if iceberg is None or iceberg.current_snapshot() is None:
        return None
    snapshot = iceberg.current_snapshot()
    assert snapshot is not None
    if recorded is not None and str(iceberg.metadata.table_uuid) == recorded[1]:
        at = [s for s in iceberg.snapshots() if s.sequence_number == recorded[0]]
        if at:
            snapshot = at[0]
        else:
            logger.warning("Iceberg table '%s' has no snapshot %s recorded with the last completed load (expired?); "
                           "reading its current one", table, recorded[0])
    tasks = list(iceberg.scan(snapshot_id=snapshot.snapshot_id).plan_files())
    schema = iceberg_schema(iceberg.schema().as_arrow())
    paths = sorted(client.fs._strip_protocol(task.file.file_path) for task in tasks)  # fsspec paths, as listings give
    if any(task.delete_files for task in tasks):
        dataset: pads.Dataset = pads.dataset(iceberg.scan(snapshot_id=snapshot.snapshot_id).to_arrow())
    else:
        filesystem = PyFileSystem(FSSpecHandler(client.fs))
        dataset = pads.dataset(paths, schema=schema, format="parquet", filesystem=filesystem)
    return DeltaSnapshot(table, int(snapshot.snapshot_id), tuple(paths), dataset)

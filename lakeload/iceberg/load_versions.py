"""Driver side: the Iceberg snapshots of each completed load, so lakeload's readers see whole loads.

As for Delta tables (`lakeload.delta.load_versions`, whose records and rules these are): right before a load's
`_dlt_loads` record, the loader writes `<dataset>/_lakeload_iceberg_versions/<schema>__<load_id>.json` with each
Iceberg table's current snapshot sequence number and table uuid, and merges it into `<schema>__latest.json` right
after. `pipeline.dataset()` and `pipeline.sql_client()` read each Iceberg table at the snapshot of that sequence
number (a table made anew, whose uuid differs, at its latest); a load in progress stays invisible.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lakeload.delta.load_versions import VersionsRecord, completed_record, write_record
from lakeload.errors import IcebergCatalogError
from lakeload.iceberg.catalog import DatasetCatalog
from lakeload.iceberg.tables import iceberg_table_names

if TYPE_CHECKING:
    from lakeload.destinations.impl.filesystem.client import FilesystemClient
    from lakeload.schema.schema import Schema

FOLDER = "_lakeload_iceberg_versions"
logger = logging.getLogger("lakeload.load")


def record_snapshots(client: FilesystemClient, schema: Schema, load_id: str, pipeline_name: str | None = None) -> VersionsRecord | None:
    """Write the current snapshot sequence number and uuid of every existing Iceberg table of `schema` for `load_id`."""
    record = VersionsRecord(load_id=load_id, schema_name=schema.name, versions={}, table_ids={})
    catalog = DatasetCatalog(client, pipeline_name)
    for name in iceberg_table_names(schema):
        try:
            table = catalog.load(name)
        except IcebergCatalogError as exc:  # not written by this load (it would have failed): it does not block it
            logger.warning("Iceberg table '%s' is left out of the snapshots recorded with load %s: %s", name, load_id, exc)
            continue
        snapshot = None if table is None else table.current_snapshot()
        if table is not None and snapshot is not None:
            record["versions"][name] = int(snapshot.sequence_number or 0)
            record["table_ids"][name] = str(table.metadata.table_uuid)
    return write_record(client, record, FOLDER)


def completed_snapshots(client: FilesystemClient, schema_name: str) -> dict[str, tuple[int, str]]:
    """(sequence number, table uuid) of each Iceberg table at the last completed loads of `schema_name` (empty:
    none recorded, read the latest)."""
    record = completed_record(client, schema_name, FOLDER)
    if record is None:
        return {}
    return {n: (v, record["table_ids"].get(n, "")) for n, v in record["versions"].items()}

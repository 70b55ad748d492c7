"""The Iceberg table format as the filesystem destination's loader sees it (`TableFormat`): an adapter over
`IcebergLoader` (executors write the data files, pyiceberg commits them through the dataset's catalog).

>>> IcebergFormat.capabilities.supports_merge("upsert"), IcebergFormat.capabilities.file_format
(True, 'parquet')
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from lakeload.delta.marks import REFRESH, LoadMark
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.table_format import (
    FormatLoad,
    FormatResult,
    TableFormat,
    TableFormatCapabilities,
    TableRefresh,
    register_table_format,
)
from lakeload.iceberg.loader import ICEBERG, IcebergLoader
from lakeload.schema.schema import Schema
from lakeload.storage.manifest import NormalizedPackage


class IcebergFormat(TableFormat):
    """Apache Iceberg tables: one snapshot per table and step, marked with the load (a rerun never commits twice)."""

    name = ICEBERG
    capabilities = TableFormatCapabilities(
        write_dispositions=("append", "replace", "merge"),
        merge_strategies=("upsert", "delete-insert", "insert-only", "scd2", "cdc"),
        merge_needs_key=True,
        hard_deletes=True,
        row_level_merge=True,
        file_format="parquet",
    )

    def load(self, work: FormatLoad) -> FormatResult:
        loader = IcebergLoader(work.spark, work.client, work.pipeline_name, work.working)
        package: NormalizedPackage = {**work.package, "files": work.files, "root_tables": work.root_tables}
        files, replaced = loader.load(work.package_dir, package, work.schema)
        return FormatResult(files=files, replaced_tables=replaced)

    def drop_table(self, refresh: TableRefresh, table_name: str) -> None:
        """Drop the table from the catalog, then delete its folder (data and metadata)."""
        from lakeload.iceberg.catalog import DatasetCatalog

        catalog = DatasetCatalog(refresh.client, refresh.pipeline_name)
        if catalog.load(table_name) is not None:
            catalog.catalog.drop_table(catalog.identifier(table_name))
        super().drop_table(refresh, table_name)

    def truncate_table(self, refresh: TableRefresh, table_name: str, overwritten: bool) -> None:
        """Empty the table in one snapshot that removes every file (its history kept), marked with the load so
        that a rerun does not empty it again; nothing when the package replaces it anyway."""
        from lakeload.iceberg.catalog import DatasetCatalog
        from lakeload.iceberg.target import IcebergTarget

        if overwritten:
            return
        import pyarrow as pa

        target = IcebergTarget(table_name, DatasetCatalog(refresh.client, refresh.pipeline_name), pa.schema([]))
        mark = LoadMark(refresh.pipeline_name, refresh.load_id, REFRESH)
        if target.open() is None or target.committed(mark):
            return
        target.commit([], [], "overwrite", mark)


    def record_completion(self, client: FilesystemClient, schema: Schema, load_id: str) -> Callable[[], None] | None:
        """The snapshot of every Iceberg table of the schema, recorded for the load; published as the schema's latest
        once the load's `_dlt_loads` record is written (`lakeload.iceberg.load_versions`)."""
        from lakeload.delta.load_versions import publish_latest
        from lakeload.iceberg.load_versions import FOLDER, record_snapshots

        record = record_snapshots(client, schema, load_id)
        return None if record is None else functools.partial(publish_latest, client, record, FOLDER)


register_table_format(IcebergFormat())

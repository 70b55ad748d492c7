"""The Delta table format as the filesystem destination's loader sees it (`TableFormat`): an adapter over
`DeltaLoader` (executors write the data files, delta-rs commits them; merges by `lakeload.delta.merge`) and the
version records of completed loads (`lakeload.delta.load_versions`).

>>> DeltaFormat.capabilities.supports_merge("scd2"), DeltaFormat.capabilities.supports_merge("cdc")
(True, True)
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from lakeload.delta.load_versions import publish_latest, record_versions
from lakeload.delta.loader import DeltaLoader
from lakeload.delta.marks import REFRESH, LoadMark
from lakeload.delta.storage import delta_error, storage_options
from lakeload.delta.tables import DELTA, open_delta_table
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.table_format import (
    FormatLoad,
    FormatResult,
    TableFormat,
    TableFormatCapabilities,
    TableRefresh,
    register_table_format,
)
from lakeload.schema.schema import Schema
from lakeload.storage.manifest import NormalizedPackage


class DeltaFormat(TableFormat):
    """Delta Lake tables: one commit per table and step, marked with the load (a rerun never commits twice)."""

    name = DELTA
    capabilities = TableFormatCapabilities(
        write_dispositions=("append", "replace", "merge"),
        merge_strategies=("upsert", "delete-insert", "insert-only", "scd2", "cdc"),  # a strategy `lakeload.delta.merge` learns is added here
        merge_needs_key=True,
        hard_deletes=True,
        row_level_merge=True,
        file_format="parquet",  # the kernel's Delta tasks rewrite the package's Parquet files as data files
    )

    def load(self, work: FormatLoad) -> FormatResult:
        loader = DeltaLoader(work.spark, work.client, work.pipeline_name, work.working)
        package: NormalizedPackage = {**work.package, "files": work.files, "root_tables": work.root_tables}
        files, replaced = loader.load(work.package_dir, package, work.schema)
        return FormatResult(files=files, replaced_tables=replaced)

    def truncate_table(self, refresh: TableRefresh, table_name: str, overwritten: bool) -> None:
        """Empty the table in one commit that removes every file (its history kept, readable by delta-rs), tagged
        with the load so that a rerun does not empty it again; nothing when the package replaces it anyway."""
        from deltalake.transaction import CommitProperties, Transaction

        table = open_delta_table(refresh.client, table_name)
        mark = LoadMark(refresh.pipeline_name, refresh.load_id, REFRESH)
        if overwritten or table is None or mark.found_in(table):
            return
        try:
            table.delete(commit_properties=CommitProperties(app_transactions=[Transaction(mark.app, mark.version)]))
        except Exception as exc:
            config = refresh.client.config
            error = delta_error(exc, config, storage_options(config), f"truncate Delta table '{table_name}' in")
        else:
            return
        raise error  # outside the handler: delta-rs' own error (it may name the bucket's secrets) is not chained

    def record_completion(self, client: FilesystemClient, schema: Schema, load_id: str) -> Callable[[], None] | None:
        """The version of every Delta table of the schema, recorded for the load; published as the schema's latest
        versions once the load's `_dlt_loads` record is written."""
        versions = record_versions(client, schema, load_id)
        return None if versions is None else functools.partial(publish_latest, client, versions)


register_table_format(DeltaFormat())

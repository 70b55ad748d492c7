"""The Delta table format as the filesystem destination's loader sees it (`TableFormat`): an adapter over
`DeltaLoader` (executors write the data files, delta-rs commits them; merges by `lakeload.delta.merge`) and the
version records of completed loads (`lakeload.delta.load_versions`).

>>> DeltaFormat.capabilities.supports_merge("upsert"), DeltaFormat.capabilities.supports_merge("scd2")
(True, False)
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from lakeload.delta.load_versions import publish_latest, record_versions
from lakeload.delta.loader import DeltaLoader
from lakeload.delta.tables import DELTA
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.table_format import (
    FormatLoad,
    FormatResult,
    TableFormat,
    TableFormatCapabilities,
    register_table_format,
)
from lakeload.schema.schema import Schema
from lakeload.storage.manifest import NormalizedPackage


class DeltaFormat(TableFormat):
    """Delta Lake tables: one commit per table and step, marked with the load (a rerun never commits twice)."""

    name = DELTA
    capabilities = TableFormatCapabilities(
        write_dispositions=("append", "replace", "merge"),
        merge_strategies=("upsert", "insert-only"),  # a strategy `lakeload.delta.merge` learns is added here
        merge_needs_key=True,
        hard_deletes=True,
        file_format="parquet",  # the kernel's Delta tasks rewrite the package's Parquet files as data files
    )

    def load(self, work: FormatLoad) -> FormatResult:
        loader = DeltaLoader(work.spark, work.client, work.pipeline_name, work.working)
        package: NormalizedPackage = {**work.package, "files": work.files, "root_tables": work.root_tables}
        files, replaced = loader.load(work.package_dir, package, work.schema)
        return FormatResult(files=files, replaced_tables=replaced)

    def record_completion(self, client: FilesystemClient, schema: Schema, load_id: str) -> Callable[[], None] | None:
        """The version of every Delta table of the schema, recorded for the load; published as the schema's latest
        versions once the load's `_dlt_loads` record is written."""
        versions = record_versions(client, schema, load_id)
        return None if versions is None else functools.partial(publish_latest, client, versions)


register_table_format(DeltaFormat())

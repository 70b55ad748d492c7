"""Load (driver side) of the Iceberg tables of a package: executors write, the driver commits with pyiceberg.

The Delta loader's tree loads and merges (`lakeload.delta.tree`, `lakeload.delta.merge`) run unchanged on
`IcebergTarget`s: the same Spark jobs write and rewrite the data files (into `<table>/data/`, with the
table's field ids), and each table of a tree gets one snapshot per step, marked with the load. Before any file
of a table is written, the table exists with every column of the load (`IcebergTarget.prepare`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeload.config.credentials import url_without_password
from lakeload.delta.loader import DeltaLoader
from lakeload.destinations.impl.filesystem.client import fsspec_kwargs
from lakeload.errors import DestinationError, IcebergConflictError, TableConflictError
from lakeload.iceberg.catalog import DatasetCatalog
from lakeload.iceberg.partitions import field_names, partition_splits, table_properties
from lakeload.iceberg.schema import iceberg_schema
from lakeload.iceberg.target import IcebergTarget
from lakeload.kernel.delta.files import DeltaFileSpec
from lakeload.kernel.filesystem.protocols import SFTP_PROTOCOLS
from lakeload.kernel.normalize.writers import arrow_schema, complete_columns
from lakeload.schema.schema import Schema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.destinations.impl.filesystem.client import FilesystemClient
    from lakeload.kernel.spark.working import WorkingStore

ICEBERG = "iceberg"


class IcebergLoader(DeltaLoader):
    """Loads the Iceberg tables of packages of one pipeline into one dataset (one catalog per loader)."""

    format_name = ICEBERG
    format_label = "Iceberg"
    conflict_error: type[TableConflictError] = IcebergConflictError

    def __init__(
        self, spark: SparkSession, client: FilesystemClient, pipeline_name: str, working: WorkingStore | None = None
    ) -> None:
        super().__init__(spark, client, pipeline_name, working)
        protocol = client.config.protocol.lower()
        if protocol in SFTP_PROTOCOLS or protocol == "memory":
            raise DestinationError(
                f"Bucket {url_without_password(client.config.bucket_url)!r} ({protocol}://) cannot hold Iceberg tables "
                "in lakeload yet. Use a local path or an object store (s3://, az://, abfss://, gs://) as bucket_url for "
                'table_format="iceberg", or load these tables without table_format. The package stays pending.'
            )
        self.catalog = DatasetCatalog(client, pipeline_name)

    def target(self, schema: Schema, table_name: str) -> IcebergTarget:  # type: ignore[override]
        table = schema.tables[table_name]
        return IcebergTarget(
            name=table_name, catalog=self.catalog, schema=iceberg_schema(arrow_schema(complete_columns(table))),
            retry=self.client.config.retry, partitions=partition_splits(table), partition_names=field_names(table),
            properties=table_properties(table),
        )

    def open_tree(self, schema: Schema, tree: list[str]) -> dict[str, IcebergTarget]:  # type: ignore[override]
        targets = {name: self.target(schema, name) for name in tree}
        for target in targets.values():
            target.open()
            target.check_partitions()
        return targets

    def completed_tables(self, schema: Schema) -> dict[str, tuple[int, str]]:
        return {}

    def file_spec(self, target: IcebergTarget, load_id: str, operation: str) -> DeltaFileSpec:  # type: ignore[override]
        target.prepare()  # the files carry the table's field ids: every column exists first
        config = self.client.config
        return DeltaFileSpec(
            bucket_url=config.bucket_url,
            fs_kwargs=fsspec_kwargs(config),
            table_dir=target.data_dir,
            schema=target.table_schema(),
            partition_by=(),
            splits=target.partitions,
            prefix=f"{load_id}-{operation}",
            is_local=config.is_local,
            retry=config.retry,
        )

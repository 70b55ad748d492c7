"""Destination adapters, as dlt's `dlt.destinations.adapters`: hints for one destination set on a resource.

`iceberg_adapter` gives an Iceberg table its partition spec and its table properties (applied when the table is
made), as dlt 1.31's adapter writes them (`x-iceberg-partition`, `x-iceberg-table-properties`), so a schema and a
script move between the two tools::

    from lakeload.destinations.adapters import iceberg_adapter, iceberg_partition

    events = iceberg_adapter(events, partition=[iceberg_partition.month("created_at"), "kind"],
                             table_properties={"write.target-file-size-bytes": "134217728"})
    pipeline.run(events, table_format="iceberg")

This module sits above the resources it adapts (`lakeload.extract`), as dlt's does: import-linter's layer
contract names the exception.

>>> iceberg_partition.truncate(4, "sku").to_dict()
{'transform': 'truncate', 'source_column': 'sku', 'param_value': 4}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lakeload.errors import ExtractError
from lakeload.extract.decorators import resource
from lakeload.extract.resource import Resource

PARTITION_HINT = "x-iceberg-partition"
TABLE_PROPERTIES_HINT = "x-iceberg-table-properties"
TRANSFORMS = ("identity", "year", "month", "day", "hour", "bucket", "truncate")


@dataclass(frozen=True)
class PartitionSpec:
    """One partition field: a `transform` of `source_column` (`param_value`: the bucket count or truncate width)."""

    source_column: str
    transform: str = "identity"
    param_value: int | None = None
    partition_field: str | None = None

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"transform": self.transform, "source_column": self.source_column}
        if self.partition_field:
            entry["partition_field"] = self.partition_field
        if self.param_value is not None:
            entry["param_value"] = self.param_value
        return entry


class iceberg_partition:  # noqa: N801 - dlt's name
    """Factories of partition fields, as dlt's `iceberg_partition`."""

    @staticmethod
    def identity(column_name: str) -> PartitionSpec:
        return PartitionSpec(column_name)

    @staticmethod
    def year(column_name: str, partition_field_name: str | None = None) -> PartitionSpec:
        return PartitionSpec(column_name, "year", partition_field=partition_field_name)

    @staticmethod
    def month(column_name: str, partition_field_name: str | None = None) -> PartitionSpec:
        return PartitionSpec(column_name, "month", partition_field=partition_field_name)

    @staticmethod
    def day(column_name: str, partition_field_name: str | None = None) -> PartitionSpec:
        return PartitionSpec(column_name, "day", partition_field=partition_field_name)

    @staticmethod
    def hour(column_name: str, partition_field_name: str | None = None) -> PartitionSpec:
        return PartitionSpec(column_name, "hour", partition_field=partition_field_name)

    @staticmethod
    def bucket(num_buckets: int, column_name: str, partition_field_name: str | None = None) -> PartitionSpec:
        return PartitionSpec(column_name, "bucket", num_buckets, partition_field_name)

    @staticmethod
    def truncate(width: int, column_name: str, partition_field_name: str | None = None) -> PartitionSpec:
        return PartitionSpec(column_name, "truncate", width, partition_field_name)


def iceberg_adapter(
    data: Any, partition: str | PartitionSpec | Sequence[str | PartitionSpec] | None = None,
    table_properties: dict[str, str] | None = None,
) -> Resource:
    """`data` (a resource, or data made one) with its Iceberg partition spec and table properties as hints."""
    if partition is None and table_properties is None:
        raise ExtractError("iceberg_adapter needs `partition` or `table_properties` (or both).")
    target = data if isinstance(data, Resource) else resource(data)
    hints: dict[str, Any] = {}
    if partition is not None:
        fields = [partition] if isinstance(partition, (str, PartitionSpec)) else list(partition)
        specs = [PartitionSpec(f) if isinstance(f, str) else f for f in fields]
        unknown = [s.transform for s in specs if s.transform not in TRANSFORMS]
        if unknown:
            raise ExtractError(f"Unknown Iceberg partition transform(s) {unknown}; use iceberg_partition's factories.")
        hints[PARTITION_HINT] = [s.to_dict() for s in specs]
    if table_properties is not None:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in table_properties.items()):
            raise ExtractError("iceberg_adapter's table_properties must map strings to strings.")
        hints[TABLE_PROPERTIES_HINT] = dict(table_properties)
    return target.apply_hints(additional_table_hints=hints)

"""Driver side: the Iceberg `DataFile` entries of Parquet files executors wrote, read from each file's footer.

Column statistics, sizes and counts come from the footer as pyiceberg reads them. A file holds the rows of one
partition only (`lakeload.kernel.delta.splits`), so its partition is the transform of any of its values: the
transform of the lower bound of each partition field's source column. pyiceberg derives it so only for
order-preserving transforms (it compares the transforms of both bounds); here `bucket` is derived too, which a
file of one bucket allows (the bounds of partition columns are kept whole: `write.metadata.metrics.column.*`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from lakeload.errors import DestinationError

if TYPE_CHECKING:
    from pyiceberg.io import FileIO
    from pyiceberg.io.fileformat import DataFileStatistics
    from pyiceberg.manifest import DataFile
    from pyiceberg.table.metadata import TableMetadata
    from pyiceberg.typedef import Record


def data_files(io: FileIO, metadata: TableMetadata, paths: Iterable[str]) -> Iterator[DataFile]:
    """The `DataFile` of each Parquet file at `paths` (full URIs) for a table of `metadata`."""
    for path in paths:
        yield _data_file(io, metadata, path)


def _data_file(io: FileIO, metadata: TableMetadata, path: str) -> DataFile:
    import pyarrow.parquet as pq
    from pyiceberg.io.pyarrow import (
        _check_pyarrow_schema_compatible,
        compute_statistics_plan,
        data_file_statistics_from_parquet_metadata,
        parquet_path_to_id_mapping,
    )
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat

    source = io.new_input(path)
    with source.open() as stream:
        footer = pq.read_metadata(stream)
    schema = metadata.schema()
    _check_pyarrow_schema_compatible(schema, footer.schema.to_arrow_schema(), format_version=metadata.format_version)
    statistics = data_file_statistics_from_parquet_metadata(
        parquet_metadata=footer, stats_columns=compute_statistics_plan(schema, metadata.properties),
        parquet_column_mapping=parquet_path_to_id_mapping(schema),
    )
    return DataFile.from_args(
        content=DataFileContent.DATA, file_path=path, file_format=FileFormat.PARQUET,
        partition=_partition(statistics, metadata, path), file_size_in_bytes=len(source), sort_order_id=None,
        spec_id=metadata.default_spec_id, equality_ids=None, key_metadata=None, **statistics.to_serialized_dict(),
    )


def _partition(statistics: DataFileStatistics, metadata: TableMetadata, path: str) -> Record:
    from pyiceberg.partitioning import partition_record_value
    from pyiceberg.typedef import Record

    schema = metadata.schema()
    values: list[Any] = []
    for field in metadata.spec().fields:
        bounds = statistics.column_aggregates.get(field.source_id)
        if bounds is None:  # only nulls in the file (or no statistics): the null partition
            values.append(None)
            continue
        transform = field.transform.transform(schema.find_field(field.source_id).field_type)
        low, high = (transform(partition_record_value(field, v, schema)) for v in (bounds.current_min, bounds.current_max))
        if (field.transform.preserves_order and low != high) or statistics.null_value_counts.get(field.source_id):
            raise DestinationError(
                f"The data file {path} holds rows of more than one partition of field '{field.name}' ({low} to {high}, "
                f"{statistics.null_value_counts.get(field.source_id, 0)} nulls); "
                "lakeload writes one partition per file. Load the package again to write its files anew."
            )
        values.append(low)
    return Record(*values)

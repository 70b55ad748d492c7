"""The Arrow data plane: in-process Arrow tables written and read with delta-rs.

Writes are one delta-rs commit: `overwrite` of a partitioned asset is a predicate overwrite (only the
slice's rows are replaced), of an unpartitioned one a table overwrite; `append` adds files. A new table is
partitioned by the slice's partition columns. Reads open a pyarrow dataset over the files the slice can
touch (pruned by the Delta log) and read only the asked columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.dataset as ds

from lakeload.dagster.config import WriteMode
from lakeload.dagster.metadata import OutputMetadata, materialization_metadata
from lakeload.dagster.predicates import arrow_filter
from lakeload.errors import ConfigurationError, DeltaTableNotFoundError, DestinationError
from lakeload.kernel.delta.files import delta_schema

if TYPE_CHECKING:
    from lakeload.dagster.connection import DeltaConnection


def check_rows_in_slice(connection: DeltaConnection, data: pa.Table, schema: pa.Schema) -> None:
    """Refuse rows that lie outside the partition being written (they would land in another partition)."""
    expression = arrow_filter(connection.slice, schema)
    if expression is None:
        return
    outside = data.num_rows - ds.dataset(data).count_rows(filter=expression)
    if outside:
        raise ConfigurationError(
            f"{outside} of {data.num_rows} rows written to {connection.slice.name} are outside the partition being "
            f"materialized ({connection.predicate(schema)}). An asset partition may only write its own rows: filter "
            "them, or check the partition_expr column."
        )


def _write_options(connection: DeltaConnection, schema: pa.Schema) -> dict[str, Any]:
    settings, table = connection.settings, connection.table
    predicate = connection.predicate(schema if table is None else connection.table_schema() or schema)
    overwrite = settings.mode == WriteMode.overwrite.value and (table is not None)
    options: dict[str, Any] = {"mode": "overwrite" if overwrite else "append"}  # for write_deltalake's overloads
    if table is None:
        options["partition_by"] = connection.slice.partition_columns or None
        options["configuration"] = settings.table_config
    elif overwrite and predicate is not None:
        options["predicate"] = predicate
    schema_mode = settings.schema_mode
    if schema_mode == "overwrite" and not (overwrite and predicate is None):
        schema_mode = "merge"  # the schema can only be replaced with the whole table
    options["schema_mode"] = schema_mode if table is not None else None
    return options


def write_arrow(connection: DeltaConnection, data: pa.Table) -> OutputMetadata:
    """Write `data` into the slice under the I/O manager's mode; returns the materialization metadata."""
    from deltalake import write_deltalake

    written = data.schema  # what the asset returned, before the cast to Delta's types
    schema = delta_schema(data.schema)
    data = data.cast(schema) if data.schema != schema else data
    if not connection.proceed():
        return materialization_metadata(connection, written, 0)
    check_rows_in_slice(connection, data, connection.table_schema() or data.schema)
    options = _write_options(connection, data.schema)
    try:
        write_deltalake(connection.uri, data, storage_options=dict(connection.location.storage_options), **options)
    except Exception as exc:
        error = connection.error(exc, "write Delta table")
    else:
        return materialization_metadata(connection, written, data.num_rows)
    raise error


def selected_columns(connection: DeltaConnection, schema: pa.Schema) -> list[str] | None:
    """The `columns` of the input's metadata, checked against the table."""
    columns = connection.slice.columns
    if columns is None:
        return None
    missing = [c for c in columns if c not in schema.names]
    if missing:
        raise ConfigurationError(
            f"`columns` metadata asks for {missing}, which Delta table {connection.slice.name} does not have "
            f"(columns: {', '.join(schema.names)})."
        )
    return list(columns)


def open_for_read(connection: DeltaConnection) -> pa.Schema:
    """Open the table for a read; a clear error when it does not exist."""
    if connection.open() is None:
        raise DeltaTableNotFoundError(
            f"Delta table {connection.slice.name} does not exist at {connection.uri}: materialize the upstream asset "
            "first, or check the I/O manager's root_uri and schema."
        )
    schema = connection.table_schema()
    assert schema is not None
    return schema


def read_arrow(connection: DeltaConnection) -> pa.Table:
    """The slice's rows (only the asked columns) from the current snapshot."""
    schema = open_for_read(connection)
    columns = selected_columns(connection, schema)
    table = connection.table
    assert table is not None
    try:
        dataset = table.to_pyarrow_dataset(file_pruning_predicate=connection.predicate(schema))
        result = dataset.to_table(columns=columns, filter=arrow_filter(connection.slice, schema))
    except (ConfigurationError, DestinationError):
        raise
    except Exception as exc:
        error = connection.error(exc, "read Delta table")
    else:
        return result
    raise error

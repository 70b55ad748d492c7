"""The metadata a materialization records: dagster-deltalake's keys, and lakeload's own beside them.

A team switching from dagster-deltalake sees its assets as before: `table_columns` (the columns and
Arrow types of the data written), `table_uri`, `Query` (the slice as SQL text), `dagster/table_name`
(`deltalake.<schema>.<table>`), `num_rows` and `size_bytes` (rows and bytes of the files of the
written slice: the partition of a partitioned asset, else the table). lakeload adds the table's row
count, its Delta schema, URI and version, the rows written and the partition predicate.

>>> select_statement(TableSlice("iris", "iris_dataset", partitions=(PartitionSlice("species", keys=("a",)),)))
"SELECT * FROM iris.iris_dataset WHERE\\nspecies in ('a')"
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from lakeload.dagster.slices import PartitionSlice, TableSlice

OutputMetadata = dict[str, "MetadataValue | str | int | float | None"]
"""The metadata of an output (what `handle_output` returns): a Dagster `MetadataValue`, a text or a number by name."""

if TYPE_CHECKING:
    from dagster import MetadataValue

    from lakeload.dagster.connection import DeltaConnection

DATABASE = "deltalake"  # dagster-deltalake's database name, the first part of `dagster/table_name`
WINDOW_FORMAT = "%Y-%m-%d %H:%M:%S"  # how dagster-deltalake's Query shows a time window's bounds


def _where(part: PartitionSlice) -> str:
    if part.keys is not None:
        keys = ", ".join("'" + key.replace("'", "''") + "'" for key in part.keys)
        return f"{part.column} in ({keys})"
    assert part.start is not None and part.end is not None
    return (f"{part.column} >= '{part.start.strftime(WINDOW_FORMAT)}' AND "
            f"{part.column} < '{part.end.strftime(WINDOW_FORMAT)}'")


def select_statement(table_slice: TableSlice) -> str:
    """The slice as dagster-deltalake's `Query` metadata shows it (text to read, never run).

    >>> select_statement(TableSlice("public", "t", columns=("a", "b")))
    'SELECT a, b FROM public.t'
    """
    columns = ", ".join(table_slice.columns) if table_slice.columns else "*"
    query = f"SELECT {columns} FROM {table_slice.schema}.{table_slice.table}"
    if not table_slice.partitions:
        return query
    return query + " WHERE\n" + " AND\n".join(_where(part) for part in table_slice.partitions)


def table_name(table_slice: TableSlice) -> str:
    """`dagster/table_name`: `deltalake.<schema>.<table>`, as dagster-deltalake names its tables.

    >>> table_name(TableSlice("iris", "iris_dataset"))
    'deltalake.iris.iris_dataset'
    """
    return f"{DATABASE}.{table_slice.schema}.{table_slice.table}"


def _columns(schema: pa.Schema) -> Any:
    from dagster import TableColumn, TableSchema

    return TableSchema(columns=[TableColumn(name=field.name, type=str(field.type)) for field in schema])


def _slice_stats(connection: DeltaConnection) -> OutputMetadata:
    """dagster-deltalake's `num_rows` and `size_bytes`: summed over the add actions of the slice's files."""
    from dagster import MetadataValue

    files = connection.slice_files()
    return {
        "num_rows": MetadataValue.int(sum(int(f["rows"] or 0) for f in files)),
        "size_bytes": MetadataValue.int(sum(int(f["size"]) for f in files)),
    }


def materialization_metadata(connection: DeltaConnection, written: pa.Schema, written_rows: int) -> OutputMetadata:
    """The metadata of a write of `written_rows` rows of Arrow schema `written` into the connection's slice,
    read from the table's snapshot after the write.

    >>> from lakeload.dagster.config import LocalConfig
    >>> from lakeload.dagster.connection import DeltaConnection
    >>> from lakeload.dagster.location import resolve_location
    >>> connection = DeltaConnection(resolve_location("/data/lake", LocalConfig()), TableSlice("iris", "iris_dataset"))
    >>> materialization_metadata(connection, pa.schema([("a", pa.int64())]), 3)["table_uri"]  # no table yet: no stats
    '/data/lake/iris/iris_dataset'
    """
    from dagster import MetadataValue

    table = connection.open()
    metadata: OutputMetadata = {
        "table_columns": MetadataValue.table_schema(_columns(written)),
        "table_uri": connection.uri,
        "Query": select_statement(connection.slice),
        "dagster/table_name": table_name(connection.slice),
        "dagster/uri": MetadataValue.path(connection.uri),
        "written_rows": written_rows,
    }
    if table is None:
        return metadata
    schema = connection.table_schema()
    assert schema is not None
    files = pa.table(table.get_add_actions(flatten=True))  # type: ignore[arg-type]
    metadata.update(_slice_stats(connection))
    metadata.update({
        "dagster/row_count": sum(v or 0 for v in files.column("num_records").to_pylist()) if files.num_rows else 0,
        "dagster/column_schema": _columns(schema),
        "delta_version": table.version(),
    })
    if connection.slice.partitions:
        metadata["dagster/partition_row_count"] = written_rows
        metadata["partition_predicate"] = connection.predicate(schema) or ""
    return metadata

"""The Spark data plane: DataFrames written by the executors as Delta data files, committed with delta-rs.

As in lakeload's Delta loads (`lakeload.delta`), rows never reach the driver: executors write Parquet
files into the table folder (Hive folders for partition columns) and return add-action metadata; the
driver checks every file lies in the partition being materialized and commits once: the new files plus
the removal of the slice's old files (`overwrite`), or the new files alone (`append`). Reads are a
DataFrame over the slice's files of the current snapshot, with only the asked columns.

The table must be partitioned by the partition columns of a partitioned asset (tables the I/O manager
creates are), so that a partition is a set of whole files.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING
from urllib.parse import unquote

import pyarrow as pa

from lakeload.dagster.config import WriteMode
from lakeload.dagster.delta_arrow import open_for_read, selected_columns
from lakeload.dagster.metadata import OutputMetadata, materialization_metadata
from lakeload.dagster.predicates import column_type, contains, typed_key, window_bounds
from lakeload.delta.commit import DeltaTarget
from lakeload.delta.spark_io import read_snapshot, write_frame
from lakeload.errors import ConfigurationError, DeltaConflictError
from lakeload.kernel.delta.files import DeltaFileSpec, delta_schema
from lakeload.kernel.delta.read import SnapshotSpec
from lakeload.kernel.filesystem.fs import url_to_fs

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from lakeload.dagster.connection import DeltaConnection
    from lakeload.dagster.slices import TableSlice
    from lakeload.delta.snapshot_files import RemoveEntry
    from lakeload.kernel.contracts import TAddAction


def arrow_schema(frame: DataFrame) -> pa.Schema:
    """The Delta-compatible Arrow schema of a DataFrame."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return delta_schema(to_arrow_schema(frame.schema, timezone="UTC"))


def spark_column(name: str) -> Column:
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def spark_condition(table_slice: TableSlice, schema: pa.Schema) -> Column | None:
    """The slice's rows as a Spark condition (values as literals, never as SQL text)."""
    from pyspark.sql import functions as F

    condition: Column | None = None
    for part in table_slice.partitions:
        arrow_type = column_type(schema, part.column, table_slice.name)
        column = spark_column(part.column)
        if part.keys is not None:
            this = column.isin([typed_key(k, arrow_type, part.column) for k in part.keys])
        else:
            low, high = window_bounds(part, arrow_type)
            this = (column >= F.lit(low)) & (column < F.lit(high))
        condition = this if condition is None else condition & this
    return condition


def _partition_by(connection: DeltaConnection) -> tuple[str, ...]:
    wanted = connection.slice.partition_columns
    if connection.table is None:
        return tuple(wanted)
    existing = connection.partition_columns()
    if not set(wanted) <= set(existing):
        raise ConfigurationError(
            f"Delta table {connection.slice.name} is partitioned by {existing}, not by the asset's partition column(s) "
            f"{wanted}: a Spark DataFrame can replace only whole partitions. Recreate the table partitioned by "
            f"{wanted}, or write the asset as Arrow, pandas or Polars (their writes rewrite the rows of other files)."
        )
    return tuple(existing)


def _remove(spec: DeltaFileSpec, adds: list[TAddAction]) -> None:
    """Delete data files the executors wrote that will not be committed."""
    fs, _ = url_to_fs(spec.bucket_url, spec.fs_kwargs)
    for add in adds:
        fs.rm_file(f"{spec.table_dir}/{add['path']}")


def _check_files(connection: DeltaConnection, spec: DeltaFileSpec, adds: list[TAddAction]) -> None:
    """Every written file must hold rows of the slice only; otherwise delete them all and refuse."""
    outside = [a for a in adds if not contains(connection.slice, spec.schema, a["partition_values"])]
    if not outside:
        return
    _remove(spec, adds)
    values = sorted({str(a["partition_values"]) for a in outside})[:5]
    raise ConfigurationError(
        f"The DataFrame written to {connection.slice.name} has rows outside the partition being materialized "
        f"(partition values {', '.join(values)}). An asset partition may only write its own rows: filter them, or "
        "check the partition_expr column. Nothing was committed."
    )


def write_spark(connection: DeltaConnection, frame: DataFrame) -> OutputMetadata:
    """Write `frame` into the slice under the I/O manager's mode; returns the materialization metadata."""
    if not connection.proceed():
        return materialization_metadata(connection, arrow_schema(frame), 0)
    partition_by = _partition_by(connection)
    location = connection.location
    target = DeltaTarget(connection.slice.name, connection.uri, dict(location.storage_options),
                         arrow_schema(frame), partition_by, connection.table)  # the snapshot proceed() opened
    overwrite = connection.settings.mode == WriteMode.overwrite.value and connection.table is not None
    replace_schema = overwrite and not connection.slice.partitions and connection.settings.schema_mode == "overwrite"
    spec = DeltaFileSpec(location.config.bucket_url, location.fs_kwargs, connection.target.folder,
                         target.schema if replace_schema else target.table_schema(), partition_by,
                         f"dagster-{uuid.uuid4().hex[:12]}", location.is_local)
    description = f"lakeload dagster: write {connection.slice.name}"
    adds = write_frame(frame.sparkSession, frame, spec, description, retry_hint="Nothing was committed.")
    _check_files(connection, spec, adds)
    old = connection.slice_files() if overwrite and connection.slice.partitions else []
    # log paths are URL-encoded; delta-rs encodes the paths of actions it is given
    removes: list[RemoveEntry] = [{"path": unquote(f["path"]), "size": f["size"], "partition_values": f["partition_values"]} for f in old]
    mode = "overwrite" if overwrite and not connection.slice.partitions else "append"
    try:
        target.commit(adds, removes, mode, configuration=connection.settings.table_config, replace_schema=replace_schema)
    except DeltaConflictError:
        _remove(spec, adds)
        raise DeltaConflictError(
            f"Another writer committed to Delta table {connection.slice.name} at the same time; nothing of this "
            "materialization was committed. Materialize the asset again."
        ) from None
    return materialization_metadata(connection, target.schema, sum(_rows(a) for a in adds))


def _rows(add: TAddAction) -> int:
    return int(json.loads(add["stats"])["numRecords"])


def read_spark(connection: DeltaConnection, spark: SparkSession | None = None) -> DataFrame:
    """A DataFrame over the slice's rows of the current snapshot (only the asked columns are read)."""
    from lakeload.spark.session import get_spark

    schema = open_for_read(connection)
    columns = selected_columns(connection, schema) or schema.names
    needed = [*columns, *(c for c in connection.slice.partition_columns if c not in columns)]
    location = connection.location
    spec = SnapshotSpec(location.config.bucket_url, location.fs_kwargs, connection.target.folder,
                        pa.schema([schema.field(c) for c in needed]), False, location.is_local)
    frame = read_snapshot(spark or get_spark(), spec, connection.slice_files())
    condition = spark_condition(connection.slice, schema)
    if condition is not None:
        frame = frame.filter(condition)
    return frame.select(*[spark_column(c) for c in columns])

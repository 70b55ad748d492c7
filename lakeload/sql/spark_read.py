"""Reading a table's files with Spark, typed by the lakeload schema (`Relation.spark()`).

Local buckets are read by Spark's own readers (`spark.read.parquet/json/csv`); other buckets are read on
the executors with fsspec and pyarrow (:mod:`lakeload.kernel.sql.read`) inside `mapInArrow`, so the
driver never downloads the data. Either way the DataFrame has the schema's columns, in order, with
`spark_type` types; a table without files gives an empty DataFrame.

Example (needs a Spark session and a dataset that has `users`)::

    frame = read_table(spark, client, "users")
    frame.columns[:2]   # ['id', 'name']
"""

from __future__ import annotations

import functools
import gzip
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from lakeload.destinations.impl.filesystem.client import fsspec_kwargs
from lakeload.kernel.sql.read import ReadPayload, read_batches
from lakeload.schema.typing import TColumn
from lakeload.spark.pandas_warning import map_in_arrow
from lakeload.spark.session_kind import default_parallelism
from lakeload.sql.types import spark_type
from lakeload.sql.views import file_format

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from lakeload.sql.client import FilesystemSqlClient


def arrow_type(column: TColumn) -> pa.DataType:
    """The Arrow type matching `spark_type(column)`. Example: `arrow_type({"data_type": "wei"})` -> decimal128(38, 0)."""
    from pyspark.sql import types as T

    spark = spark_type(column)
    if isinstance(spark, T.DecimalType):
        return pa.decimal128(spark.precision, spark.scale)
    simple: dict[type, pa.DataType] = {
        T.LongType: pa.int64(), T.DoubleType: pa.float64(), T.BooleanType: pa.bool_(),
        T.TimestampType: pa.timestamp("us", tz="UTC"), T.TimestampNTZType: pa.timestamp("us"),
        T.DateType: pa.date32(), T.BinaryType: pa.binary(),
    }  # fmt: skip
    return simple.get(type(spark), pa.string())


def spark_schema(columns: Sequence[TColumn]) -> StructType:
    from pyspark.sql import types as T

    return T.StructType([T.StructField(c["name"], spark_type(c), True) for c in columns])


def _typed(frame: DataFrame, columns: Sequence[TColumn], base64_binary: bool) -> DataFrame:
    """Select the schema's columns from `frame` (strings or native types), cast to their Spark types."""
    from pyspark.sql import functions as F

    present = set(frame.columns)
    selected: list[Column] = []
    for column in columns:
        name, target = column["name"], spark_type(column)
        if name not in present:
            selected.append(F.lit(None).cast(target).alias(name))
            continue
        value = F.col(f"`{name}`")
        if base64_binary and column.get("data_type") == "binary":
            value = F.unbase64(value)
        selected.append(value.cast(target).alias(name))
    return frame.select(*selected)


def _strings(names: Sequence[str]) -> StructType:
    from pyspark.sql import types as T

    return T.StructType([T.StructField(n, T.StringType(), True) for n in names])


def _csv_header(path: str) -> tuple[str, ...]:
    import csv

    opener: Any = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as f:
        return tuple(next(csv.reader(f), []))


def _read_local(spark: SparkSession, fmt: str, paths: list[str], columns: Sequence[TColumn]) -> DataFrame:
    uris = ["file://" + p for p in paths]
    if fmt == "parquet":
        return _typed(spark.read.option("mergeSchema", "true").parquet(*uris), columns, base64_binary=False)
    if fmt == "jsonl":
        raw = spark.read.schema(_strings([c["name"] for c in columns])).json(uris)
        return _typed(raw, columns, base64_binary=True)
    by_header: dict[tuple[str, ...], list[str]] = {}
    for path, uri in zip(paths, uris, strict=True):
        by_header.setdefault(_csv_header(path), []).append(uri)
    frames = [
        spark.read.csv(group, schema=_strings(header), header=True, escape='"', multiLine=True)
        for header, group in by_header.items()
    ]
    merged = functools.reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)
    return _typed(merged, columns, base64_binary=False)


def read_table(spark: SparkSession, client: FilesystemSqlClient, table: str) -> DataFrame:
    """A Spark DataFrame over the files of `table` (the view's snapshot when one exists, else listed now)."""
    columns = list(client.schema.complete_columns(table).values())
    schema = spark_schema(columns)
    if client.is_delta(table):
        return _read_delta(spark, client, table, columns)
    files = client.files_for(table)
    if not files:
        return spark.createDataFrame([], schema)
    config = client.client.config
    if not config.is_local:
        return _read_on_executors(spark, client, files, columns)
    by_format: dict[str, list[str]] = {}
    for path in files:
        by_format.setdefault(file_format(path) or "", []).append(path)
    has_time = any(c.get("data_type") == "time" for c in columns)
    frames = []
    for fmt, group in sorted(by_format.items()):
        if fmt == "parquet" and has_time:  # Spark's parquet reader rejects TIME columns
            frames.append(_read_on_executors(spark, client, group, columns))
        elif fmt:
            frames.append(_read_local(spark, fmt, group, columns))
    return functools.reduce(lambda a, b: a.unionByName(b), frames)


def _read_delta(spark: SparkSession, client: FilesystemSqlClient, table: str, columns: Sequence[TColumn]) -> DataFrame:
    """A Delta table at the snapshot its view reads (or the current one): files from the log, read on the executors."""
    from deltalake import DeltaTable

    from lakeload.delta.commit import DeltaTarget
    from lakeload.delta.spark_io import read_snapshot
    from lakeload.delta.storage import storage_options, table_uri
    from lakeload.kernel.delta.read import SnapshotSpec

    snapshot = client.delta_snapshot(table)
    if snapshot is None:
        return spark.createDataFrame([], spark_schema(columns))
    fs_client = client.client
    config = fs_client.config
    target = DeltaTarget(table, table_uri(config, fs_client.dataset_path, table), storage_options(config), pa.schema([]))
    target.table = DeltaTable(target.uri, version=snapshot.version, storage_options=target.storage_options)
    target.partition_by = tuple(target.table.metadata().partition_columns)
    spec = SnapshotSpec(config.bucket_url, fsspec_kwargs(config), f"{fs_client.dataset_path}/{table}", target.stored_schema(),
                        is_local=config.is_local)
    return _typed(read_snapshot(spark, spec, target.files()), columns, base64_binary=False)


def _read_on_executors(spark: SparkSession, client: FilesystemSqlClient, files: list[str],
                       columns: Sequence[TColumn]) -> DataFrame:
    """Read `files` inside `mapInArrow` with fsspec + pyarrow (credentials travel in the pickled payload)."""
    config = client.client.config
    payload = ReadPayload(
        bucket_url=config.bucket_url,
        fs_kwargs=fsspec_kwargs(config),
        columns=[(c["name"], str(c.get("data_type"))) for c in columns],
        schema=pa.schema([pa.field(c["name"], arrow_type(c)) for c in columns]),
    )
    parallelism = max(1, min(len(files), default_parallelism(spark)))
    from lakeload.delta.spark_io import local_frame

    paths = local_frame(spark, [(f,) for f in files], pa.schema([("path", pa.string())])).repartition(parallelism)
    return map_in_arrow(paths, functools.partial(read_batches, payload), spark_schema(columns))

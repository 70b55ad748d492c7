"""Driver side: Spark DataFrames in and out of Delta tables, without Delta jars.

- `write_frame` writes a DataFrame's rows as Delta data files on the executors and returns only the
  add-action metadata (one small JSON per file);
- `read_snapshot` is a DataFrame over chosen data files of a snapshot, read on the executors;
- `rewrite_files` rewrites data files without chosen rows on the executors (copy-on-write);
- `package_frame` reads a package's normalized Parquet files of one table.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq

import lakeload.kernel.spark.working as wio
from lakeload.errors import LoadError
from lakeload.kernel.delta.files import ACTION_SCHEMA, FILE_COLUMN, ROW_INDEX, DeltaFileSpec, write_task
from lakeload.kernel.delta.read import LISTING_SCHEMA, SnapshotSpec, file_name, read_task
from lakeload.kernel.delta.rewrite import REWRITE_SCHEMA, RewriteListing, RewriteSpec, rewrite_task
from lakeload.kernel.delta.splits import PARTITION_KEY
from lakeload.kernel.delta.splits import with_partition_keys as partition_keys_task
from lakeload.kernel.spark.working import WorkingStore
from lakeload.spark.errors import summarize
from lakeload.spark.job_progress import job_description
from lakeload.spark.local_paths import local_uri
from lakeload.spark.pandas_warning import map_in_arrow
from lakeload.spark.session_kind import default_parallelism

PARTITION_PREFIX = "__lakeload_p_"

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from lakeload.delta.snapshot_files import ListedFile, Rewritten, SnapshotFile
    from lakeload.kernel.contracts import TAddAction, TPartitionSplit
    from lakeload.storage.manifest import PackageFile


def spark_schema(schema: pa.Schema) -> StructType:
    """The Spark schema of an Arrow schema (timestamps with a zone: TimestampType)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


def with_partition_keys(frame: DataFrame, derived: tuple[tuple[int, TPartitionSplit], ...]) -> DataFrame:
    """`frame` with each transformed partition's values as a `PARTITION_KEY<position>` column, computed on the
    executors (`lakeload.kernel.delta.splits.with_partition_keys`); `frame` itself when there are none."""
    if not derived:
        return frame
    from pyspark.sql.types import IntegerType, StructField, StructType

    fields = list(frame.schema.fields)
    for position, split in derived:
        kind = frame.schema[split["column"]].dataType if split["transform"] == "truncate" else IntegerType()
        fields.append(StructField(f"{PARTITION_KEY}{position}", kind))
    body = functools.partial(partition_keys_task, tuple(s for _, s in derived), tuple(p for p, _ in derived))
    return map_in_arrow(frame, body, StructType(fields))


RETRY_LOAD = "The package stays pending; run `pipeline.load()`."


def write_frame(spark: SparkSession, frame: DataFrame, spec: DeltaFileSpec, description: str,
                retry_hint: str = RETRY_LOAD) -> list[TAddAction]:
    """Write `frame` as data files of the table on the executors; returns their add actions.

    A failed job is a `LoadError` ending with `retry_hint` (what the caller's user should do next)."""
    try:
        with job_description(spark, description):
            rows = map_in_arrow(frame, functools.partial(write_task, spec), spark_schema(ACTION_SCHEMA)).collect()
    except Exception as exc:
        raise LoadError(f"{description} failed: {summarize(exc)}. {retry_hint}") from None
    return [json.loads(row[0]) for row in rows]


def local_frame(spark: SparkSession, rows: list[tuple[Any, ...]], schema: pa.Schema) -> DataFrame:
    """A small DataFrame of driver-side metadata rows (file listings), through Arrow: a Python list given to
    `createDataFrame` as it is becomes a Python RDD, whose every use runs a job on Python workers.

    Example (needs a Spark session)::

        local_frame(spark, [("part-0.parquet", "{}")], LISTING_SCHEMA).count()   # 1
    """
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in schema]
    table = pa.table([pa.array(list(c), f.type) for c, f in zip(columns, schema, strict=True)], schema=schema)
    return spark.createDataFrame(table, spark_schema(schema))  # (the schema too: Connect infers none from 0 rows)


@dataclass
class Rewrite:
    """One table's part of `rewrite_files`: the rows to drop (file column and row index, as read with
    `snapshot_spec(..., with_file=True, with_row_index=True)`), the snapshot's files and how to read and write."""

    drops: DataFrame | None  # None: the table's rows are in the `tagged` frame given to `rewrite_files`
    files: list[SnapshotFile]
    spec: RewriteSpec


def rewrite_files(
    spark: SparkSession, tables: dict[str, Rewrite], description: str, retry_hint: str = RETRY_LOAD,
    tagged: DataFrame | None = None,
) -> Rewritten:
    """Rewrite the files that hold dropped rows without those rows, on the executors, for several tables in one
    Spark job: per table, the add actions of the new files and the snapshot files they replace. The dropped rows
    of tables whose `drops` is None are in `tagged`, with a `table` column naming their table.

    The positions are grouped by file; each task reads its files once with pyarrow and writes what is left.

    Example (a merge in progress; runs Spark)::

        done = rewrite_files(spark, {"users": Rewrite(matched.select(FILE_COLUMN, ROW_INDEX), files, spec)}, "merge")
        adds, replaced = done["users"]
    """
    from pyspark.sql import functions as F

    tables = {name: t for name, t in tables.items() if t.files}
    if not tables:
        return {}
    by_name = {(table, file_name(f["path"])): f for table, t in tables.items() for f in t.files}
    listing = {key: RewriteListing(f["path"], f["partition_values"]) for key, f in by_name.items()}
    parts = [t.drops.select(F.lit(n).alias("table"), FILE_COLUMN, ROW_INDEX) for n, t in tables.items() if t.drops is not None]
    if tagged is not None and any(t.drops is None for t in tables.values()):
        parts.append(tagged.select("table", FILE_COLUMN, ROW_INDEX))
    drops = functools.reduce(lambda a, b: a.unionByName(b), parts)
    # positions grouped by file (combined before the shuffle); the files' log entries travel with the task, not
    # as a DataFrame (a Python list made into one takes a job of Python workers of its own)
    positions = drops.groupBy("table", FILE_COLUMN).agg(F.collect_list(ROW_INDEX).alias("rows"))
    tasks = max(1, min(len(by_name), 2 * task_slots(spark)))
    specs = {name: t.spec for name, t in tables.items()}
    task = functools.partial(rewrite_task, specs, listing)
    try:
        rows = map_in_arrow(positions.repartition(tasks), task, spark_schema(REWRITE_SCHEMA)).collect()
    except Exception as exc:
        raise LoadError(f"{description} failed: {summarize(exc)}. {retry_hint}") from None
    done: Rewritten = {name: ([], []) for name in tables}
    for table, kind, value in rows:
        if kind == "add":
            done[table][0].append(json.loads(value))
        else:
            done[table][1].append(by_name[(table, file_name(value))])
    return done


def task_slots(spark: SparkSession) -> int:
    """How many tasks the session's executors run at once, from its master URL and executor settings.

    Example (needs a Spark session)::

        task_slots(spark)   # 2 on `local[2]`
    """
    master = spark.conf.get("spark.master", "local[*]") or "local[*]"
    local = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\d+)?\])?", master)
    if local:
        count = local.group(1) or "1"
        return (os.cpu_count() or 1) if count == "*" else int(count)
    cluster = re.fullmatch(r"local-cluster\[(\d+),\s*(\d+),\s*\d+\]", master)
    if cluster:
        return int(cluster.group(1)) * int(cluster.group(2))
    executors = int(spark.conf.get("spark.executor.instances", "2") or 2)
    return executors * int(spark.conf.get("spark.executor.cores", "1") or 1)


def read_snapshot(spark: SparkSession, spec: SnapshotSpec, files: Sequence[ListedFile]) -> DataFrame:
    """A DataFrame over `files` (their `path` and `partition_values` as in the log) in `spec.schema`.

    Local tables are read by Spark's own Parquet reader (vectorized, only the columns asked for); tables in
    buckets (and local ones with escaped partition folders) by the executors through fsspec and pyarrow
    (Spark here has no object-store connectors).
    """
    schema = spark_schema(spec.schema)
    if not files:
        return spark.createDataFrame([], schema)
    if spec.is_local and not any("%" in unquote(f["path"]) for f in files):
        # Hadoop paths mangle '%' (escaped partition values like `k=a%20b`): those tables go the executor way
        return _read_local(spark, spec, files)
    listing = local_frame(spark, [(f["path"], json.dumps(f["partition_values"])) for f in files], LISTING_SCHEMA)
    partitions = max(1, min(len(files), default_parallelism(spark) * 4))
    return map_in_arrow(listing.repartition(partitions), functools.partial(read_task, spec), schema)


def _read_local(spark: SparkSession, spec: SnapshotSpec, files: Sequence[ListedFile]) -> DataFrame:
    from pyspark.sql import functions as F

    partition_by = [c for c in files[0]["partition_values"] if c in spec.schema.names]
    stored = [f for f in spec.schema if f.name not in (FILE_COLUMN, ROW_INDEX) and f.name not in partition_by]
    paths = [local_uri(f"{spec.table_dir}/{unquote(f['path'])}") for f in files]
    frame = spark.read.schema(spark_schema(pa.schema(stored))).parquet(*paths)
    frame = frame.withColumn(FILE_COLUMN, F.col("_metadata.file_name"))
    if spec.with_row_index:
        frame = frame.withColumn(ROW_INDEX, F.col("_metadata.row_index"))
    if partition_by:
        rows = [(file_name(f["path"]), *[f["partition_values"][c] for c in partition_by]) for f in files]
        names = [FILE_COLUMN, *[f"{PARTITION_PREFIX}{c}" for c in partition_by]]
        lookup = local_frame(spark, rows, pa.schema([(n, pa.string()) for n in names]))
        frame = frame.join(F.broadcast(lookup), FILE_COLUMN)
        for column in partition_by:
            target = spark_schema(pa.schema([spec.schema.field(column)]))[0].dataType
            value = F.col(f"{PARTITION_PREFIX}{column}")
            if target.typeName() == "timestamp":  # log values are UTC wall times, whatever the session zone
                value = F.concat(value, F.lit("Z"))
            frame = frame.withColumn(column, value.cast(target))
    return frame.select(*[f"`{n}`" for n in spec.schema.names])


def snapshot_spec(spec: DeltaFileSpec, schema: pa.Schema, with_file: bool, with_row_index: bool = False) -> SnapshotSpec:
    """How to read back the table `spec` writes, in `schema` (plus the file column when `with_file`, and the
    row's position in its file when `with_row_index`)."""
    if with_file:
        schema = schema.append(pa.field(FILE_COLUMN, pa.string()))
    if with_row_index:
        schema = schema.append(pa.field(ROW_INDEX, pa.int64()))
    return SnapshotSpec(spec.bucket_url, spec.fs_kwargs, spec.table_dir, schema, with_file, spec.is_local, with_row_index)


def package_frame(spark: SparkSession, files: list[PackageFile], working: WorkingStore | None = None) -> DataFrame:
    """The rows of one table in a package (its normalized Parquet files, at local paths or in `working`)."""
    if working is None or not any(wio.is_remote(f["path"]) for f in files):
        return spark.read.option("mergeSchema", "true").parquet(*[local_uri(f["path"]) for f in files])
    schemas = []
    for f in files:  # footers only, read by the driver: the files of one table share its final schema
        with wio.open_input(f["path"], working) as raw:
            schemas.append(pq.ParquetFile(raw).schema_arrow)
    spec = SnapshotSpec(working.url, dict(working.options), working.url, pa.unify_schemas(schemas), False, is_local=False)
    listed: list[ListedFile] = [{"path": wio.relative(f["path"], working.url), "partition_values": {}} for f in files]
    return read_snapshot(spark, spec, listed)


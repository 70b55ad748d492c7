"""Parquet and CSV files as one Spark DataFrame, read by Spark's executors, never by the driver.

- Local folders: Spark's own readers (`spark.read.parquet` with `mergeSchema`, `spark.read.csv` with
  `header` and `inferSchema`), so Spark infers the types; except Parquet files with nanosecond
  timestamps (pandas writes those), which Spark refuses: they are read like bucket files.
- Buckets (Spark here has no s3a/gs/abfs connectors): executors read the files through fsspec and
  pyarrow (`lakeload.kernel.spark.file_read`). The schema is fixed on the driver from metadata only: the union of the
  Parquet footers, or of pyarrow's CSV inference over each file's first block (types that disagree become
  `double` or text); columns a file lacks are null.
- `memory://` buckets live in the driver process, so the driver reads those.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from lakeload.config.bucket_credentials import secret_values
from lakeload.destinations.impl.filesystem.client import bucket_error, open_filesystem
from lakeload.errors import SourceError
from lakeload.kernel.spark.file_read import FILE_NAME_COLUMN, FileReadPlan, file_batches, read_file
from lakeload.sources.listing import ListedFile, SourceConfiguration
from lakeload.spark.local_paths import local_uri
from lakeload.spark.pandas_warning import map_in_arrow

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

CSV_INFER_BYTES = 1 << 20
MAX_TASKS = 4096
_UNSIGNED = {8: pa.int16(), 16: pa.int32(), 32: pa.int64()}


def spark_arrow_type(arrow_type: pa.DataType) -> pa.DataType:
    """An Arrow type Spark converts, for one it does not (unsigned ints, ns timestamps, null, large types).

    >>> spark_arrow_type(pa.timestamp("ns", tz="Europe/Berlin"))
    TimestampType(timestamp[us, tz=Europe/Berlin])
    """
    t = arrow_type
    if pa.types.is_unsigned_integer(t):
        return _UNSIGNED.get(t.bit_width, pa.decimal128(20, 0))
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz=t.tz)
    if pa.types.is_dictionary(t):
        return spark_arrow_type(t.value_type)
    if pa.types.is_null(t) or pa.types.is_large_string(t) or pa.types.is_time(t):
        return pa.string()
    if pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_date64(t):
        return pa.date32()
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(spark_arrow_type(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, spark_arrow_type(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(spark_arrow_type(t.key_type), spark_arrow_type(t.item_type))
    return t


def spark_schema(arrow_schema: pa.Schema, add_file_name: bool) -> tuple[Any, pa.Schema]:
    """The Spark `StructType` for `arrow_schema` and the exact Arrow schema Spark expects back from tasks."""
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

    fields = [pa.field(f.name, spark_arrow_type(f.type)) for f in arrow_schema]
    if add_file_name:
        fields.append(pa.field(FILE_NAME_COLUMN, pa.string()))
    try:
        struct = from_arrow_schema(pa.schema(fields), prefer_timestamp_ntz=True)
    except Exception as exc:
        raise SourceError(f"The files' schema cannot become a Spark schema ({exc}): {arrow_schema}") from None
    return struct, to_arrow_schema(struct, timezone="UTC")


def files_frame(spark: SparkSession, config: SourceConfiguration, files: list[ListedFile], file_format: str,
                add_file_name: bool = False) -> DataFrame:
    """One DataFrame over all `files` (Parquet or CSV with a header row)."""
    local = config.protocol == "file"
    if local and file_format == "csv":
        return _local_frame(spark, files, file_format, add_file_name)
    fs, _ = open_filesystem(config.bucket_url, config.options)
    try:
        schema, csv_types = _driver_schema(fs, files, file_format)
    except Exception as exc:
        error = bucket_error(exc, config.bucket_url, config.options, f"read the {file_format} schema of {files[0].url} in", SourceError)
        raise error from None
    if local and not _has_nanos(schema):
        return _local_frame(spark, files, file_format, add_file_name)
    struct, expected = spark_schema(schema, add_file_name)
    plan = FileReadPlan(
        tuple(f.path for f in files), tuple(f.url for f in files), file_format, expected, csv_types, add_file_name,
        config.bucket_url, config.options, tuple(secret_values(config.options)),
    )
    if config.protocol == "memory":
        table = pa.Table.from_batches([b for i in range(len(files)) for b in read_file(fs, plan, i)], schema=expected)
        return spark.createDataFrame(table)
    tasks = min(len(files), MAX_TASKS)
    return map_in_arrow(spark.range(0, len(files), 1, numPartitions=tasks), file_batches(plan), struct)


def _local_frame(spark: SparkSession, files: list[ListedFile], file_format: str, add_file_name: bool) -> DataFrame:
    from pyspark.sql import functions as F  # noqa: N812

    paths = [local_uri(f.path) for f in files]
    if file_format == "parquet":
        frame = spark.read.option("mergeSchema", "true").parquet(*paths)
    else:
        frame = spark.read.csv(paths, header=True, inferSchema=True)
    if add_file_name:  # Spark's path is a URI (file:/x, %-escaped): back to the source's file:///x form
        decoded = F.expr("url_decode(replace(_metadata.file_path, '+', '%2B'))")
        frame = frame.withColumn(FILE_NAME_COLUMN, F.concat(F.lit("file://"), F.regexp_replace(decoded, "^file:(//)?", "")))
    return frame


def _parquet_schema(fs: Any, files: list[ListedFile]) -> pa.Schema:
    """The union of the files' Parquet footers (read in threads; no rows)."""
    import pyarrow.parquet as pq

    def footer(path: str) -> pa.Schema:
        with fs.open(path, "rb") as f:
            return pq.read_schema(f)

    with ThreadPoolExecutor(max_workers=8) as pool:
        schemas = list(pool.map(footer, [f.path for f in files]))
    return pa.unify_schemas(schemas, promote_options="permissive")


def _has_nanos(schema: pa.Schema | pa.DataType) -> bool:
    """Whether a (nested) field is a nanosecond timestamp, which Spark's Parquet reader refuses."""
    if isinstance(schema, pa.Schema):
        return any(_has_nanos(f.type) for f in schema)
    if pa.types.is_timestamp(schema):
        return schema.unit == "ns"
    return any(_has_nanos(schema.field(i).type) for i in range(schema.num_fields))


def _driver_schema(fs: Any, files: list[ListedFile], file_format: str) -> tuple[pa.Schema, dict[str, pa.DataType]]:
    """Metadata only: the union of the Parquet footers, or of the CSV types of every file's first block."""
    if file_format == "parquet":
        return _parquet_schema(fs, files), {}
    with ThreadPoolExecutor(max_workers=8) as pool:
        schemas = list(pool.map(lambda f: _csv_block_schema(fs, f.path), files))
    schema = _union_csv(schemas)
    return schema, {field.name: field.type for field in schema}


def _csv_block_schema(fs: Any, path: str) -> pa.Schema:
    import pyarrow.csv as pacsv

    compression = "gzip" if path.lower().endswith((".gz", ".gzip")) else None
    with fs.open(path, "rb", compression=compression) as f:
        return pacsv.open_csv(f, read_options=pacsv.ReadOptions(block_size=CSV_INFER_BYTES)).schema


def _union_csv(schemas: list[pa.Schema]) -> pa.Schema:
    """Every column of every file, in order of first appearance; types that disagree become the wider
    number (`double`) or text, so no file's values are lost."""
    types: dict[str, pa.DataType] = {}
    for schema in schemas:
        for field in schema:
            known = types.get(field.name)
            if known is None or pa.types.is_null(known):
                types[field.name] = field.type
            elif known != field.type and not pa.types.is_null(field.type):
                numeric = all(pa.types.is_integer(t) or pa.types.is_floating(t) for t in (known, field.type))
                types[field.name] = pa.float64() if numeric else pa.string()
    return pa.schema([pa.field(name, t) for name, t in types.items()])

"""Extract and normalize (driver side): a Spark DataFrame item stored as Parquet parts in the working bucket.

On local folders Spark writes and reads the parts itself; on a bucket (no Hadoop connector here) Python
tasks do (`lakeload.kernel.spark.frame_parts`), and `_parts.json` beside the parts records the
DataFrame's Spark schema and the rows of each part, in partition order (the row offsets of normalize).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

import lakeload.kernel.spark.working as wio
from lakeload.kernel.spark.frame_parts import RESULT_SCHEMA, PartsSpec, read_parts, write_parts
from lakeload.kernel.spark.working import WorkingStore
from lakeload.spark.pandas_warning import map_in_arrow

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

PARTS_FILE = "_parts.json"


def write_frame_parts(frame: DataFrame, folder: str, working: WorkingStore | None) -> None:
    """Write `frame` as Parquet parts under the bucket URL `folder` (executors upload them), then `_parts.json`."""
    rows = map_in_arrow(frame, write_parts(PartsSpec(folder, working)), RESULT_SCHEMA).collect()
    parts = dict(_name_and_rows(orjson.loads(row[0])) for row in rows)
    with wio.local_target(wio.join(folder, PARTS_FILE), working) as local, open(local, "wb") as f:
        f.write(orjson.dumps({"schema": frame.schema.jsonValue(), "parts": parts}))


def _name_and_rows(meta: dict[str, Any]) -> tuple[str, int]:
    return str(meta["name"]), int(meta["rows"])


def read_frame_parts(
    spark: SparkSession, folder: str, working: WorkingStore | None, file_column: str, row_column: str
) -> tuple[DataFrame, dict[str, int]]:
    """The DataFrame stored under `folder`, with each row's part file name and row index in it, and the row
    offset of every part (like `_metadata.file_name` / `row_index` on local folders)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    stored = orjson.loads(wio.read_bytes(wio.join(folder, PARTS_FILE), working))
    struct = StructType.fromJson(stored["schema"])
    full = StructType([*struct.fields, StructField(file_column, StringType()), StructField(row_column, LongType())])
    names = tuple(stored["parts"])
    spec = PartsSpec(folder, working, names, to_arrow_schema(full, timezone="UTC"), file_column, row_column)
    frame = map_in_arrow(spark.range(0, len(names), 1, numPartitions=max(1, len(names))), read_parts(spec), full)
    offsets, start = {}, 0
    for name in names:
        offsets[name] = start
        start += int(stored["parts"][name])
    return frame, offsets



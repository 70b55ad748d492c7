"""Small driver-side listings become DataFrames through Arrow (no Python RDD), empty ones with their schema
(a Connect session infers none from 0 rows: tests/spark/test_connect_pipeline.py runs them there)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from lakeload.delta.spark_io import local_frame
from lakeload.kernel.delta.read import LISTING_SCHEMA


def test_local_frames_keep_rows_types_and_the_schema_of_an_empty_listing(spark: Any) -> None:
    rows = [("part-0.parquet", "{}"), ("k=a%20b/part-1.parquet", '{"k": null}')]
    frame = local_frame(spark, rows, LISTING_SCHEMA)
    assert [tuple(r) for r in frame.collect()] == rows
    typed = local_frame(spark, [("a", 1), ("b", None)], pa.schema([("name", pa.string()), ("n", pa.int64())]))
    assert typed.schema.simpleString() == "struct<name:string,n:bigint>"
    empty = local_frame(spark, [], pa.schema([("_dlt_id", pa.string())]))
    assert empty.collect() == [] and empty.columns == ["_dlt_id"]
    assert "ExistingRDD" not in frame._jdf.queryExecution().toString()  # an Arrow local relation, no Python RDD

"""Normalize (driver side) the DataFrame splits of a package: plan each against the folded schema, then
let Spark write every table of them with the final schema.

A DataFrame split is the Parquet folder Spark wrote at extract. Planning reads only its schema and
Parquet footers (row counts per file, for the occurrence numbers of Delta merge tables); the rows
are flattened and written by Spark jobs (`spark_frames`, `kernel.normalize.frames`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import orjson

import lakeload.kernel.spark.working as wio
from lakeload.extract.spark_parts import read_frame_parts
from lakeload.kernel.contracts import TPackageFile
from lakeload.kernel.normalize.coerce import RowCoercer
from lakeload.kernel.normalize.contract import ContractChecker
from lakeload.kernel.normalize.frames import META_SCHEMA, FrameWriteSpec, write_partition
from lakeload.kernel.normalize.plan import NormalizePlan, Split
from lakeload.kernel.normalize.writers import complete_columns
from lakeload.normalize.spark_frames import FILE, ROW, FramePlan, plan_frame
from lakeload.schema.typing import TTable
from lakeload.spark.job_progress import job_description
from lakeload.spark.local_paths import local_uri
from lakeload.spark.pandas_warning import map_in_arrow

if TYPE_CHECKING:
    from pyspark.sql import SparkSession



def _part_files(folder: str) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".parquet") and not n.startswith((".", "_")))


def _row_offsets(folder: str) -> dict[str, int]:
    """Where each part file's rows start in the split (from Parquet footers: metadata only)."""
    import pyarrow.parquet as pq

    offsets, start = {}, 0
    for name in _part_files(folder):
        offsets[name] = start
        start += pq.read_metadata(os.path.join(folder, name)).num_rows
    return offsets


def plan_frame_split(spark: SparkSession, plan: NormalizePlan, split: Split, tables: dict[str, TTable]) -> FramePlan:
    """The schema additions and table DataFrames of one DataFrame split (no Spark job runs)."""
    from pyspark.sql import functions as F

    if wio.is_remote(split.path):
        frame, offsets = read_frame_parts(spark, split.path, plan.working, FILE, ROW)
    else:
        frame = spark.read.parquet(local_uri(split.path)).select(
            "*", F.col("_metadata.file_name").alias(FILE), F.col("_metadata.row_index").alias(ROW)
        )
        root = plan.normalizer.roots.get(split.root_table)
        offsets = _row_offsets(split.path) if root is not None and root.occurrence else {}  # only Delta merges number rows

    def make_coercer(local: dict[str, TTable]) -> RowCoercer:
        checker = ContractChecker(plan.contracts, local, arrow=True) if plan.contracts is not None else None
        return RowCoercer(local, plan.naming, plan.detections, plan.default_hints, contracts=checker)

    return plan_frame(frame, split.root_table, tables, plan.normalizer, make_coercer, split.index, offsets)


def write_frame_tables(
    spark: SparkSession,
    plan: NormalizePlan,
    planned: list[tuple[Split, FramePlan]],
    on_progress: Callable[[int], None] | None = None,
) -> list[TPackageFile]:
    """Write every table of the planned DataFrame splits with its final schema; returns the files."""
    files: list[TPackageFile] = []
    for split, frame_plan in planned:
        for table in frame_plan.tables:
            spec = FrameWriteSpec(
                table=table.name,
                columns=complete_columns(plan.tables[table.name]),
                file_format=plan.format_for(split.root_table),
                compressed=plan.compressed,
                output_dir=plan.output_dir,
                split=split.index,
                working=plan.working,
                limits=plan.file_limits,
            )
            with job_description(spark, f"lakeload normalize {plan.load_id}: {table.name}"):
                rows = map_in_arrow(table.frame, write_partition(spec), META_SCHEMA).collect()
            files += [orjson.loads(row[0]) for row in rows]
        if on_progress is not None:
            on_progress(1)
    for f in files:
        if f["rows"]:
            plan.tables[f["table"]].setdefault("x-normalizer", {})["seen-data"] = True
    return files

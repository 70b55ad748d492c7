"""Executor-safe: a summary of a package's merge keys, computed in one Spark task (a Delta merge's first question).

Before a merge (`lakeload.delta.merge`) plans its joins it must know whether any key arrives twice (then the
duplicates are ranked) and each primary key column's lowest and highest value (to skip data files whose
statistics cannot hold a match). For a package of up to `TASK_ROWS` root rows, one task reads only the key
columns of the package's files with pyarrow and answers both: one short job instead of Spark's two-shuffle
aggregation, which in a fresh process is also its first SQL query (its code generation and warm-up).

Imports only pyarrow and executor-safe lakeload modules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import lakeload.kernel.spark.working as wio

TASK_ROWS = 5_000_000  # root rows up to which one task summarizes the keys (int64 keys: ~40 MB in the task)


@dataclass
class KeyColumns:
    """Which columns a key summary reads; shipped to the executor."""

    keys: list[str]  # the key (primary key and partition columns): duplicates are counted over these
    ranged: list[str]  # the columns whose lowest and highest values are wanted


class KeySummary(TypedDict):
    """What comes back: the most rows sharing one key, and [lowest, highest] of each ranged column whose
    values travel exactly as JSON (integers and strings; others are left out: no pruning by them)."""

    most: int
    ranges: dict[str, list[Any]]


def _exact_in_json(arrow_type: pa.DataType) -> bool:
    return bool(pa.types.is_integer(arrow_type) or pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type))


def key_summary(columns: KeyColumns, files: list[str]) -> KeySummary:
    """A `run_tasks` task: read the key columns of the package `files` (one table's) and summarize them."""
    wanted = list(dict.fromkeys([*columns.keys, *columns.ranged]))
    parts = []
    for path in files:
        with wio.open_input(path) as raw:
            parquet = pq.ParquetFile(raw)
            parts.append(parquet.read(columns=[c for c in wanted if c in parquet.schema_arrow.names]))
    keys = pa.concat_tables(parts, promote_options="permissive")
    for name in wanted:  # a column no file has: all null
        if name not in keys.column_names:
            keys = keys.append_column(name, pa.nulls(keys.num_rows))
    if keys.num_rows == 0:
        return {"most": 0, "ranges": {}}
    counted = keys.select(columns.keys).group_by(columns.keys).aggregate([([], "count_all")])  # nulls group together
    ranges: dict[str, list[Any]] = {}
    for name in columns.ranged:
        column = keys.column(name)
        if _exact_in_json(column.type) and column.null_count < len(column):
            low, high = pc.min_max(column).values()
            ranges[name] = [low.as_py(), high.as_py()]
    return {"most": pc.max(counted.column("count_all")).as_py() or 0, "ranges": ranges}

"""Driver side: the incoming rows of a Delta merge (`lakeload.delta.merge`) that win, one per key.

One pass over the incoming keys tells whether any key arrives twice and gives each primary key column's lowest
and highest incoming value (for file pruning, `merge_keys.may_hold_keys`): up to `TASK_ROWS` rows (by the
package's counts) one task reads the key columns of the package's files (`lakeload.kernel.delta.keys`); else
one Spark aggregation answers. Without duplicates every row wins and no whole row is shuffled; among
duplicates the `dedup_sort` column decides, then the later occurrence in the package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lakeload.delta.merge_keys import keys_of, match
from lakeload.errors import LoadError
from lakeload.kernel.delta.keys import TASK_ROWS, KeyColumns, KeySummary, key_summary
from lakeload.kernel.normalize.relational import C_OCCURRENCE
from lakeload.spark.session import run_tasks

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from lakeload.kernel.spark.working import WorkingStore
    from lakeload.storage.manifest import PackageFile

RANK = "__lakeload_rank"


@dataclass(frozen=True)
class MergeKeys:
    """What decides the winners: the primary key, the partition columns, `dedup_sort` (column and direction)."""

    primary_key: list[str]
    partition_by: list[str] = field(default_factory=list)
    dedup_sort: tuple[str, str] | None = None


@dataclass(frozen=True)
class Winners:
    """One incoming row per key; whether that is every row; each primary key column's incoming range."""

    rows: DataFrame
    every_row_wins: bool
    key_ranges: dict[str, tuple[Any, Any]]


@dataclass(frozen=True)
class PackageKeys:
    """Where the incoming keys can be read in one task: the package's files of the root table and their rows
    (None when a file's count is unknown), for the job named `description`."""

    paths: list[str]
    rows: int | None
    description: str
    working: WorkingStore | None = None


def package_rows(files: list[PackageFile]) -> int | None:
    """A table's rows in a package, by its files' counts (None when a file has none).

    >>> package_rows([{"rows": 2}, {"rows": 3}]), package_rows([{"rows": 2}, {}])
    (5, None)
    """
    counts = [f.get("rows") for f in files]
    return sum(n for n in counts if isinstance(n, int)) if all(isinstance(n, int) for n in counts) else None


def winners(spark: SparkSession, incoming: DataFrame, keys: MergeKeys, package: PackageKeys) -> Winners:
    """The winning incoming rows (see the module doc)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if not keys.primary_key:
        return Winners(incoming, True, {})
    columns = [*keys.primary_key, *keys.partition_by]
    duplicates, ranges = _key_summary(spark, incoming, columns, keys.primary_key, package)
    if not duplicates:
        return Winners(incoming, True, ranges)
    duplicated = incoming.groupBy(*columns).count().filter("count > 1").drop("count")
    order = []
    if keys.dedup_sort:
        column, direction = keys.dedup_sort
        order.append(F.col(column).desc_nulls_last() if direction == "desc" else F.col(column).asc_nulls_last())
    order.append(F.col(C_OCCURRENCE).desc())
    rank = F.row_number().over(Window.partitionBy(*columns).orderBy(*order))
    dup_keys = keys_of(duplicated, columns)
    ranked = match(incoming, dup_keys, columns, "left_semi").withColumn(RANK, rank).filter(F.col(RANK) == 1).drop(RANK)
    return Winners(match(incoming, dup_keys, columns, "left_anti").unionByName(ranked), False, ranges)


def _key_summary(
    spark: SparkSession, incoming: DataFrame, columns: list[str], ranged: list[str], package: PackageKeys
) -> tuple[bool, dict[str, tuple[Any, Any]]]:
    """Whether two incoming rows share `columns`, and the lowest and highest incoming value of each `ranged` one."""
    from pyspark.sql import functions as F

    if package.rows is not None and package.rows <= TASK_ROWS:
        summary: KeySummary = run_tasks(
            spark, key_summary, KeyColumns(keys=columns, ranged=ranged), [package.paths], package.description,
            working=package.working, error=LoadError,
        )[0]
        return summary["most"] > 1, {k: (low, high) for k, (low, high) in summary["ranges"].items()}
    n = len(ranged)
    bounds = [F.min(k) for k in ranged] + [F.max(k) for k in ranged]
    row = incoming.groupBy(*columns).count().agg(F.max("count"), *bounds).collect()[0]
    return (row[0] or 0) > 1, {k: (row[1 + i], row[1 + n + i]) for i, k in enumerate(ranged)}

"""Driver side: which stored rows of nested tables a Delta merge (`lakeload.delta.merge`) removes (step 1).

A stored nested row goes when its `_dlt_root_id` is a cleared root id (an incoming or matched root row), or
its `_dlt_parent_id` a removed parent row: tables filled before the root table was merged have no
`_dlt_root_id`, and the parent link is followed only where some file may hold rows without one.

The tables found by root id alone, the usual case, are read as one union (each row tagged with its table)
and joined once with the cleared root ids: one broadcast of the ids (when the package's row counts show they
fit) serves the whole tree, instead of one join, and one shuffle or broadcast, per nested table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lakeload.delta.merge_keys import KEY_PREFIX, MATCHED, all_have_root_ids, byte_size, flag_matches
from lakeload.kernel.delta.files import FILE_COLUMN, ROW_INDEX
from lakeload.kernel.normalize.relational import C_DLT_ID, C_DLT_PARENT_ID, C_DLT_ROOT_ID

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from lakeload.delta.commit import DeltaTarget

TABLE = "table"  # the column naming a tagged row's table
BROADCAST_CONF = "spark.sql.autoBroadcastJoinThreshold"
BROADCAST_BYTES = 128 * 1024 * 1024
ID_BYTES = 48  # a `_dlt_id` in a broadcast hash relation, with its overhead


@contextmanager
def broadcast_ids(spark: SparkSession) -> Iterator[None]:
    """Spark's broadcast threshold raised for a merge: the cleared root ids (~40 bytes each) are joined with every
    nested table, broadcast up to ~3M ids (unless broadcasts are off); restored after."""
    conf = spark.conf
    threshold = conf.get(BROADCAST_CONF) or "10485760"
    conf.set(BROADCAST_CONF, str(max(byte_size(threshold), BROADCAST_BYTES)) if byte_size(threshold) >= 0 else threshold)
    try:
        yield
    finally:
        conf.set(BROADCAST_CONF, threshold)


def ids_fit_broadcast(spark: SparkSession, root_rows: int | None) -> bool:
    """Whether the cleared root ids of a merge without `merge_key` (incoming rows' and matched rows', at most two per
    incoming row) surely fit a broadcast, by the package's `root_rows`: Spark cannot tell before it has computed
    them, and would shuffle every nested table's ids instead."""
    if byte_size(spark.conf.get(BROADCAST_CONF) or "10485760") < 0:  # (-1: broadcasts off)
        return False
    return root_rows is not None and 2 * root_rows * ID_BYTES <= BROADCAST_BYTES


@dataclass
class NestedDrops:
    """The nested rows a merge removes: `tagged` (table, file and row index) for the tables matched by root
    id in one join, `tagged_tables` their names; `by_table` (file and row index) for those following parent links."""

    tagged: DataFrame | None = None
    tagged_tables: list[str] = field(default_factory=list)
    by_table: dict[str, DataFrame] = field(default_factory=dict)


def split_links(targets: list[DeltaTarget], parents: dict[str, str], root_name: str) -> tuple[list[DeltaTarget], list[DeltaTarget]]:
    """The `targets` (parents first) whose rows below cleared root rows are found by `_dlt_root_id` alone, and
    those that follow parent links (some file may hold rows without a root id); tables with neither are left out."""
    by_root, linked, clears = [], [], {root_name}
    for target in targets:
        stored = set(target.stored_schema().names)
        follows_parent = (
            parents.get(target.name) in clears and C_DLT_PARENT_ID in stored
            and not all_have_root_ids(target.files(), stored)
        )
        if follows_parent:
            linked.append(target)
        elif C_DLT_ROOT_ID in stored:
            by_root.append(target)
        else:
            continue
        clears.add(target.name)
    return by_root, linked


def nested_drops(
    targets: list[DeltaTarget], parents: dict[str, str], read: Callable[[DeltaTarget, list[str]], DataFrame],
    root_name: str, root_ids: DataFrame, broadcast_ids: bool,
) -> NestedDrops:
    """The stored rows of `targets` (parents first, each with its table's `parent`) below the cleared `root_ids`
    (a `_dlt_id` column); `read(target, columns)` reads a table's `columns` with file and row index.

    Example (Delta targets and Spark DataFrames of a merge in progress)::

        drops = nested_drops(targets, parents, read, "users", ids, broadcast_ids=True)
    """
    from pyspark.sql import functions as F

    by_root, linked = split_links(targets, parents, root_name)
    result = NestedDrops(tagged_tables=[t.name for t in by_root])
    cleared = {root_name: root_ids}
    if by_root:
        columns = [C_DLT_ID, C_DLT_ROOT_ID, FILE_COLUMN, ROW_INDEX]
        parts = [read(t, [C_DLT_ID, C_DLT_ROOT_ID]).select(F.lit(t.name).alias(TABLE), *columns) for t in by_root]
        rows = parts[0]
        for part in parts[1:]:
            rows = rows.unionByName(part)
        ids = root_ids.select(F.col(C_DLT_ID).alias(KEY_PREFIX))
        ids = F.broadcast(ids) if broadcast_ids else ids
        # an inner join, not a semi join: Spark would push a semi join below the union, one join (and one
        # broadcast) per table again; a row listed twice (an id both incoming and matched) is dropped once
        result.tagged = rows.join(ids, rows[C_DLT_ROOT_ID] == ids[KEY_PREFIX], "inner").drop(KEY_PREFIX)
        for t in by_root:  # read again only by a child that follows parent links
            cleared[t.name] = result.tagged.filter(F.col(TABLE) == t.name).select(C_DLT_ID)
    for target in linked:
        stored_columns = set(target.stored_schema().names)
        parent_ids = cleared[parents[target.name]].select(F.col(C_DLT_ID).alias(C_DLT_PARENT_ID))
        key_sets = [(parent_ids, [C_DLT_PARENT_ID])]
        if C_DLT_ROOT_ID in stored_columns:
            key_sets.insert(0, (root_ids.select(F.col(C_DLT_ID).alias(C_DLT_ROOT_ID)), [C_DLT_ROOT_ID]))
        key_columns = [c for c in (C_DLT_ID, C_DLT_ROOT_ID, C_DLT_PARENT_ID) if c in stored_columns]
        result.by_table[target.name] = flag_matches(read(target, key_columns), key_sets).filter(F.col(MATCHED))
        cleared[target.name] = result.by_table[target.name].select(C_DLT_ID)
    return result

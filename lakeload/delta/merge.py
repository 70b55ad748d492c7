"""Driver side: the Delta `merge` (upsert) of one root table and its nested tables, planned as Spark jobs.

Copy-on-write, like Delta's own merge, with the join on Spark executors (no table row reaches the driver):

Root table:
1. incoming rows are deduplicated by primary key (and partition columns): the `dedup_sort` column
   decides, then the later record of the package (its occurrence number) wins;
2. only the snapshot's files that can hold a matching row are read: those of the partitions the
   incoming rows touch, and, for a one-column key, whose min/max statistics overlap the incoming keys;
3. stored rows match on the primary key plus the partition columns (and rows whose `merge_key`
   values arrive again match too); files holding a match are rewritten without the matched rows;
4. new files hold the kept rows of rewritten files and the winning incoming rows, except those
   flagged by the `hard_delete` column, which only delete.
Nested tables: every stored nested row whose `_dlt_root_id` is the id of an incoming or matched root row
is removed (files rewritten as above), and the winners' nested rows are added, so an element removed
from a list is removed from the nested table, and a hard-deleted root takes its nested rows with it.

One commit per table removes the rewritten files and adds the new ones; nested tables commit first,
the root last, each with the load's application transaction (see `lakeload.delta.commit`).
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from lakeload.delta.commit import DeltaTarget, txn_version
from lakeload.delta.executor_files import FILE_COLUMN, partition_value
from lakeload.delta.spark_io import package_frame, read_snapshot, snapshot_spec, write_frame
from lakeload.normalize.executor_relational import C_DLT_ID, C_DLT_PARENT_ID, C_DLT_ROOT_ID, C_OCCURRENCE

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from lakeload.load.delta_loader import DeltaLoader
    from lakeload.schema.schema import Schema

logger = logging.getLogger("lakeload.load")
KEY_PREFIX = "__lakeload_k_"


def _columns_with(table: dict[str, Any], hint: str) -> list[str]:
    return [name for name, column in table["columns"].items() if column.get(hint)]


def _and(conditions: list[Column]) -> Column:
    return functools.reduce(lambda a, b: a & b, conditions)


def _keys(frame: DataFrame, columns: list[str]) -> DataFrame:
    from pyspark.sql import functions as F

    return frame.select(*[F.col(c).alias(KEY_PREFIX + c) for c in columns]).distinct()


def _match(target: DataFrame, keys: DataFrame, columns: list[str], how: str) -> DataFrame:
    """`target` semi/anti-joined with `keys` on `columns`, nulls equal (partition values may be null)."""
    from pyspark.sql import functions as F

    condition = _and([target[c].eqNullSafe(F.col(KEY_PREFIX + c)) for c in columns])
    return target.join(keys, condition, how)


class MergeJob:
    """Merges one package's rows of a root table (and its nested tables) into their Delta tables."""

    def __init__(
        self, loader: DeltaLoader, schema: Schema, package: dict[str, Any], by_table: dict[str, list[dict[str, Any]]],
        targets: dict[str, DeltaTarget], root_name: str,
    ) -> None:
        self.loader = loader
        self.spark = loader.spark
        self.schema = schema
        self.load_id = package["load_id"]
        self.version = txn_version(self.load_id)
        self.by_table = by_table
        self.targets = targets
        self.root_name = root_name
        root = schema.tables[root_name]
        self.strategy = root.get("x-merge-strategy", "upsert")
        self.primary_key = _columns_with(root, "primary_key")
        self.merge_key = _columns_with(root, "merge_key")
        self.partition_by = list(targets[root_name].partition_by)
        self.hard_delete = next(iter(_columns_with(root, "hard_delete")), None)
        self.dedup_sort = next(((n, c["dedup_sort"]) for n, c in root["columns"].items() if c.get("dedup_sort")), None)
        self._persisted: list[DataFrame] = []

    def run(self) -> list[dict[str, Any]]:
        from lakeload.load.delta_loader import committed_files

        root = self.targets[self.root_name]
        if not self.by_table.get(self.root_name) or root.committed(self.loader.app, self.version):
            return []
        try:
            incoming = self._persist(package_frame(self.spark, "", self.by_table[self.root_name]))
            winners = self._persist(self._winners(incoming))
            inserts = winners.filter(~self._deleted(winners)) if self.hard_delete else winners
            root_plan = self._plan_root(root, incoming, inserts)
            ids = incoming.select(C_DLT_ID).unionByName(root_plan["matched"].select(C_DLT_ID)).distinct()
            cleared = {self.root_name: self._persist(ids)}
            loaded: list[dict[str, Any]] = []
            for name in self._nested_in_tree_order():
                target = self.targets[name]
                if not target.committed(self.loader.app, self.version):
                    nested = self._merge_nested(target, cleared, root_plan["inserted"])
                    loaded += committed_files(name, nested)
            loaded += committed_files(self.root_name, self._commit(root, root_plan["new"], root_plan["touched"]))
            return loaded
        finally:
            for frame in self._persisted:
                frame.unpersist()

    def _persist(self, frame: DataFrame) -> DataFrame:
        from pyspark import StorageLevel

        frame = frame.persist(StorageLevel.MEMORY_AND_DISK)
        self._persisted.append(frame)
        return frame

    def _winners(self, incoming: DataFrame) -> DataFrame:
        """One incoming row per key: the `dedup_sort` column decides, then the later occurrence."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        if not self.primary_key:
            return incoming
        order = []
        if self.dedup_sort:
            column, direction = self.dedup_sort
            order.append(F.col(column).desc_nulls_last() if direction == "desc" else F.col(column).asc_nulls_last())
        order.append(F.col(C_OCCURRENCE).desc())
        window = Window.partitionBy(*self.primary_key, *self.partition_by).orderBy(*order)
        return incoming.withColumn("__lakeload_rank", F.row_number().over(window)).filter("__lakeload_rank = 1").drop(
            "__lakeload_rank"
        )

    def _deleted(self, frame: DataFrame) -> Column:
        from pyspark.sql import functions as F

        assert self.hard_delete is not None
        column = F.col(self.hard_delete)
        if self.schema.tables[self.root_name]["columns"][self.hard_delete].get("data_type") == "bool":
            return F.coalesce(column, F.lit(False))
        return column.isNotNull()

    def _plan_root(self, target: DeltaTarget, incoming: DataFrame, inserts: DataFrame) -> dict[str, Any]:
        """Matched stored root rows, the files holding them, and the root table's new rows."""
        data_columns = target.table_schema().names
        if target.table is None:
            empty = self.spark.createDataFrame([], "`_dlt_id` string")
            new = inserts.select(*[c for c in data_columns if c in inserts.columns])
            return {"matched": empty, "touched": [], "new": new, "inserted": inserts}
        files = target.files()
        stored = self._read(target, self._candidate_files(target, files, incoming))
        match_on = [*self.primary_key, *self.partition_by] if self.primary_key else []
        matched_parts = []
        if match_on:
            matched_parts.append(_match(stored, _keys(incoming, match_on), match_on, "left_semi"))
        if self.merge_key:
            scope = [*self.merge_key, *self.partition_by]
            matched_parts.append(_match(stored, _keys(incoming, scope), scope, "left_semi"))
        matched = self._persist(functools.reduce(lambda a, b: a.unionByName(b), matched_parts).distinct())
        touched = self._touched(matched, files)
        if self.strategy == "insert-only":
            inserted = _match(inserts, _keys(matched, match_on), match_on, "left_anti") if match_on else inserts
            new = inserted.select(*[c for c in data_columns if c in inserted.columns])
            return {"matched": matched.limit(0), "touched": [], "new": new, "inserted": inserted}
        kept = self._kept(stored, touched, matched, [*self.primary_key, *self.merge_key, *self.partition_by])
        new = kept.unionByName(inserts.select(*[c for c in data_columns if c in inserts.columns]), allowMissingColumns=True)
        return {"matched": matched, "touched": touched, "new": new, "inserted": inserts}

    def _kept(self, stored: DataFrame, touched: list[dict[str, Any]], matched: DataFrame, columns: list[str]) -> DataFrame:
        """Rows of the touched files that no incoming row replaces."""
        from pyspark.sql import functions as F

        paths = [f["path"] for f in touched]
        in_touched = stored.filter(F.col(FILE_COLUMN).isin(paths)) if paths else stored.limit(0)
        key_columns = [c for c in dict.fromkeys([C_DLT_ID, *columns]) if c in stored.columns]
        return _match(in_touched, _keys(matched, key_columns), key_columns, "left_anti").drop(FILE_COLUMN)

    def _touched(self, matched: DataFrame, files: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Add actions of the files holding matched rows (metadata only reaches the driver)."""
        paths = {row[0] for row in matched.select(FILE_COLUMN).distinct().collect()}
        return [f for f in files if f["path"] in paths]

    def _candidate_files(self, target: DeltaTarget, files: list[dict[str, Any]], incoming: DataFrame) -> list[dict[str, Any]]:
        """The files that may hold rows matching `incoming` (partition and key-range pruning)."""
        from pyspark.sql import functions as F

        if target.partition_by and not self.merge_key:
            wanted = {
                tuple(partition_value(row[c]) for c in target.partition_by)
                for row in incoming.select(*target.partition_by).distinct().collect()
            }
            files = [f for f in files if tuple(f["partition_values"][c] for c in target.partition_by) in wanted]
        if len(self.primary_key) == 1 and not self.merge_key:
            key = self.primary_key[0]
            low, high = incoming.agg(F.min(key), F.max(key)).collect()[0]
            files = [f for f in files if _may_overlap(f["stats"], key, low, high)]
        return files

    def _nested_in_tree_order(self) -> list[str]:
        """Nested tables, every parent before its children."""
        order, frontier = [], [self.root_name]
        while frontier:
            children = [n for n in self.targets if self.schema.tables[n].get("parent") in frontier]
            order += children
            frontier = children
        return order

    def _merge_nested(self, target: DeltaTarget, cleared: dict[str, DataFrame], inserted: DataFrame) -> list[dict[str, Any]]:
        """Remove stored rows below cleared root/parent rows; add the nested rows of the inserted root rows.

        A stored row goes when its `_dlt_root_id` is a cleared root id, or its `_dlt_parent_id` a removed
        parent row (tables filled before the root table was merged have no `_dlt_root_id`).
        """
        from pyspark.sql import functions as F

        files = self.by_table.get(target.name, [])
        data_columns = target.table_schema().names
        frames = []
        if files:
            rows = package_frame(self.spark, "", files)
            winners = inserted.select(F.col(C_OCCURRENCE).alias(KEY_PREFIX + C_OCCURRENCE))
            new_rows = rows.join(winners, rows[C_OCCURRENCE] == F.col(KEY_PREFIX + C_OCCURRENCE), "left_semi")
            frames.append(new_rows.select(*[c for c in data_columns if c in new_rows.columns]))
        touched: list[dict[str, Any]] = []
        if target.table is not None and self.strategy != "insert-only":
            stored_columns = set(pa.schema(target.table.schema().to_arrow()).names)  # type: ignore[arg-type]
            files = target.files()
            stored = self._read(target, files)
            parts = []
            if C_DLT_ROOT_ID in stored_columns:
                root_ids = cleared[self.root_name].select(F.col(C_DLT_ID).alias(C_DLT_ROOT_ID))
                parts.append(_match(stored, _keys(root_ids, [C_DLT_ROOT_ID]), [C_DLT_ROOT_ID], "left_semi"))
            parent = self.schema.tables[target.name].get("parent")
            if parent in cleared and C_DLT_PARENT_ID in stored_columns:
                parent_ids = cleared[parent].select(F.col(C_DLT_ID).alias(C_DLT_PARENT_ID))
                parts.append(_match(stored, _keys(parent_ids, [C_DLT_PARENT_ID]), [C_DLT_PARENT_ID], "left_semi"))
            if parts:
                matched = self._persist(functools.reduce(lambda a, b: a.unionByName(b), parts).distinct())
                cleared[target.name] = matched.select(C_DLT_ID)
                touched = self._touched(matched, files)
                frames.append(self._kept(stored, touched, matched, [C_DLT_ID]))
        if not frames:
            return []
        new = functools.reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)
        return self._commit(target, new, touched)

    def _read(self, target: DeltaTarget, files: list[dict[str, Any]]) -> DataFrame:
        spec = snapshot_spec(self._spec(target), target.table_schema(), with_file=True)
        return read_snapshot(self.spark, spec, [{k: v for k, v in f.items() if k != "stats"} for f in files])

    def _spec(self, target: DeltaTarget) -> Any:
        return self.loader.file_spec(target, self.load_id, "merge")

    def _commit(self, target: DeltaTarget, new: DataFrame, touched: list[dict[str, Any]]) -> list[dict[str, Any]]:
        adds = write_frame(self.spark, new, self._spec(target), f"lakeload load {self.load_id}: merge {target.name}")
        removes = [{"path": f["path"], "size": f["size"], "partition_values": f["partition_values"]} for f in touched]
        if adds or removes:
            target.commit(adds, removes, "append", self.loader.app, self.version)
        return adds


def _may_overlap(stats: dict[str, Any], key: str, low: Any, high: Any) -> bool:
    """Whether a file's min/max statistics of `key` can include a value in [low, high]."""
    file_min, file_max = stats.get(f"min.{key}"), stats.get(f"max.{key}")
    if file_min is None or file_max is None or low is None or high is None:
        return True
    try:
        return not (file_max < low or file_min > high)
    except TypeError:
        return True

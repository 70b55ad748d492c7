"""Driver side: the Delta `merge` (upsert) of one root table and its nested tables, planned as Spark jobs.

Copy-on-write, like Delta's own merge, with the join on Spark executors (no table row reaches the driver):

Root table:
1. incoming rows are deduplicated by primary key (and partition columns): the `dedup_sort` column
   decides, then the later record of the package (its occurrence number) wins;
2. only the snapshot's files that can hold a matching row are read: those of the partitions the
   incoming rows touch, and whose min/max statistics of every primary key column overlap the incoming keys;
3. stored rows match on the primary key plus the partition columns (and rows whose `merge_key`
   values arrive again match too), in a key pass that reads only the key columns, each row's file and its
   position in it; files holding a match are rewritten without the matched rows;
4. new files hold the kept rows of rewritten files and the winning incoming rows, except those
   flagged by the `hard_delete` column, which only delete.
Nested tables: every stored nested row whose `_dlt_root_id` is the id of an incoming or matched root row
is removed (files rewritten as above; the nested tables' ids are read as one union and joined once with
the root ids, see `lakeload.delta.merge_nested`), and the winners' nested rows are added, so an element
removed from a list is removed from the nested table, and a hard-deleted root takes its nested rows with it.

The usual upsert of a package of up to `DROP_TASK_ROWS` root rows (one primary key column, no partitions, no
`merge_key`, nested rows linked by root id) finds steps 3's and the nested tables' removals in one job of
pyarrow tasks instead (`lakeload.delta.merge_tasks`): no Spark join, broadcast or shuffle.

Small metadata comes in few round trips: one pass over the incoming keys (`lakeload.delta.merge_winners`)
tells whether any key arrives twice and gives each primary key column's range (for file pruning); keys known
unique are joined without a distinct pass.

Every file is written before the first commit (the reads and writes: `lakeload.delta.merge_files`): one Spark job rewrites the touched files of all tables of
the tree (pyarrow in the tasks reads each file once and drops rows by position; only positions pass through
Spark), and one job writes the new rows (the package's files copied as they are when every incoming record
is inserted, else the winners selected by Spark).

Commits, each with the load's application transaction (see `lakeload.delta.commit`), in the order of
`lakeload.delta.commit_order`, so that a reader of the latest versions never sees a nested row without its
parent: (1) nested tables drop the rows below touched root rows (rewritten files), children first;
(2) the root table removes its rewritten files and adds the new ones; (3) nested tables get the winners'
nested rows, parents first. A nested table that loses and gains rows so gets two commits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import pyarrow as pa

from lakeload.delta.commit import DeltaTarget, committed_files
from lakeload.delta.commit_order import nested_parents_first, removes_of
from lakeload.delta.marks import REMOVALS, LoadMark
from lakeload.delta.merge_conditions import (
    cdc_matches,
    filter_source,
    source_condition,
    unchanged_columns,
    without_unchanged,
)
from lakeload.delta.merge_files import MergeFiles, select_present
from lakeload.delta.merge_keys import (
    MATCHED,
    flag_matches,
    keys_of,
    match,
)
from lakeload.delta.merge_nested import (
    NestedDrops,
    broadcast_ids,
    ids_fit_broadcast,
    nested_drops,
    split_links,
)
from lakeload.delta.merge_pruning import MatchKeys, candidate_files, derived_partitions
from lakeload.delta.merge_tasks import drops_in_tasks
from lakeload.delta.merge_winners import MergeKeys, PackageKeys, package_rows, winners
from lakeload.delta.spark_io import local_frame, package_frame, with_partition_keys
from lakeload.kernel.delta.drops import TASK_ROWS as DROP_TASK_ROWS
from lakeload.kernel.delta.splits import PARTITION_KEY
from lakeload.kernel.normalize.relational import C_DLT_ID, C_DLT_LOAD_ID
from lakeload.schema.schema import columns_with_hint

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from lakeload.delta.package_writer import PackageWriter
    from lakeload.delta.snapshot_files import Rewritten, SnapshotFile
    from lakeload.kernel.contracts import TAddAction, TPartitionSplit
    from lakeload.schema.schema import Schema
    from lakeload.storage.manifest import NormalizedPackage, PackageFile



class MergeJob:
    """Merges one package's rows of a root table (and its nested tables) into their Delta tables."""

    def __init__(
        self, loader: PackageWriter, schema: Schema, package: NormalizedPackage, by_table: dict[str, list[PackageFile]],
        root_name: str, mark: LoadMark, repair: Callable[[MergeJob, list[str]], None],
    ) -> None:
        self.loader = loader
        self.repair = repair  # finishes the nested tables once this process committed the root (`merge_repair`)
        self.spark = loader.spark
        self.schema = schema
        self.package = package
        self.load_id = package["load_id"]
        self.mark = mark
        self.files = MergeFiles(loader, self.load_id)
        self.root_done = False
        self.again = False  # a try after a conflict (`lakeload.delta.tree`)
        self.root_read: int | None = None  # the root version the root commit of this process was computed from
        self.by_table = by_table
        self.targets: dict[str, DeltaTarget] = {}
        self.root_name = root_name
        root = schema.tables[root_name]
        self.strategy = root.get("x-merge-strategy", "upsert")
        scope = cast(dict[str, Any], root).get("x-merge-destination-scope")
        self.scope = str(scope).replace("{table}.", "").replace("{table}", "") if scope else None  # cdc: rows it may delete
        self.source_filter = source_condition(root)  # the loaded rows merged (the others are discarded)
        self.skip_unchanged = bool(root.get("x-merge-skip-unchanged-rows")) and self.strategy in ("upsert", "cdc")
        self.primary_key = columns_with_hint(root, "primary_key")
        self.merge_key = columns_with_hint(root, "merge_key")
        self.partition_by: list[str] = []
        self.hard_delete = next(iter(columns_with_hint(root, "hard_delete")), None)
        self.dedup_sort = next(((n, c["dedup_sort"]) for n, c in root["columns"].items() if c.get("dedup_sort")), None)
        self._key_ranges: dict[str, tuple[Any, Any]] = {}  # incoming primary key ranges, from `incoming_winners`
        self._root_rows = package_rows(by_table.get(root_name, []))  # (None: a file's count is unknown)
        self.replacing = False  # a replace of the loaded partitions (`replacing_partitions`)
        self.derived: tuple[tuple[int, TPartitionSplit], ...] = ()  # transformed partitions matched by their values

    def replacing_partitions(self) -> MergeJob:
        """This job as a replace of the partitions the package has rows in (`x-replace-strategy` "partitions"): a
        delete-insert whose merge key is the root's partitions (column values; a transform's values, computed on
        the executors as `PARTITION_KEY` columns of the loaded and the stored rows), every loaded row inserted,
        nested rows below the replaced root rows removed."""
        self.strategy, self.replacing = "delete-insert", True  # (its merge key is set by `run`, from the table)
        self.primary_key, self.hard_delete, self.dedup_sort, self.source_filter, self.scope = [], None, None, None, None
        self.skip_unchanged = False
        return self

    def run(self, targets: dict[str, DeltaTarget], again: bool = False) -> None:
        """Merge the package's rows into the opened `targets`; commits (strict, see `DeltaTarget.commit`) in the
        order of `lakeload.delta.commit_order` (removals children first, the root, additions parents first),
        each skipped when a rerun finds it in the log. `again`: a try after a conflict; once this process
        committed the root, `lakeload.delta.merge_repair` finishes the nested tables."""
        self.targets, self.again = targets, again
        self.partition_by = list(targets[self.root_name].match_partitions)
        if self.replacing:
            self.derived = targets[self.root_name].transformed_partitions
            self.merge_key = [*self.partition_by, *(f"{PARTITION_KEY}{i}" for i, _ in self.derived)]
        else:
            self.derived = derived_partitions(targets[self.root_name], self.primary_key, self.merge_key)
        root = self.targets[self.root_name]
        nested = nested_parents_first(self.schema, self.root_name, self.targets)
        self.root_done = root.committed(self.mark)
        pending = [n for n in nested if not self.targets[n].committed(self.mark)]
        if not self.by_table.get(self.root_name) or (self.root_done and not any(self.by_table.get(n) for n in pending)):
            return
        with broadcast_ids(self.spark):
            if again and self.root_done and self.root_read is not None:
                self.repair(self, pending)
            else:
                self._merge(root, nested, pending)

    def _merge(self, root: DeltaTarget, nested: list[str], pending: list[str]) -> None:
        incoming = self.incoming()
        self.drop_absent_hints(set(incoming.columns))
        winners, every_row_wins = self.incoming_winners(incoming)
        if every_row_wins and not self.hard_delete and all(t.table is None for t in self.targets.values()):
            self._create_tables(nested)
            return
        inserts = winners.filter(~self.deleted()) if self.hard_delete else winners
        in_tasks = None if self.root_done else self._drops_in_tasks(root, pending)
        plan = self.plan_root(root, incoming, inserts, unique_keys=every_row_wins, match_stored=in_tasks is None)
        all_inserted = every_row_wins and not self.hard_delete and plan["inserted"] is inserts
        inserted = None if all_inserted else plan["inserted"]
        drops: dict[str, DataFrame | None] = {}
        tagged = None
        if in_tasks is not None:
            rewritten = self._rewrite_in_tasks(root, in_tasks)
        elif not self.root_done:
            if plan["rewrite"]:
                drops[self.root_name] = plan["matched"]
            # no distinct pass nor cache: an id listed twice drops its rows once, and the ids are read in one query
            ids = plan.get("touched", incoming).select(C_DLT_ID).unionByName(plan["matched"].select(C_DLT_ID))
            nested_rows = self.find_nested_drops(pending, ids)
            drops.update(nested_rows.by_table)
            drops.update(dict.fromkeys(nested_rows.tagged_tables))
            tagged = nested_rows.tagged
        if in_tasks is None:  # every file is written first (one job for the rewrites, one for the new rows)
            rewritten = self.files.rewrite(self.targets, drops, tagged)
        new = self._new_rows([self.root_name, *pending] if not self.root_done else pending, plan, inserted)
        self.commit_nested_removals(pending, rewritten)  # 1. nested rows below touched root rows, children first
        kept, replaced = rewritten.get(self.root_name, ([], []))
        if not self.root_done:  # 2. the root
            self.commit(root, kept + new[self.root_name], replaced)
        for name in pending:  # 3. the winners' nested rows, parents first
            self.commit(self.targets[name], new[name], [], claim=bool(replaced) or self.root_done)

    def commit_nested_removals(
        self, pending: list[str], rewritten: Rewritten
    ) -> None:
        """Step 1: the rewritten files of the `pending` nested tables, children first (each a strict commit on
        top of the snapshot read: its additions, step 3, then commit on top of this one)."""
        for name in reversed(pending):
            kept, replaced = rewritten.get(name, ([], []))
            if replaced:
                self.commit(self.targets[name], kept, replaced, self.mark.of_step(REMOVALS))

    def _new_rows(self, names: list[str], plan: dict[str, Any], inserted: DataFrame | None) -> dict[str, list[TAddAction]]:
        """Write the new rows of the `names` tables (not committed): their add actions. When every incoming
        record is inserted (`inserted` None), the package's files are copied as they are, in one job."""
        if inserted is None:
            targets = [self.targets[n] for n in names]
            return self.loader.package_adds(targets, self.load_id, self.by_table, "merge")
        new = {}
        for name in names:
            rows = plan["new"] if name == self.root_name else self.files.nested_rows(self.targets[name], self.by_table.get(name, []), inserted)
            new[name] = [] if rows is None else self.files.write(self.targets[name], rows)
        return new

    def drop_absent_hints(self, present: set[str]) -> None:
        """Hint columns the package has no data for are all null in it: a null `hard_delete` deletes
        nothing, a null `dedup_sort` does not order, a null `merge_key` matches no stored row (as in SQL).

        A hint on a column that has not received data yet is the usual case (`deleted` before the first
        deletion); such a column has no data type and is not in the Delta table yet either, as in dlt.
        """
        if self.hard_delete not in present:
            self.hard_delete = None
        if self.dedup_sort and self.dedup_sort[0] not in present:
            self.dedup_sort = None
        if any(c not in present for c in self.merge_key):
            self.merge_key = []

    def _create_tables(self, nested: list[str]) -> None:
        """The first merge into tables that do not exist yet, without duplicates or deletions, is an append
        (root first): the package's files are rewritten as data files directly, in one job (no Spark join needed)."""
        names = [self.root_name, *nested]
        self.root_read = -1  # (no root version was read: it did not exist)
        self.loader.write_tree(
            [self.targets[n] for n in names], self.package, self.by_table, dict.fromkeys(names, "append"), self.mark, strict=True
        )

    def incoming(self) -> DataFrame:
        """The package's root rows the merge takes: those its `source_filter` selects (all without one)."""
        incoming = with_partition_keys(package_frame(self.spark, self.by_table[self.root_name], self.loader.working), self.derived)
        return incoming if self.source_filter is None else filter_source(incoming, self.source_filter, self.root_name)

    def incoming_winners(self, incoming: DataFrame) -> tuple[DataFrame, bool]:
        """One incoming row per key, and whether that is every row of the package, all of them inserted as they are
        (`lakeload.delta.merge_winners`); keeps each primary key column's incoming range for `_candidate_files`."""
        keys = MergeKeys(self.primary_key, self.partition_by, self.dedup_sort)
        paths = [f["path"] for f in self.by_table[self.root_name]]
        package = PackageKeys(paths, self._root_rows, f"lakeload load {self.load_id}: keys of {self.root_name}", self.loader.working)
        found = winners(self.spark, incoming, keys, package)
        self._key_ranges = found.key_ranges
        as_packaged = self.source_filter is None and not self.skip_unchanged  # else some package rows are left out
        return found.rows, found.every_row_wins and as_packaged

    def deleted(self) -> Column:
        from pyspark.sql import functions as F

        assert self.hard_delete is not None
        column = F.col(self.hard_delete)
        if self.schema.tables[self.root_name]["columns"][self.hard_delete].get("data_type") == "bool":
            return F.coalesce(column, F.lit(False))
        return column.isNotNull()

    def plan_root(
        self, target: DeltaTarget, incoming: DataFrame, inserts: DataFrame, unique_keys: bool, match_stored: bool = True,
        repair: bool = False,
    ) -> dict[str, Any]:
        """Matched stored root rows (key columns, file and row index), whether the files holding them are
        rewritten, the root rows inserted and the root table's new rows (`unique_keys`: no incoming primary
        key twice, so the keys are matched without a distinct pass; not `match_stored`: the matching is done
        in tasks, `_rewrite_in_tasks`)."""
        from pyspark.sql import functions as F

        data_columns = target.table_schema().names
        if not match_stored:
            return {"matched": None, "rewrite": True, "new": select_present(inserts, data_columns), "inserted": inserts}
        if target.table is None or (self.root_done and self.strategy != "insert-only" and not repair):
            # (a committed upsert inserted every winner: its nested rows are all that is left to add)
            empty = local_frame(self.spark, [], pa.schema([(C_DLT_ID, pa.string())]))
            return {"matched": empty, "rewrite": False, "new": select_present(inserts, data_columns), "inserted": inserts}
        if self.strategy == "cdc":
            return self._skip_unchanged(self._plan_cdc(target, incoming, inserts, data_columns), incoming, data_columns)
        match_on = [*self.primary_key, *self.partition_by] if self.primary_key else []
        key_sets = [(incoming, match_on)] if match_on else []
        if self.merge_key:
            key_sets.append((incoming, list(dict.fromkeys([*self.merge_key, *self.partition_by]))))
        key_columns = list(dict.fromkeys(
            [C_DLT_ID, C_DLT_LOAD_ID, *(c for _, cols in key_sets for c in cols), *self._compared(data_columns)]))
        candidates = self._candidate_files(target, target.files(), incoming)
        unique = frozenset([0]) if match_on and unique_keys else frozenset()
        read = [c for c in key_columns if not c.startswith(PARTITION_KEY)] + [s["column"] for _, s in self.derived]
        stored = with_partition_keys(self.files.read(target, candidates, list(dict.fromkeys(read)), row_index=True), self.derived)
        flagged = flag_matches(stored, key_sets, unique)
        matched = flagged.filter(F.col(MATCHED))
        if self.strategy == "insert-only":
            if C_DLT_LOAD_ID in flagged.columns:  # rows this load inserted (a rerun after the root commit) stay inserted
                matched = matched.filter(F.col(C_DLT_LOAD_ID) != F.lit(self.load_id))
            inserted = match(inserts, keys_of(matched, match_on), match_on, "left_anti") if match_on else inserts
            return {"matched": matched.limit(0), "rewrite": False, "new": select_present(inserted, data_columns), "inserted": inserted}
        plan = {"matched": matched, "rewrite": True, "new": select_present(inserts, data_columns), "inserted": inserts}
        return self._skip_unchanged(plan, incoming, data_columns)

    def _compared(self, data_columns: list[str]) -> list[str]:
        """The columns `skip_unchanged_rows` compares (none without it)."""
        return unchanged_columns(self.schema.tables[self.root_name], data_columns) if self.skip_unchanged else []

    def _skip_unchanged(self, plan: dict[str, Any], incoming: DataFrame, data_columns: list[str]) -> dict[str, Any]:
        if not self.skip_unchanged or not self.primary_key:
            return plan
        plan = without_unchanged(plan, incoming, [*self.primary_key, *self.partition_by], self._compared(data_columns))
        return {**plan, "new": select_present(plan["inserted"], data_columns)}

    def _plan_cdc(self, target: DeltaTarget, incoming: DataFrame, inserts: DataFrame, data_columns: list[str]) -> dict[str, Any]:
        match_on = [*self.primary_key, *self.partition_by]
        key_sets = [(incoming, match_on), *([(incoming, list(dict.fromkeys([*self.merge_key, *self.partition_by])))] if self.merge_key else [])]
        columns = data_columns if self.scope else list(dict.fromkeys(
            [C_DLT_ID, *(c for _, cols in key_sets for c in cols), *self._compared(data_columns)]))
        stored = self.files.read(target, target.files(), columns, row_index=True)  # every file: absent keys are deleted
        matched = cdc_matches(stored, key_sets, self.scope, self.root_name)
        return {"matched": matched, "rewrite": True, "new": select_present(inserts, data_columns), "inserted": inserts}

    def _candidate_files(self, target: DeltaTarget, files: list[SnapshotFile], incoming: DataFrame | None) -> list[SnapshotFile]:
        keys = MatchKeys(self.primary_key, self.merge_key, self.partition_by, self.derived)
        return candidate_files(target, files, incoming, keys, self._key_ranges)

    def _drops_in_tasks(self, root: DeltaTarget, pending: list[str]) -> list[DeltaTarget] | None:
        """The nested tables whose removals `_rewrite_in_tasks` finds with the root's, when the merge is the
        usual upsert (one primary key column, no partitions, no `merge_key`, nested rows linked by root id) of
        up to `DROP_TASK_ROWS` root rows; None: the Spark plan does it."""
        rows = self._root_rows
        if (
            self.strategy in ("insert-only", "cdc") or root.table is None or len(self.primary_key) != 1 or self.partition_by
            or self.merge_key or rows is None or rows > DROP_TASK_ROWS or self.source_filter or self.skip_unchanged
        ):
            return None
        by_root, linked = split_links(self._nested_targets(pending), self._parents(pending), self.root_name)
        return None if linked else by_root

    def _rewrite_in_tasks(self, root: DeltaTarget, nested: list[DeltaTarget]) -> Rewritten:
        """The root's and `nested` tables' files rewritten without the removed rows, in one job of pyarrow tasks."""
        names = ", ".join([root.name, *(t.name for t in nested)])
        return drops_in_tasks(
            self.spark, root, self.primary_key[0], [f["path"] for f in self.by_table[self.root_name]],
            self._candidate_files(root, root.files(), None), nested, self.files.spec,
            f"lakeload load {self.load_id}: rewrite {names}", working=self.loader.working,
        )

    def _nested_targets(self, names: list[str]) -> list[DeltaTarget]:
        """The existing tables among `names` whose removals (step 1) are not committed yet (on a try after a
        conflict, all of them: rows may have arrived below the cleared root rows since)."""
        removals = self.mark.of_step(REMOVALS)
        return [
            self.targets[n] for n in names
            if self.targets[n].table is not None and self.strategy != "insert-only"
            and (self.again or not self.targets[n].committed(removals))
        ]

    def _parents(self, names: list[str]) -> dict[str, str]:
        return {n: self.schema.tables[n].get("parent", "") for n in names}

    def find_nested_drops(self, names: list[str], root_ids: DataFrame) -> NestedDrops:
        """Step 1's rows: the stored rows of the `names` tables below cleared root rows (see `merge_nested`)."""
        targets, parents = self._nested_targets(names), self._parents(names)

        def read(target: DeltaTarget, columns: list[str]) -> DataFrame:
            return self.files.read(target, target.files(), columns, row_index=True)

        return nested_drops(targets, parents, read, self.root_name, root_ids, not self.merge_key and ids_fit_broadcast(self.spark, self._root_rows))

    def commit(
        self, target: DeltaTarget, adds: list[TAddAction], replaced: list[SnapshotFile], mark: LoadMark | None = None,
        claim: bool = False,
    ) -> None:
        """Commit the written `adds` with the removal of the `replaced` files (strict), marked with `mark` (the
        load's own unless given); the root's commit keeps the version it was computed from (`root_read`).

        `claim`: commit (only the mark) even with nothing to add or remove, to an existing nested table after a root
        commit that removed root rows: another load's nested rows below those rows may land after this load read
        the table, and either this commit or that load's then fails and is redone (`lakeload.delta.tree`)."""
        removes = removes_of(replaced)
        if not adds and not removes and not (claim and target.table is not None):
            return
        read = target.read_version()
        target.commit(adds, removes, "append", mark or self.mark, strict=True)
        if target.name == self.root_name:
            self.root_read = -1 if read is None else read
        if mark is None:
            self.loader.committed += committed_files(target.name, adds)


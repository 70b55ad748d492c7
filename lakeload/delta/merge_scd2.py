"""Driver side: dlt's `scd2` merge of one root table and its nested tables (Delta or Iceberg), planned as Spark jobs.

The root table keeps every version of a record: each row has a row version (`_dlt_id`, the hash of the record's
data, or the user's `row_version_column_name`) and a validity range (`_dlt_valid_from`, `_dlt_valid_to`; names
and hints in `lakeload.schema.scd2`). A load, as dlt 1.31's SQL does it (`gen_scd2_sql`):

1. retires the stored active records (valid-to null, or the `active_record_timestamp`) whose row version is
   absent from the load (with a `merge_key`: only those whose merge key the load holds): their valid-to becomes
   the load's boundary (`boundary_timestamp`, else the package's creation time);
2. inserts the incoming rows whose row version is not an active record, valid from the boundary, valid-to null
   (or the active record timestamp);
3. inserts the nested rows whose `_dlt_id` is not in their table yet: nested ids derive from the root's row
   hash, so the nested rows of a new version go in and a version seen before (a record coming back) keeps the
   nested rows it had. Retired records keep their nested rows. A `hard_delete` column is data like any other,
   as in dlt's scd2 (its record's new version is inserted, the old one retired).

Copy-on-write, no table row through the driver: a key pass reads the root's row version, valid-to, merge key
columns and each row's file and position; executors rewrite the files holding retired rows with the valid-to
set at those positions (`kernel.delta.rewrite.ColumnUpdate`), and write the inserted rows. One strict commit
per table (`DeltaTarget.commit`, the same protocol on `IcebergTarget`), marked with the load, root first: a
conflict makes `lakeload.delta.tree` read the tables again and redo what is not committed yet, and a rerun
skips what its mark shows committed.

Example (`loader` a Delta loader of a load in progress, `targets` the tree opened; runs Spark)::

    Scd2Job(loader, schema, package, by_table, "users", LoadMark("users_pipeline", load_id)).run(targets)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeload.delta.commit import DeltaTarget, committed_files
from lakeload.delta.commit_order import nested_parents_first, removes_of
from lakeload.delta.merge_conditions import filter_source, source_condition
from lakeload.delta.merge_files import MergeFiles, select_present
from lakeload.delta.spark_io import Rewrite, package_frame, rewrite_files, snapshot_spec
from lakeload.errors import DestinationError, LoadError
from lakeload.kernel.delta.files import FILE_COLUMN, ROW_INDEX
from lakeload.kernel.delta.rewrite import ColumnUpdate, RewriteSpec
from lakeload.kernel.normalize.relational import C_DLT_ID, C_DLT_PARENT_ID
from lakeload.schema.scd2 import (
    active_record_timestamp,
    boundary_timestamp,
    row_version_column,
    validity_columns,
)
from lakeload.schema.schema import columns_with_hint

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from lakeload.delta.marks import LoadMark
    from lakeload.delta.package_writer import PackageWriter
    from lakeload.delta.snapshot_files import Rewritten, SnapshotFile
    from lakeload.kernel.contracts import TAddAction
    from lakeload.schema.schema import Schema
    from lakeload.storage.manifest import NormalizedPackage, PackageFile


class Scd2Job:
    """Merges one package's rows of a root table (and its nested tables) by the scd2 strategy (module docstring)."""

    def __init__(
        self, loader: PackageWriter, schema: Schema, package: NormalizedPackage, by_table: dict[str, list[PackageFile]],
        root_name: str, mark: LoadMark,
    ) -> None:
        self.loader = loader
        self.spark = loader.spark
        self.schema = schema
        self.by_table = by_table
        self.root_name = root_name
        self.mark = mark
        self.load_id = package["load_id"]
        self.files = MergeFiles(loader, self.load_id)
        root = schema.tables[root_name]
        self.valid_from, self.valid_to = validity_columns(root)
        self.version = row_version_column(root)
        self.active_at = active_record_timestamp(root)
        self.boundary = boundary_timestamp(root, package.get("created_at"))
        self.merge_key = columns_with_hint(root, "merge_key")
        self.source_filter = source_condition(root)  # the loaded records versioned (the others are discarded)

    def run(self, targets: dict[str, DeltaTarget], again: bool = False) -> None:
        """Retire and insert the root's rows, then insert the nested rows (parents first); each table's commit is
        skipped when its mark shows it done. `again` (a try after a conflict) needs nothing more: every step is
        computed from the tables as they are now."""
        root = targets[self.root_name]
        if not self.by_table.get(self.root_name):
            return  # no rows of the table in the package: nothing retires (dlt runs no merge either)
        if self.valid_to in root.partition_columns:
            raise DestinationError(
                f"Table '{self.root_name}' is partitioned by its scd2 valid-to column '{self.valid_to}', which retiring a "
                "record changes. Partition it by another column."
            )
        if not root.committed(self.mark):
            self._merge_root(root)
        for name in nested_parents_first(self.schema, self.root_name, targets):
            target = targets[name]
            if self.by_table.get(name) and not target.committed(self.mark):
                self._insert_nested(target)

    def _merge_root(self, root: DeltaTarget) -> None:
        from pyspark.sql import functions as F

        incoming = self._package_rows(self.root_name)
        if self.version not in incoming.columns:
            raise LoadError(
                f"Table '{self.root_name}': the scd2 row version column '{self.version}' is not in the loaded rows. "
                "Give every record that column (row_version_column_name), or drop the option to version rows by hash."
            )
        merge_key = self.merge_key if all(c in incoming.columns for c in self.merge_key) else []  # null keys match nothing
        inserts, rewritten = incoming, {}
        files = self._active_files(root)
        if files:
            stored = self.files.read(root, files, [self.version, self.valid_to, *merge_key], row_index=True)
            active = stored.filter(self._is_active())
            retired = active.join(incoming.select(self.version), [self.version], "left_anti")
            if merge_key:
                retired = retired.join(incoming.select(*merge_key), merge_key, "left_semi")
            rewritten = self._retire(root, files, retired)
            inserts = incoming.join(active.select(self.version), [self.version], "left_anti")
        boundary, active_at = F.lit(self.boundary), F.lit(self.active_at).cast("timestamp")
        new_rows = inserts.withColumn(self.valid_from, boundary).withColumn(self.valid_to, active_at)
        adds = self.files.write(root, select_present(new_rows, root.table_schema().names))
        kept, replaced = rewritten.get(root.name, ([], []))
        self._commit(root, kept + adds, replaced)

    def _active_files(self, root: DeltaTarget) -> list[SnapshotFile]:
        """The root's files that may hold active records: without an active record timestamp, a file whose
        statistics count no null valid-to holds none (every record in it retired)."""
        files = root.files()
        if self.active_at is not None:
            return files
        nulls = f"null_count.{self.valid_to}"
        return [f for f in files if not isinstance(f["stats"].get(nulls), int) or f["stats"][nulls] > 0]

    def _is_active(self) -> Column:
        from pyspark.sql import functions as F

        column = F.col(self.valid_to)
        return column.isNull() if self.active_at is None else column == F.lit(self.active_at)

    def _retire(self, root: DeltaTarget, files: list[SnapshotFile], retired: DataFrame) -> Rewritten:
        """The files holding `retired` rows rewritten with their valid-to set to the boundary (one Spark job)."""
        read = snapshot_spec(self.files.spec(root), root.table_schema(), with_file=False)
        spec = RewriteSpec(read, self.files.spec(root, "scd2-retired"), ColumnUpdate(self.valid_to, self.boundary))
        rewrite = Rewrite(retired.select(FILE_COLUMN, ROW_INDEX), files, spec)
        return rewrite_files(self.spark, {root.name: rewrite}, f"lakeload load {self.load_id}: retire {root.name}")

    def _insert_nested(self, target: DeltaTarget) -> None:
        """The package's rows of a nested table whose `_dlt_id` the table does not hold yet, in one commit."""
        rows = self._package_rows(target.name)
        files = target.files()
        if files:
            stored = self.files.read(target, files, [C_DLT_ID]).select(C_DLT_ID)
            rows = rows.join(stored, [C_DLT_ID], "left_anti")
        self._commit(target, self.files.write(target, select_present(rows, target.table_schema().names)), [])

    def _package_rows(self, name: str) -> DataFrame:
        """The package's rows of table `name` that are merged: with a `source_filter`, the root rows it selects and
        the nested rows below them (each nested row's parent among its parent table's kept rows)."""
        from pyspark.sql import functions as F

        rows = package_frame(self.spark, self.by_table.get(name, []), self.loader.working)
        if self.source_filter is None:
            return rows
        if name == self.root_name:
            return filter_source(rows, self.source_filter, name)
        parent = self.schema.tables[name].get("parent", self.root_name)
        kept = self._package_rows(parent).select(F.col(C_DLT_ID).alias("__lakeload_parent"))
        return rows.join(kept, rows[C_DLT_PARENT_ID] == kept["__lakeload_parent"], "left_semi")

    def _commit(self, target: DeltaTarget, adds: list[TAddAction], replaced: list[SnapshotFile]) -> None:
        """One strict commit of `adds` and the removal of `replaced`, marked with the load (none when both are empty)."""
        removes = removes_of(replaced)
        if not adds and not removes:
            return
        target.commit(adds, removes, "append", self.mark, strict=True)
        self.loader.committed += committed_files(target.name, adds)

"""Driver side: the files a Delta merge (`lakeload.delta.merge`) reads and writes, each read or write a Spark job
(nothing is committed here): the `columns` of a table's stored files, the package's nested rows that belong to
inserted root rows, new data files, and stored files rewritten without dropped rows.

Example (`writer` is the Delta loader of a load in progress, `target` an opened table; runs Spark)::

    files = MergeFiles(writer, "1795296531.14")
    keys = files.read(target, target.files(), ["_dlt_id"], row_index=True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from lakeload.delta.merge_keys import KEY_PREFIX
from lakeload.delta.spark_io import (
    Rewrite,
    package_frame,
    read_snapshot,
    rewrite_files,
    snapshot_spec,
    write_frame,
)
from lakeload.kernel.delta.files import FILE_COLUMN, ROW_INDEX
from lakeload.kernel.delta.rewrite import RewriteSpec
from lakeload.kernel.normalize.relational import C_OCCURRENCE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeload.delta.commit import DeltaTarget
    from lakeload.delta.package_writer import PackageWriter
    from lakeload.delta.snapshot_files import Rewritten, SnapshotFile
    from lakeload.kernel.contracts import TAddAction
    from lakeload.kernel.delta.files import DeltaFileSpec
    from lakeload.storage.manifest import PackageFile



class MergeFiles:
    """Reads and writes the files of one load's merge into Delta tables (see the module docstring)."""

    def __init__(self, writer: PackageWriter, load_id: str) -> None:
        self.writer = writer
        self.spark = writer.spark
        self.load_id = load_id

    def spec(self, target: DeltaTarget, operation: str = "merge") -> DeltaFileSpec:
        """How executors write data files of `target` for this load (`operation` in the files' names)."""
        return self.writer.file_spec(target, self.load_id, operation)

    def read(self, target: DeltaTarget, files: list[SnapshotFile], columns: list[str], row_index: bool = False) -> DataFrame:
        """The `columns` of the rows of `files`, with the name of the file each comes from (and its position
        in it, with `row_index`)."""
        schema = pa.schema([f for f in target.table_schema() if f.name in columns])
        spec = snapshot_spec(self.spec(target), schema, with_file=True, with_row_index=row_index)
        return read_snapshot(self.spark, spec, files)

    def write(self, target: DeltaTarget, rows: DataFrame) -> list[TAddAction]:
        """Write `rows` as new data files of `target` (on the executors): their add actions."""
        return write_frame(self.spark, rows, self.spec(target), f"lakeload load {self.load_id}: merge {target.name}")

    def rewrite(
        self, targets: dict[str, DeltaTarget], drops: dict[str, DataFrame | None], tagged: DataFrame | None
    ) -> Rewritten:
        """Rewrite the files of each table of `drops` that hold its dropped rows (None: in `tagged`) without
        them, all tables in one Spark job (whole rows are read and written by pyarrow in the tasks): per
        table, the new files' add actions and the replaced files."""
        tables = {}
        for name, dropped in drops.items():
            target = targets[name]
            spec = RewriteSpec(snapshot_spec(self.spec(target), target.table_schema(), with_file=False), self.spec(target, "merge-kept"))
            rows = None if dropped is None else dropped.select(FILE_COLUMN, ROW_INDEX)
            tables[name] = Rewrite(rows, target.files(), spec)
        return rewrite_files(self.spark, tables, f"lakeload load {self.load_id}: rewrite {', '.join(drops)}", tagged=tagged)

    def nested_rows(self, target: DeltaTarget, files: list[PackageFile], inserted: DataFrame | None) -> DataFrame | None:
        """The package's rows of a nested table (its `files`) that belong to inserted root rows (`inserted`
        None: every incoming record was inserted); None when the package has no rows for it."""
        from pyspark.sql import functions as F

        if not files:
            return None
        rows = package_frame(self.spark, files, self.writer.working)
        if inserted is not None:
            winners = inserted.select(F.col(C_OCCURRENCE).alias(KEY_PREFIX + C_OCCURRENCE))
            rows = rows.join(winners, rows[C_OCCURRENCE] == F.col(KEY_PREFIX + C_OCCURRENCE), "left_semi")
        return select_present(rows, target.table_schema().names)


def select_present(frame: DataFrame, columns: list[str]) -> DataFrame:
    """The `columns` of `frame` that it has, in that order."""
    return frame.select(*[c for c in columns if c in frame.columns])

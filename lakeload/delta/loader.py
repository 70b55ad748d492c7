"""Load (driver side) of the Delta tables of a package: executors write, the driver commits.

For each root table with `table_format="delta"` and its nested tables:
1. every table's log is read and its partition columns checked, before any file is written;
2. executors write the data files into the table folder (Hive folders when partitioned);
3. the driver commits them with delta-rs, one transaction per table, marked with the load and step
   (`lakeload.delta.marks`):
   - `append` adds the files;
   - `replace` empties the nested tables (children first), overwrites the root table (one commit removes
     every older file and adds the new ones: never an empty root in between; history kept), then appends
     the new nested rows;
   - `merge` runs `lakeload.delta.merge` (Spark).
Tables commit in the order of `lakeload.delta.commit_order` (root first when rows appear, children first
when they go), so a reader of the latest versions never sees a nested row without its parent. A commit
whose mark is already in the table's log is skipped, so a rerun never commits twice; a replace or merge
whose table another writer committed to meanwhile is done again (`lakeload.delta.tree`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import lakeload.kernel.spark.working as wio
from lakeload.delta.commit import DeltaTarget, committed_files
from lakeload.delta.commit_order import nested_parents_first
from lakeload.delta.load_versions import completed_tables
from lakeload.delta.log_damage import check_not_rolled_back
from lakeload.delta.marks import LoadMark
from lakeload.delta.storage import retry_storage_options, storage_options, table_uri
from lakeload.delta.tree import TreeLoad
from lakeload.destinations.impl.filesystem.client import FilesystemClient, fsspec_kwargs
from lakeload.errors import DeltaConflictError, DestinationError, LoadError, TableConflictError
from lakeload.kernel.delta.files import DeltaFileSpec, delta_schema, write_tables_package_files
from lakeload.kernel.normalize.writers import arrow_schema, complete_columns
from lakeload.kernel.spark.working import WorkingStore
from lakeload.schema.schema import Schema, columns_with_hint
from lakeload.spark.session import run_tasks

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.kernel.contracts import TAddAction, TLoadedFile
    from lakeload.storage.manifest import NormalizedPackage, PackageFile

logger = logging.getLogger("lakeload.load")
FILES_PER_TASK = 4


class DeltaLoader:
    """Loads the Delta tables of packages of one pipeline into one dataset."""

    format_name = "delta"  # the `table_format` hint of the root tables this loader loads
    format_label = "Delta"
    conflict_error: type[TableConflictError] = DeltaConflictError

    def __init__(
        self, spark: SparkSession, client: FilesystemClient, pipeline_name: str, working: WorkingStore | None = None
    ) -> None:
        self.spark = spark
        self.working = working  # the bucket package files are in (`[spark] working_url`), else None
        self.client = client
        self.pipeline_name = pipeline_name
        self.committed: list[TLoadedFile] = []  # the files this loader committed (load-result entries)
        self.recorded: dict[str, tuple[int, str]] = {}  # (version, id) per table at the schema's last completed load
        self._options: dict[str, str] | None = None

    @property
    def options(self) -> dict[str, str]:
        if self._options is None:
            config = self.client.config
            self._options = retry_storage_options(storage_options(config), config.retry, config.protocol.lower())
        return self._options

    def target(self, schema: Schema, table_name: str) -> DeltaTarget:
        table = schema.tables[table_name]
        partition_by = tuple(columns_with_hint(table, "partition"))
        missing = [c for c in partition_by if not table["columns"][c].get("data_type")]
        if missing:
            raise DestinationError(
                f"Partition columns {missing} of Delta table '{table_name}' have no data type yet (no values seen): "
                "give them a data_type in the `columns` hints."
            )
        return DeltaTarget(
            name=table_name,
            uri=table_uri(self.client.config, self.client.dataset_path, table_name),
            storage_options=self.options,
            schema=delta_schema(arrow_schema(complete_columns(table))),
            partition_by=partition_by,
            retry=self.client.config.retry,
        )

    def file_spec(self, target: DeltaTarget, load_id: str, operation: str) -> DeltaFileSpec:
        config = self.client.config
        return DeltaFileSpec(
            bucket_url=config.bucket_url,
            fs_kwargs=fsspec_kwargs(config),
            table_dir=f"{self.client.dataset_path}/{target.name}",
            schema=target.table_schema(),
            partition_by=target.partition_by,
            prefix=f"{load_id}-{operation}",
            is_local=config.is_local,
            retry=config.retry,
        )

    def open_tree(self, schema: Schema, tree: list[str]) -> dict[str, DeltaTarget]:
        """The tables of a tree (root first, parents before children), each opened and its partitions checked, and
        refused when its log lost commits (`lakeload.delta.log_damage`)."""
        targets = {name: self.target(schema, name) for name in tree}
        for target in targets.values():
            table = target.open()
            if table is not None:
                check_not_rolled_back(table, target.name, target.uri, self.recorded.get(target.name))
            target.check_partitions()
        return targets

    def load(self, package_dir: str, package: NormalizedPackage, schema: Schema) -> tuple[list[TLoadedFile], list[str]]:
        """Load every Delta tree of the package; returns the files committed and the tables replaced."""
        by_table: dict[str, list[PackageFile]] = {}
        for file in package["files"]:
            if file["table"] in schema.tables and schema.root_table_of(file["table"]).get("table_format") == self.format_name:
                by_table.setdefault(file["table"], []).append({**file, "path": wio.join(package_dir, file["path"])})
        self.committed = []
        self.recorded = self.completed_tables(schema)
        replaced: list[str] = []
        for root_name in package["root_tables"]:
            if schema.tables.get(root_name, {}).get("table_format") != self.format_name:
                continue
            nested = nested_parents_first(schema, root_name, (t["name"] for t in schema.nested_tables_of(root_name)))
            tree = TreeLoad(self, schema, package, by_table, [root_name, *nested])
            replaced += tree.run()
        return self.committed, replaced

    def completed_tables(self, schema: Schema) -> dict[str, tuple[int, str]]:
        """(version, id) per table at the schema's last completed load (a rolled-back log is refused against it)."""
        return completed_tables(self.client, schema.name)

    def write_tree(
        self, targets: list[DeltaTarget], package: NormalizedPackage, by_table: dict[str, list[PackageFile]],
        modes: dict[str, str], mark: LoadMark, strict: bool = False,
    ) -> None:
        """Append (or, for mode `replace`, overwrite with) the package's files of each of `targets`: every table's
        files written in one Spark job, then one commit per table in the order given (a parent before its
        children); `strict` commits (`DeltaTarget.commit`) for the tables of a replace or a merge."""
        pending = []
        for target in targets:
            if target.committed(mark):
                logger.info("Delta table '%s' already holds load %s; not committing it again", target.name, mark.load_id)
            elif by_table.get(target.name) or (modes[target.name] == "replace" and target.table is not None):
                pending.append(target)
        if not pending:
            return
        adds = self.package_adds(pending, mark.load_id, by_table, {t.name: modes[t.name] for t in pending})
        for target in pending:
            mode = "overwrite" if modes[target.name] == "replace" else "append"
            target.commit(adds[target.name], [], mode, mark, strict=strict)
            self.committed += committed_files(target.name, adds[target.name])

    def package_adds(
        self, targets: list[DeltaTarget], load_id: str, by_table: dict[str, list[PackageFile]], operation: str | dict[str, str]
    ) -> dict[str, list[TAddAction]]:
        """Rewrite a package's normalized files of the `targets` as data files of them, in one Spark job (no
        commit, no Spark SQL plan: each task copies whole files with pyarrow): the add actions per table.
        `operation` (in the files' names): one for all tables, or one per table name."""
        specs = {t.name: self.file_spec(t, load_id, operation if isinstance(operation, str) else operation[t.name]) for t in targets}
        chunks = [
            (name, files[i : i + FILES_PER_TASK]) for name in specs
            for files in [by_table.get(name, [])] for i in range(0, len(files), FILES_PER_TASK)
        ]
        description = f"lakeload load {load_id}: write {', '.join(specs)}"
        written = run_tasks(self.spark, write_tables_package_files, specs, chunks, description, working=self.working, error=LoadError)
        adds: dict[str, list[TAddAction]] = {name: [] for name in specs}
        for result in written:
            adds[result["table"]] += result["actions"]
        return adds


"""Load (driver side): put a normalized package into the bucket and mark it complete.

Order of work, chosen so that a process killed at any point loses nothing and duplicates nothing:
0. every file of a package on this machine's disk is checked against its `package.json` entry (size, Parquet
   footer and rows: `lakeload.kernel.load.file_check`), so a damaged file stops the load before anything
   changes in the bucket; files in a working bucket are checked by the copy tasks before each copy;
1. `init` of the dataset (first load only), then the package's `refresh` (`lakeload.load.refresh`: tables
   dropped or truncated before any new file goes in);
2. each table format loads the package's trees of it (`lakeload.destinations.impl.filesystem.table_format`:
   the root tables grouped by their `table_format` hint, each format called once): Delta tables
   (`lakeload.delta.table_format`) are written by executors and committed with delta-rs under the load's
   application transaction (a rerun skips what is committed); plain tables (`lakeload.load.plain_format`) are
   copied by Spark executors under names fixed at normalize time (a rerun overwrites; into a local bucket
   beside the package, the driver hard-links them instead), and for `replace` tables the older files (root
   and nested) are deleted only once the new ones are all in place;
3. `_dlt_version` (when this schema version is not stored yet) and `_dlt_pipeline_state` (when the
   package carries a changed state);
4. what each format of the schema records of a completed load (`TableFormat.record_completion`; Delta: the
   version of every Delta table, `lakeload.delta.load_versions`, what lakeload's readers read until the next
   load completes);
5. `_dlt_loads/<schema>__<load_id>.jsonl`: the completion marker; then what the formats finish after it (the
   schema's latest Delta versions).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, cast

import pendulum

import lakeload.kernel.spark.working as wio
from lakeload.destinations.impl.filesystem import state_file_names, state_files
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.destinations.impl.filesystem.restore import restore_from_bucket
from lakeload.destinations.impl.filesystem.table_format import PLAIN, FormatLoad, format_name, table_format
from lakeload.destinations.reference import (
    Destination,
    JobClientBase,
    LoadContext,
    LoadPackage,
    LoadResult,
    register_job_client,
)
from lakeload.destinations.state_types import PipelineState
from lakeload.kernel.filesystem.layout import Layout
from lakeload.kernel.load.file_check import check_listed_sizes, check_package_files
from lakeload.load.refresh import RefreshLoad
from lakeload.schema.schema import Schema
from lakeload.spark.shipping import dumps_for_executors
from lakeload.storage.manifest import NormalizedPackage, PackageFile
from lakeload.storage.packages import NORMALIZED, PipelineStorage

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = logging.getLogger("lakeload.load")


def ensure_init(client: FilesystemClient) -> None:
    """The dataset's `init` file, written on first use (dlt's marker of an initialized dataset)."""
    if not client.exists(state_files.INIT_FILE_NAME):
        client.write_bytes(state_files.INIT_FILE_NAME, state_files.init_content())


def store_schema(client: FilesystemClient, schema: Schema) -> bool:
    """Store `schema` in `_dlt_version` unless a file of its version hash is there; True when it was written."""
    names = client.list_dir("_dlt_version")
    if state_file_names.version_file_by_hash(names, schema.version_hash):
        return False
    path, content = state_files.version_record(
        schema_name=schema.name,
        version=schema.version,
        version_hash=schema.version_hash,
        schema_json=schema.to_json(),
        inserted_at=pendulum.now("UTC"),
        precise_time=time.time(),
    )
    client.write_bytes(path, content)
    return True


class Loader:
    """Loads normalized packages of one pipeline into one dataset of a filesystem destination."""

    def __init__(
        self, spark: SparkSession, storage: PipelineStorage, client: FilesystemClient, layout: Layout, pipeline_name: str
    ) -> None:
        self.spark = spark
        self.storage = storage
        self.client = client
        self.layout = layout
        self.pipeline_name = pipeline_name

    def load(self, load_id: str) -> LoadResult:
        started = time.perf_counter()
        package_dir, package = self.storage.normalized_package(load_id)
        schema = Schema.from_dict(package["schema"])
        result = LoadResult(load_id, schema.name, row_counts=package["row_counts"])
        if self.storage.working is None:  # a local package: checked whole before the bucket changes
            check_package_files(package_dir, package["files"], load_id)
        else:  # in a working bucket: every size from one listing first, each footer in its copy task
            check_listed_sizes(wio.file_sizes(package_dir, self.storage.working), package["files"], load_id, package_dir)
        ensure_init(self.client)
        RefreshLoad(self.client, self.layout, self.pipeline_name).apply(schema, package, self.storage.package_dir(NORMALIZED, load_id))
        for name, work in self.format_loads(package_dir, package, schema).items():
            loaded = table_format(name).load(work)
            result.files += loaded.files
            result.replaced_tables += loaded.replaced_tables
            result.deleted_files += loaded.deleted_files
        store_schema(self.client, schema)
        if state := package.get("state"):
            self._store_state(state, load_id, schema.version_hash)
        self._complete(schema, load_id)
        result.elapsed = time.perf_counter() - started
        return result

    def format_loads(self, package_dir: str, package: NormalizedPackage, schema: Schema) -> dict[str, FormatLoad]:
        """The package's root tables and files grouped by table format: the work of each format, in the order of
        the formats' first root tables, plain files last (also a format's trees without rows: a replace empties
        its tables)."""
        roots: dict[str, list[str]] = {}
        for root_name in package["root_tables"]:
            roots.setdefault(format_name(schema, root_name), []).append(root_name)
        files: dict[str, list[PackageFile]] = {}
        for file in package["files"]:
            files.setdefault(format_name(schema, file["table"]), []).append(file)
        names = sorted(dict.fromkeys([*roots, *files]), key=lambda name: name == PLAIN)
        return {
            name: FormatLoad(
                spark=self.spark, client=self.client, layout=self.layout, pipeline_name=self.pipeline_name,
                working=self.storage.working, package_dir=package_dir, package=package, schema=schema,
                root_tables=roots.get(name, []), files=files.get(name, []),
            )
            for name in names
        }

    def _complete(self, schema: Schema, load_id: str) -> None:
        """The `_dlt_loads` record, with what each format of the schema records before and after it."""
        formats = dict.fromkeys(format_name(schema, table["name"]) for table in schema.data_tables())
        after = [hook for name in formats if (hook := table_format(name).record_completion(self.client, schema, load_id))]
        path, content = state_files.loads_record(
            load_id=load_id, schema_name=schema.name, schema_version_hash=schema.version_hash, inserted_at=pendulum.now("UTC")
        )
        self.client.write_bytes(path, content)
        for hook in after:
            hook()

    def _store_state(self, state: PipelineState, load_id: str, schema_hash: str) -> None:
        stored = cast(PipelineState, {k: v for k, v in state.items() if k != "_local"})
        path, content = state_files.pipeline_state_record(
            pipeline_name=self.pipeline_name,
            load_id=load_id,
            state=stored,
            state_version=int(stored.get("_state_version", 1)),
            state_version_hash=str(stored.get("_version_hash", "")),
            schema_version_hash=schema_hash,
            created_at=pendulum.now("UTC"),
        )
        self.client.write_bytes(path, content)
        names = self.client.list_dir("_dlt_pipeline_state")
        old = state_file_names.state_files_to_delete(names, self.pipeline_name, self.client.config.max_state_files)
        self.client.delete([f"_dlt_pipeline_state/{n}" for n in old])


def checked_layout(config: FilesystemConfiguration) -> Layout:
    """The destination's file layout, parsed and checked picklable (its callbacks run on executors)."""
    layout = Layout.parse(config.layout, config.extra_placeholders, config.current_datetime)
    layout.ensure_picklable(dumps_for_executors)
    return layout


class FilesystemJobClient(JobClientBase):
    """The filesystem destination's job client: its dataset in the bucket, loaded package by package (`Loader`)."""

    def __init__(self, destination: Destination, context: LoadContext) -> None:
        self.context = context
        self.config: FilesystemConfiguration = destination.configuration(context.pipeline_name)
        self.client = FilesystemClient(self.config, context.dataset_name)

    def layout(self) -> Layout:
        return checked_layout(self.config)

    def prepare(self) -> None:
        """A bad layout or callback, and a bucket that cannot be used, fail before any work is done."""
        self.layout()
        self.client.check_bucket()

    def restore(self) -> tuple[PipelineState | None, list[Schema]]:
        return restore_from_bucket(self.client, self.context.pipeline_name)

    def update_stored_schema(self, schema: Schema) -> None:
        """The schema's version in `_dlt_version`, the dataset initialized first (dlt's `sync_schema()`)."""
        ensure_init(self.client)
        store_schema(self.client, schema)

    def load_package(self, package: LoadPackage) -> LoadResult:
        loader = Loader(self.context.spark(), self.context.storage, self.client, self.layout(), self.context.pipeline_name)
        return loader.load(package.load_id)


register_job_client("filesystem", FilesystemJobClient)

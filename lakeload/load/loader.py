"""Load (driver side): put a normalized package into the bucket and mark it complete.

Order of work, chosen so that a process killed at any point loses nothing and duplicates nothing:
0. every file of a package on this machine's disk is checked against its `package.json` entry (size, Parquet
   footer and rows: `lakeload.kernel.load.file_check`), so a damaged file stops the load before anything
   changes in the bucket; files in a working bucket are checked by the copy tasks before each copy;
1. `init` of the dataset (first load only), then the package's `refresh` (`lakeload.load.refresh`: tables
   dropped or truncated before any new file goes in);
2. Delta tables (`lakeload.delta.loader`): files written by executors, committed with delta-rs
   under the load's application transaction (a rerun skips what is committed);
   other data files, copied by Spark executors under names fixed at normalize time (a rerun overwrites;
   into a local bucket beside the package, the driver hard-links them instead);
3. for `replace` tables, the table's older files (root and nested) are deleted, only now that the
   new ones are all in place;
4. `_dlt_version` (when this schema version is not stored yet) and `_dlt_pipeline_state` (when the
   package carries a changed state);
5. the version of every Delta table of the schema (`lakeload.delta.load_versions`: what lakeload's readers
   read until the next load completes);
6. `_dlt_loads/<schema>__<load_id>.jsonl`: the completion marker; then the schema's latest Delta versions.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, cast

import pendulum

import lakeload.kernel.spark.working as wio
from lakeload.delta.load_versions import publish_latest, record_versions
from lakeload.delta.loader import DeltaLoader
from lakeload.delta.tables import delta_table_names, is_delta_table
from lakeload.destinations.impl.filesystem import state_file_names, state_files
from lakeload.destinations.impl.filesystem.client import FilesystemClient, fsspec_kwargs
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.destinations.impl.filesystem.restore import restore_from_bucket
from lakeload.destinations.reference import (
    Destination,
    JobClientBase,
    LoadContext,
    LoadPackage,
    LoadResult,
    register_job_client,
)
from lakeload.destinations.state_types import PipelineState
from lakeload.errors import LoadError
from lakeload.kernel.filesystem.layout import Layout
from lakeload.kernel.filesystem.protocols import SFTP_PROTOCOLS
from lakeload.kernel.load.copy import CopyPayload, copy_files, link_files
from lakeload.kernel.load.file_check import check_listed_sizes, check_package_files
from lakeload.load.refresh import RefreshLoad, table_files
from lakeload.schema.schema import Schema
from lakeload.spark.session import run_tasks
from lakeload.spark.session_kind import executors_on_this_host
from lakeload.spark.shipping import dumps_for_executors
from lakeload.storage.packages import NORMALIZED, PipelineStorage

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = logging.getLogger("lakeload.load")
FILES_PER_TASK = 8


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


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


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
        plain = [f for f in package["files"] if not is_delta_table(schema, f["table"])]
        if any(is_delta_table(schema, root) for root in package["root_tables"]):  # also without rows: replace empties
            delta_files, result.replaced_tables = DeltaLoader(self.spark, self.client, self.pipeline_name, self.storage.working).load(
                package_dir, package, schema
            )
            result.files += delta_files
        result.files += self._copy(package_dir, dict(package, files=plain), schema.name)
        self._replace(schema, package, result)
        store_schema(self.client, schema)
        if package.get("state"):
            self._store_state(package["state"], load_id, schema.version_hash)
        versions = record_versions(self.client, schema, load_id) if delta_table_names(schema) else None
        path, content = state_files.loads_record(
            load_id=load_id, schema_name=schema.name, schema_version_hash=schema.version_hash, inserted_at=pendulum.now("UTC")
        )
        self.client.write_bytes(path, content)
        if versions is not None:
            publish_latest(self.client, versions)
        result.elapsed = time.perf_counter() - started
        return result

    def _copy(self, package_dir: str, package: dict[str, Any], schema_name: str) -> list[dict[str, Any]]:
        config = self.client.config
        payload = CopyPayload(
            bucket_url=config.bucket_url,
            fs_kwargs=fsspec_kwargs(config),
            dataset_path=self.client.dataset_path,
            package_dir=package_dir,
            layout=self.layout,
            schema_name=schema_name,
            load_id=package["load_id"],
            package_timestamp=package["created_at"],
            is_local=config.is_local,
            rename_after_write=config.protocol in SFTP_PROTOCOLS,
            working=self.storage.working,
            retry=config.retry,
        )
        if config.protocol == "memory":
            # an in-memory bucket exists only in this process: executors (other processes) cannot reach it
            return copy_files(payload, package["files"])
        description = f"lakeload load {package['load_id']}: copy files"
        linked: list[dict[str, Any]] = []
        left: list[dict[str, Any]] = package["files"]
        if config.is_local and self.storage.working is None and executors_on_this_host(self.spark):
            try:  # no Spark job for a local bucket beside the package
                linked, left = link_files(payload, left)
            except Exception as exc:  # a layout placeholder or a rename failed: the copy tasks' error
                raise LoadError(f"{description}: {type(exc).__name__}: {exc}") from exc
        chunks = _chunks(left, FILES_PER_TASK)
        copied = run_tasks(self.spark, copy_files, payload, chunks, description, working=self.storage.working, error=LoadError)
        return linked + [f for chunk in copied for f in chunk]

    def _replace(self, schema: Schema, package: dict[str, Any], result: LoadResult) -> None:
        new_files = {f["path"] for f in result.files}
        for root_name in package["root_tables"]:
            root = schema.tables.get(root_name, {})
            if root.get("write_disposition") != "replace" or root.get("table_format") == "delta":
                continue
            for table in schema.nested_tables_of(root_name):
                files = table_files(self.client, self.layout, schema.name, table["name"])
                stale = [p for p in files if p not in new_files and not p.endswith(".lakeload-tmp")]
                self.client.delete(stale)
                result.deleted_files += len(stale)
                result.replaced_tables.append(table["name"])

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

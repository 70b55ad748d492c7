"""The pipeline: extract on the driver, normalize and load on Spark, state kept beside the data.

>>> import lakeload
>>> p = lakeload.pipeline("quick_start", destination=lakeload.destinations.filesystem("/tmp/bucket"))
>>> info = p.run([{"id": 1, "pets": [{"name": "Fluffy"}]}], table_name="users")
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pendulum

from lakeload.config.resolver import resolve
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.destinations.impl.filesystem.factory import filesystem
from lakeload.destinations.impl.filesystem.layout import Layout
from lakeload.destinations.impl.sink.factory import sink
from lakeload.destinations.registry import resolve_destination
from lakeload.errors import LakeloadError, PipelineStepFailed
from lakeload.extract.extractor import FILE_MAX_BYTES, extract_resources
from lakeload.extract.resource import resources_from
from lakeload.load.loader import Loader, LoadResult
from lakeload.load.sink_loader import SinkLoader
from lakeload.normalize.normalizer import Normalizer
from lakeload.runtime.info import LoadInfo, PackageInfo
from lakeload.runtime.packages import EXTRACTED, NORMALIZED, PipelineStorage, read_json
from lakeload.runtime.progress import Progress, make_progress
from lakeload.runtime.state import bump_state, new_state, restore_from_bucket, stored_state
from lakeload.runtime.trace import RunTrace
from lakeload.schema.naming import NamingConvention, get_naming
from lakeload.schema.schema import Schema
from lakeload.spark.shipping import dumps_for_executors

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.sql.client import FilesystemSqlClient
    from lakeload.sql.dataset import Dataset

logger = logging.getLogger("lakeload.pipeline")
DEFAULT_PIPELINES_DIR = os.path.join("~", ".lakeload", "pipelines")


class Pipeline:
    """Moves data from resources to a dataset in a bucket. Create it with `lakeload.pipeline(...)`."""

    def __init__(
        self,
        pipeline_name: str,
        destination: Any = None,
        dataset_name: str | None = None,
        pipelines_dir: str | None = None,
        progress: str | Progress | None = None,
        spark: SparkSession | None = None,
    ) -> None:
        self.pipeline_name = pipeline_name
        self.destination = resolve_destination(destination)
        self.dataset_name = dataset_name or f"{pipeline_name}_dataset"
        self.pipelines_dir = os.path.expanduser(pipelines_dir or DEFAULT_PIPELINES_DIR)
        self.storage = PipelineStorage(os.path.join(self.pipelines_dir, pipeline_name))
        self.progress = make_progress(progress)
        self._spark = spark
        state = self.storage.load_state()
        self.state: dict[str, Any] = state or new_state(pipeline_name, self.dataset_name, "filesystem", None)
        self.state["dataset_name"] = self.dataset_name
        self._synced = state is not None
        self._stage_seconds: dict[str, float] = {}
        self.last_trace: RunTrace | None = None

    # -- plumbing ----------------------------------------------------------------------------------
    @property
    def spark(self) -> SparkSession:
        """The Spark session lakeload runs on (the active one, or a local one it starts)."""
        if self._spark is None:
            from lakeload.spark.session import get_spark

            master = resolve(("spark",), "master", self.pipeline_name).value
            self._spark = get_spark(master)
        return self._spark

    def _configuration(self) -> FilesystemConfiguration:
        if self.destination is None:
            raise LakeloadError(
                "No destination: pass destination='filesystem' (or a lakeload.destinations.filesystem(...) factory) "
                "to lakeload.pipeline() or to run()."
            )
        if isinstance(self.destination, sink):
            raise LakeloadError(f"Destination {self.destination!r} is a sink: it has no bucket.")
        return self.destination.configuration(self.pipeline_name)

    def _client(self) -> FilesystemClient:
        return FilesystemClient(self._configuration(), self.dataset_name)

    def _layout(self, config: FilesystemConfiguration) -> Layout:
        layout = Layout.parse(config.layout, config.extra_placeholders, config.current_datetime)
        layout.ensure_picklable(dumps_for_executors)
        return layout

    @property
    def naming(self) -> NamingConvention:
        """The naming convention of new schemas: the destination's (snake_case unless overridden)."""
        name = self.destination.capabilities().naming_convention if self.destination is not None else "snake_case"
        return get_naming(name)

    def _schema_naming(self, schema: Schema) -> NamingConvention:
        """A stored schema keeps the naming it was created with; a different destination naming is an error."""
        naming = self.naming
        stored = schema.normalizers.get("names", naming.name)
        if schema.data_tables(seen_data_only=True) and stored != naming.name:
            raise LakeloadError(
                f"Schema '{schema.name}' was created with the '{stored}' naming convention but the destination "
                f"asks for '{naming.name}'. Load into a new dataset (and pipeline), or keep naming_convention='{stored}'."
            )
        schema.normalizers["names"] = naming.name
        return naming

    def _compressed(self) -> bool:
        for sections in (("normalize", "data_writer"), ("data_writer",)):
            value = resolve(sections, "disable_compression", self.pipeline_name, hint=bool).value
            if value is not None:
                return not value
        return True

    def _file_max_bytes(self) -> int:
        """Size at which extract starts a new file; more files let more Spark tasks share the work."""
        value = resolve(("extract",), "file_max_bytes", self.pipeline_name, hint=int).value
        return int(value) if value else FILE_MAX_BYTES

    @property
    def default_schema_name(self) -> str | None:
        return self.state.get("default_schema_name")

    def schema(self, name: str | None = None) -> Schema:
        """A stored schema (the default one when no name is given)."""
        schema_name = name or self.default_schema_name or self.pipeline_name
        return self.storage.load_schema(schema_name) or Schema(schema_name)

    @property
    def default_schema(self) -> Schema:
        return self.schema()

    def _save_state(self) -> None:
        self.storage.save_state(self.state)

    # -- steps -------------------------------------------------------------------------------------
    def sync_destination(self) -> None:
        """Restore state and schemas from the bucket when the working folder has none."""
        if self._synced or isinstance(self.destination, sink):
            return
        state, schemas = restore_from_bucket(self._client(), self.pipeline_name)
        if state is not None:
            state["_local"] = {}
            state["dataset_name"] = self.dataset_name
            self.state = state
            for schema in schemas:
                self.storage.save_schema(schema)
            self._save_state()
        self._synced = True

    def extract(
        self,
        data: Any,
        *,
        table_name: str | None = None,
        write_disposition: str | None = None,
        columns: dict[str, dict[str, Any]] | None = None,
        primary_key: str | Sequence[str] | None = None,
        schema: str | None = None,
        loader_file_format: str | None = None,
        table_format: str | None = None,
    ) -> str:
        """Stream `data` into a new load package on disk; returns its load id."""
        started = time.perf_counter()
        resources, source_name = resources_from(data, table_name or self.pipeline_name)
        overrides = dict(
            table_name=table_name, write_disposition=write_disposition, columns=columns, primary_key=primary_key,
            table_format=table_format,
        )
        if any(v is not None for v in overrides.values()):
            resources = [r.with_hints(**overrides) for r in resources]
        schema_name = schema or source_name or self.default_schema_name or self.pipeline_name
        if not self.state.get("default_schema_name"):
            self.state["default_schema_name"] = schema_name
        if schema_name not in self.state["schema_names"]:
            self.state["schema_names"].append(schema_name)
        naming = self._schema_naming(self.schema(schema_name))
        carries_state = bump_state(self.state)
        self.progress.start("extract")
        try:
            result = extract_resources(
                self.storage,
                resources,
                schema_name,
                naming,
                progress=lambda n: self.progress.update("extract", n),
                extra_manifest={
                    "state": stored_state(self.state) if carries_state else None,
                    "loader_file_format": loader_file_format,
                },
                file_max_bytes=self._file_max_bytes(),
            )
        except LakeloadError as exc:
            raise PipelineStepFailed("extract", None, str(exc)) from exc
        self._save_state()
        self.progress.end("extract", f"{sum(result.items.values())} items into {result.files} files")
        self._stage_seconds["extract"] = self._stage_seconds.get("extract", 0.0) + time.perf_counter() - started
        return result.load_id

    def normalize(self) -> list[PackageInfo]:
        """Normalize every extracted package on Spark."""
        self.storage.recover()
        infos = []
        for load_id in self.storage.list_packages(EXTRACTED):
            started = time.perf_counter()
            manifest = read_json(os.path.join(self.storage.package_dir(EXTRACTED, load_id), "manifest.json"))
            schema = self.schema(manifest["schema_name"])
            fmt = manifest.get("loader_file_format") or self._preferred_format()
            self.progress.start("normalize", len(manifest["splits"]), unit="Spark tasks")
            try:
                normalizer = Normalizer(
                    self.spark, self.storage, self._schema_naming(schema), fmt, self._compressed(),
                    max_nesting=self._max_nesting(),
                    on_progress=lambda n: self.progress.update("normalize", n),
                )
                result = normalizer.normalize(load_id, schema)
            except LakeloadError as exc:
                raise PipelineStepFailed("normalize", load_id, str(exc)) from exc
            self.storage.save_schema(schema)
            self._warn_merge_fallback(schema, manifest)
            self.progress.end("normalize", f"{sum(result.row_counts.values())} rows in {result.files} files")
            self._stage_seconds["normalize"] = self._stage_seconds.get("normalize", 0.0) + time.perf_counter() - started
            infos.append(PackageInfo(load_id, schema.name, result.row_counts, normalize_seconds=result.elapsed))
        return infos

    def _max_nesting(self) -> int:
        """Sinks receive nested data whole by default (dlt's max_table_nesting=0 for sinks)."""
        if isinstance(self.destination, sink):
            return self.destination.max_table_nesting
        return 1000

    def _preferred_format(self) -> str:
        return self.destination.capabilities().preferred_loader_file_format if self.destination else "jsonl"

    def _warn_merge_fallback(self, schema: Schema, manifest: dict[str, Any]) -> None:
        for name in manifest["tables"]:
            table = schema.tables.get(name, {})
            if table.get("write_disposition") == "merge" and table.get("table_format") != "delta":
                msg = f"Falling back to 'append' on '{name}': merge needs table_format='delta' on a filesystem destination."
                logger.warning(msg)
                warnings.warn(msg, stacklevel=3)

    def load(self, destination: Any = None, dataset_name: str | None = None) -> LoadInfo:
        """Load every normalized package into the destination; resumes packages a crash left behind."""
        self._set_destination(destination, dataset_name)
        load_one, info = self._loader()
        self.storage.recover()
        for load_id in self.storage.list_packages(NORMALIZED):
            started = time.perf_counter()
            self.progress.start("load")
            try:
                result = load_one(load_id)
            except LakeloadError as exc:
                raise PipelineStepFailed("load", load_id, str(exc)) from exc
            except OSError as exc:
                raise PipelineStepFailed("load", load_id, f"{type(exc).__name__}: {exc}; run pipeline.load() to resume") from exc
            self.progress.end("load", f"{len(result.files)} files")
            self._stage_seconds["load"] = self._stage_seconds.get("load", 0.0) + time.perf_counter() - started
            info.packages.append(
                PackageInfo(load_id, result.schema_name, result.row_counts, result.files, result.replaced_tables, load_seconds=result.elapsed)
            )
        info.stage_seconds = dict(self._stage_seconds)
        return info

    def _loader(self) -> tuple[Callable[[str], LoadResult], LoadInfo]:
        destination = self.destination
        if isinstance(destination, sink):
            info = LoadInfo(self.pipeline_name, destination.name, "sink", self.dataset_name, "")
            return SinkLoader(self.spark, self.storage, destination).load, info
        config = self._configuration()
        client = FilesystemClient(config, self.dataset_name)
        loader = Loader(self.spark, self.storage, client, self._layout(config), self.pipeline_name)
        info = LoadInfo(self.pipeline_name, config.destination_name, "filesystem", self.dataset_name, config.bucket_url)
        return loader.load, info

    def _set_destination(self, destination: Any, dataset_name: str | None) -> None:
        if destination is not None:
            self.destination = resolve_destination(destination)
        if dataset_name:
            self.dataset_name = dataset_name
            self.state["dataset_name"] = dataset_name

    def run(
        self,
        data: Any = None,
        *,
        destination: Any = None,
        dataset_name: str | None = None,
        table_name: str | None = None,
        write_disposition: str | None = None,
        columns: dict[str, dict[str, Any]] | None = None,
        primary_key: str | Sequence[str] | None = None,
        schema: str | None = None,
        loader_file_format: str | None = None,
        table_format: str | None = None,
    ) -> LoadInfo:
        """Finish pending packages, then extract, normalize and load `data`.

        >>> info = pipeline.run([{"id": 1}], table_name="users", write_disposition="replace")
        """
        self._stage_seconds = {}
        self._set_destination(destination, dataset_name)
        trace = self.last_trace = RunTrace(
            self.pipeline_name,
            self.destination.name if self.destination else None,
            self.destination.destination_type if self.destination else None,
        )
        with self._step(trace, "sync"):
            if isinstance(self.destination, filesystem):
                self._layout(self._configuration())  # a bad layout or callback fails before any work is done
            self.sync_destination()
        with self._step(trace, "normalize"):
            self.normalize()
        if data is not None:
            with self._step(trace, "extract"):
                self.extract(
                    data, table_name=table_name, write_disposition=write_disposition, columns=columns,
                    primary_key=primary_key, schema=schema, loader_file_format=loader_file_format, table_format=table_format,
                )
            with self._step(trace, "normalize"):
                self.normalize()
        with self._step(trace, "load"):
            trace.load_info = self.load()
        return trace.load_info

    @contextlib.contextmanager
    def _step(self, trace: RunTrace, step: str) -> Iterator[None]:
        record = trace.start(step)
        try:
            yield
        except BaseException as exc:
            record.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            record.finished_at = pendulum.now("UTC")

    def drop(self) -> None:
        """Delete the local working folder (state, schemas, pending packages); the bucket is untouched."""
        self.storage.wipe()
        self.state = new_state(self.pipeline_name, self.dataset_name, "filesystem", None)
        self._synced = False

    def sql_client(self, schema: str | None = None) -> FilesystemSqlClient:
        """SQL over the dataset through DuckDB views, like dlt's filesystem `sql_client()`.

        >>> with pipeline.sql_client() as client:
        ...     rows = client.execute_sql("SELECT count(*) FROM users WHERE id > %s", 1)
        """
        from lakeload.sql.client import FilesystemSqlClient

        config = self._configuration()
        self.sync_destination()
        client = FilesystemClient(config, self.dataset_name)
        return FilesystemSqlClient(client, self.schema(schema), self._layout(config), config.always_refresh_views)

    def dataset(self, schema: str | None = None) -> Dataset:
        """The dataset's tables as relations: `ds.users.df()`, `ds.row_counts()`, `ds("SELECT ...")`, `.spark()`."""
        from lakeload.sql.dataset import Dataset

        return Dataset(self.sql_client(schema))



def pipeline(
    pipeline_name: str | None = None,
    destination: Any = None,
    dataset_name: str | None = None,
    pipelines_dir: str | None = None,
    progress: str | Progress | None = None,
    spark: SparkSession | None = None,
) -> Pipeline:
    """Create a pipeline (dlt's signature); `pipeline_name` defaults to the script's name.

    >>> p = pipeline("quick_start", destination="filesystem", dataset_name="mydata")
    """
    if not pipeline_name:
        import __main__

        main_file = getattr(__main__, "__file__", None) or "lakeload_pipeline"
        pipeline_name = os.path.splitext(os.path.basename(main_file))[0]
    return Pipeline(pipeline_name, destination, dataset_name, pipelines_dir, progress, spark)

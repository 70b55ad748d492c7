"""The pipeline: extract on the driver, normalize and load on Spark, state kept beside the data.

Example (`run()` starts Spark)::

    import lakeload
    p = lakeload.pipeline("quick_start", destination=lakeload.destinations.filesystem("/tmp/bucket"))
    info = p.run([{"id": 1, "pets": [{"name": "Fluffy"}]}], table_name="users")
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, TypeVar

from lakeload.common.context import activate, deactivate, register_pipeline_factory
from lakeload.common.context import is_active as context_is_active
from lakeload.config.log_secrets import install_secret_masking
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.reference import Destination
from lakeload.destinations.registry import resolve_destination, resolve_staging
from lakeload.destinations.state_types import PipelineState
from lakeload.errors import PipelineNotActive
from lakeload.kernel.filesystem.safe_paths import check_dataset_name, check_pipeline_name
from lakeload.runtime.early_runs import EarlyRuns
from lakeload.runtime.info import LoadInfo, PackageInfo
from lakeload.runtime.lock import holds_lock
from lakeload.runtime.pipeline_inspect import Inspect
from lakeload.runtime.pipeline_maintenance import Maintenance
from lakeload.runtime.pipeline_modes import (
    default_pipeline_name,
    dev_dataset_name,
    dev_instance_suffix,
    prepare_working_folder,
    with_credentials,
)
from lakeload.runtime.pipeline_settings import PipelineSettings
from lakeload.runtime.pipeline_spark import SparkPart
from lakeload.runtime.pipeline_steps import Steps
from lakeload.runtime.pipeline_traces import Traces, traced
from lakeload.runtime.progress import Progress, make_progress
from lakeload.runtime.refresh import check_refresh
from lakeload.runtime.run_args import hint_overrides
from lakeload.runtime.step_info import ExtractInfo, NormalizeInfo
from lakeload.runtime.trace import RunTrace
from lakeload.schema.naming import NamingConvention
from lakeload.schema.schema import Schema
from lakeload.storage.working import DEFAULT_PIPELINES_DIR, pipeline_storage

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.sql.clients import SqlClient
    from lakeload.sql.dataset import Dataset

_P = TypeVar("_P", bound="Pipeline")


class Pipeline:
    """Moves data from resources to a dataset in a bucket. Create it with `lakeload.pipeline(...)`.

    It delegates to its parts, each given what it needs: `PipelineSettings`, `SparkPart`, `Maintenance` (state),
    `Inspect` and `Steps`."""

    def __init__(
        self,
        pipeline_name: str,
        destination: Any = None,
        dataset_name: str | None = None,
        pipelines_dir: str | None = None,
        progress: str | Progress | None = None,
        spark: SparkSession | None = None,
        dev_mode: bool = False,
        refresh: str | None = None,
        *,
        attached: bool = False,
        staging: Any = None,
    ) -> None:
        install_secret_masking()  # botocore & co. log credentials at DEBUG
        self.pipeline_name = check_pipeline_name(pipeline_name)
        resolved = resolve_destination(destination)
        self.dev_mode = dev_mode  # each instance: a new working folder and its own dataset (see `pipeline_modes`)
        self.refresh = check_refresh(refresh)  # applied on every run() and extract()
        self._instance_suffix = dev_instance_suffix()
        self._settings = PipelineSettings(self.pipeline_name, resolved,
                                          self._dataset_name(dataset_name or f"{pipeline_name}_dataset"),
                                          staging=resolve_staging(staging, resolved))
        self.pipelines_dir = os.path.expanduser(pipelines_dir or DEFAULT_PIPELINES_DIR)
        self.storage = pipeline_storage(self.pipelines_dir, pipeline_name)
        if not attached:  # `attach()` takes the working folder as it is
            prepare_working_folder(self.storage, pipeline_name, dev_mode)
        reporter = make_progress(progress)
        self._spark = SparkPart(self.pipeline_name, self.storage, spark)
        early = EarlyRuns()  # load id -> its normalize begun during extract
        self._maintenance = Maintenance(self._settings, self.storage, self._spark.session, early)
        self._inspect = Inspect(self._settings, self.storage, self._maintenance)
        self._steps = Steps(self._settings, self.storage, self._maintenance, self._spark, reporter, early)
        self._early = early
        self.dev_mode = self._maintenance.keep_dev_mode(None if attached else dev_mode)
        self._traces = Traces(self.pipeline_name, self.storage.root, self._spark.clock)
        activate(self)  # lakeload.current.pipeline(), as dlt's

    def _dataset_name(self, name: str) -> str:
        return check_dataset_name(dev_dataset_name(name, self._instance_suffix) if self.dev_mode else name)

    def _holding_lock(self, repair: bool = False) -> AbstractContextManager[None]:
        """The working folder's lock around a step (`holds_lock`), state another process saved meanwhile read."""
        return self._maintenance.holding_lock(repair)

    # -- the active pipeline (`lakeload.current.pipeline()`, dlt's) -------------------------------
    @property
    def is_active(self) -> bool:
        """Whether this is the active pipeline: the one created, attached, run or activated last."""
        return context_is_active(self)

    def activate(self) -> None:
        """Make this the active pipeline (creating, attaching and running a pipeline activate it too)."""
        activate(self)

    def deactivate(self) -> None:
        """Leave no pipeline active; `PipelineNotActive` when this one is not the active one (dlt's)."""
        if not self.is_active:
            raise PipelineNotActive(self.pipeline_name)
        deactivate()

    # -- what the parts hold -----------------------------------------------------------------------
    @property
    def last_trace(self) -> RunTrace | None:
        """The last `run()`'s trace, with the steps called on their own since (dlt's; `pipeline_traces`)."""
        return self._traces.last_trace

    @property
    def destination(self) -> Destination | None:
        """The destination the pipeline loads to (None before one is given)."""
        return self._settings.destination

    @destination.setter
    def destination(self, destination: Destination | None) -> None:
        self._settings.destination = destination

    @property
    def dataset_name(self) -> str:
        """The dataset the pipeline loads into."""
        return self._settings.dataset_name

    @dataset_name.setter
    def dataset_name(self, dataset_name: str) -> None:
        self._settings.dataset_name = dataset_name

    @property
    def state(self) -> PipelineState:
        """The pipeline state (dlt's): schema names, sources' state, ..., as the working folder has it."""
        return self._maintenance.state

    @state.setter
    def state(self, state: PipelineState) -> None:
        self._maintenance.state = state

    @property
    def progress(self) -> Progress:
        """The progress display of the steps (`progress=` of `lakeload.pipeline()`)."""
        return self._steps.progress

    @progress.setter
    def progress(self, progress: Progress) -> None:
        self._steps.progress = progress

    @property
    def spark(self) -> SparkSession:
        """The Spark session lakeload runs on: the one passed in, the active one, or one it starts from `[spark]`."""
        return self._spark.session()

    @property
    def naming(self) -> NamingConvention:
        """The naming convention of new schemas: the destination's (snake_case unless overridden)."""
        return self._settings.naming

    def destination_client(self) -> FilesystemClient:
        """The client of the pipeline's filesystem destination and dataset, its configuration resolved (as dlt's
        `pipeline.destination_client()`); a `ConfigurationError` when the bucket is not configured.
        Example: `pipeline.destination_client().dataset_path` is `'/bucket/my_dataset'` for `memory://bucket`."""
        return self._settings.client()

    # -- inspecting (`pipeline_inspect`) -------------------------------------------------------------
    @property
    def first_run(self) -> bool:
        """True until a load package was loaded from this working folder (False after the first load, as dlt)."""
        return self._inspect.first_run

    @property
    def has_pending_data(self) -> bool:
        """True while extracted or normalized packages wait to be normalized or loaded."""
        return self._inspect.has_pending_data

    @property
    def default_schema_name(self) -> str | None:
        """The name of the default schema (the first one extracted), None before any."""
        return self._inspect.default_schema_name

    @property
    def schema_names(self) -> list[str]:
        """Names of the pipeline's schemas, the default one first."""
        return self._inspect.schema_names

    def schema(self, name: str | None = None) -> Schema:
        """A stored schema (the default one when no name is given)."""
        return self._inspect.schema(name)

    @property
    def default_schema(self) -> Schema:
        """The default schema, as stored."""
        return self._inspect.schema()

    @property
    def schemas(self) -> dict[str, Schema]:
        """The pipeline's schemas by name (dlt's `pipeline.schemas`): `pipeline.schemas["users_source"].tables`."""
        return self._inspect.schemas

    def list_extracted_load_packages(self) -> list[str]:
        """Ids of the packages extracted and waiting for normalize, oldest first."""
        return self._inspect.list_extracted_load_packages()

    def list_normalized_load_packages(self) -> list[str]:
        """Ids of the packages normalized and waiting for load, oldest first."""
        return self._inspect.list_normalized_load_packages()

    def list_completed_load_packages(self) -> list[str]:
        """Ids of the packages loaded from this working folder, oldest first."""
        return self._inspect.list_completed_load_packages()

    def get_load_package_info(self, load_id: str) -> PackageInfo:
        """The package `load_id` as the working folder has it: its state, schema, row counts and files.
        Example: `pipeline.get_load_package_info(load_id).state` is `'extracted'`, then `'normalized'`, `'loaded'`."""
        return self._inspect.get_load_package_info(load_id)

    def sql_client(self, schema: str | None = None) -> SqlClient:
        """SQL over the dataset through DuckDB views, like dlt's filesystem `sql_client()`.

        Example (after a run loaded `users`)::

            with pipeline.sql_client() as client:
                rows = client.execute_sql("SELECT count(*) FROM users WHERE id > %s", 1)
        """
        return self._inspect.sql_client(schema)

    def dataset(self, schema: str | None = None) -> Dataset:
        """The dataset's tables as relations: `ds.users.df()`, `ds.row_counts()`, `ds("SELECT ...")`, `.spark()`."""
        return self._inspect.dataset(schema)

    # -- state keeping (`pipeline_maintenance`) ------------------------------------------------------
    def sync_destination(self) -> None:
        """Restore state and schemas from the bucket when the working folder has none."""
        self._maintenance.sync_destination()

    def sync_schema(self, schema_name: str | None = None) -> None:
        """Store the schema `schema_name` (the default one when None) in the bucket's `_dlt_version` when that
        version is not stored yet, initializing the dataset first: dlt's `sync_schema()` on a filesystem bucket.
        Example: after `pipeline.extract(...)`, `pipeline.sync_schema()` writes `mydata/_dlt_version/quick_start__...`."""
        self._maintenance.sync_schema(schema_name)

    def drop(self: _P) -> _P:
        """Delete the working folder (state, schemas) and the pending packages (also under working_url); the bucket is
        untouched. Works on a folder whose files are broken: the way to start such a pipeline afresh.

        Returns this pipeline, now as fresh as a new one (dlt's `p = p.drop()`): its next run restores state and
        schemas from the bucket, as a first run does.
        """
        with self._holding_lock(repair=True):
            self._maintenance.drop()
            self._traces.forget()
        return self

    def drop_pending_packages(self) -> None:
        """Delete every package not loaded yet; incremental sources go back to what the bucket has loaded: files that
        an incremental files source picked for a dropped package are picked again by the next run."""
        self._maintenance.drop_pending_packages()

    # -- steps (`pipeline_steps`) --------------------------------------------------------------------
    @holds_lock
    @traced("extract")
    def extract(
        self,
        data: Any,
        *,
        table_name: str | None = None,
        write_disposition: str | None = None,
        columns: dict[str, dict[str, Any]] | None = None,
        primary_key: str | Sequence[str] | None = None,
        schema: str | Schema | None = None,
        loader_file_format: str | None = None,
        table_format: str | None = None,
        schema_contract: str | dict[str, str] | None = None,
        refresh: str | None = None,
    ) -> ExtractInfo:
        """Stream `data` into a new load package on disk; returns dlt's `ExtractInfo` (`info.loads_ids`, `metrics`)."""
        overrides = hint_overrides(table_name, write_disposition, columns, primary_key, table_format, schema_contract,
                                   loader_file_format)
        return self._extract(data, overrides, schema, loader_file_format, overlap=False, refresh=refresh)

    def _extract(self, data: Any, overrides: dict[str, Any], schema: str | Schema | None,
                 loader_file_format: str | None, overlap: bool, refresh: str | None = None) -> ExtractInfo:
        """`extract()`; with `overlap`, normalize starts on each extracted file while extract goes on (`run()`)."""
        activate(self)
        info = self._steps.extract(data, overrides, schema, loader_file_format, overlap=overlap, refresh=refresh,
                                   default_refresh=self.refresh)
        info.pipeline = self
        return info

    @holds_lock
    @traced("normalize")
    def normalize(self) -> NormalizeInfo:
        """Normalize every extracted package on Spark; returns dlt's `NormalizeInfo`."""
        return self._steps.normalize()

    @holds_lock
    @traced("load")
    def load(
        self, destination: Any = None, dataset_name: str | None = None, credentials: Any = None, *,
        redirect_pending: bool = False,
    ) -> LoadInfo:
        """Load every normalized package into the destination; resumes packages a crash left behind.

        A package extracted for another destination is refused unless `redirect_pending=True`.
        """
        self._set_destination(destination, dataset_name, credentials)
        return self._steps.load(redirect_pending)

    def _set_destination(self, destination: Any, dataset_name: str | None, credentials: Any = None) -> None:
        """A new destination, dataset or credentials (kept by this pipeline object, never stored: dlt's behaviour)."""
        if destination is not None:
            self.destination = resolve_destination(destination)
        if credentials is not None:
            self.destination = with_credentials(self.destination, credentials)
        if dataset_name:
            self.dataset_name = self._dataset_name(dataset_name)
            self.state["dataset_name"] = self.dataset_name

    @holds_lock
    def run(
        self,
        data: Any = None,
        *,
        destination: Any = None,
        dataset_name: str | None = None,
        credentials: Any = None,
        table_name: str | None = None,
        write_disposition: str | None = None,
        columns: dict[str, dict[str, Any]] | None = None,
        primary_key: str | Sequence[str] | None = None,
        schema: str | Schema | None = None,
        loader_file_format: str | None = None,
        table_format: str | None = None,
        schema_contract: str | dict[str, str] | None = None,
        refresh: str | None = None,
    ) -> LoadInfo:
        """Finish pending packages, then extract, normalize and load `data`.

        Example (starts Spark)::

            info = pipeline.run([{"id": 1}], table_name="users", write_disposition="replace")
        """
        self._spark.stage_seconds = {}
        self._set_destination(destination, dataset_name, credentials)
        with self._traces.run(self.destination) as trace:  # saved for `lakeload pipeline <name> trace`, failed or not
            overrides = hint_overrides(table_name, write_disposition, columns, primary_key, table_format,
                                       schema_contract, loader_file_format)
            extract = None if data is None else functools.partial(
                self._extract, data, overrides, schema, loader_file_format, overlap=True, refresh=refresh)
            self._steps.run(trace, extract)
        assert trace.load_info is not None
        return trace.load_info


def pipeline(
    pipeline_name: str | None = None,
    destination: Any = None,
    dataset_name: str | None = None,
    pipelines_dir: str | None = None,
    progress: str | Progress | None = None,
    spark: SparkSession | None = None,
    *,
    dev_mode: bool = False,
    refresh: str | None = None,
    staging: Any = None,
) -> Pipeline:
    """Create a pipeline (dlt's signature); `pipeline_name` defaults to the script's name.

    `dev_mode=True` starts each instance from an empty working folder and loads into a new dataset
    (`<dataset_name>_<YYYYMMDDhhmmss>`); `refresh=` applies that refresh mode on every run; `staging="filesystem"`
    (or a filesystem destination) is the bucket a database destination (DuckDB) loads its files from.

    >>> p = pipeline("quick_start", destination="filesystem", dataset_name="mydata")
    """
    return Pipeline(pipeline_name or default_pipeline_name(), destination, dataset_name, pipelines_dir, progress, spark, dev_mode, refresh,
                    staging=staging)


register_pipeline_factory(pipeline)  # `lakeload.current.pipeline()` makes the default pipeline with it

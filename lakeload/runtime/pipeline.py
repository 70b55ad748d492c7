"""The pipeline: extract on the driver, normalize and load on Spark, state kept beside the data.

Example (`run()` starts Spark)::

    import lakeload
    p = lakeload.pipeline("quick_start", destination=lakeload.destinations.filesystem("/tmp/bucket"))
    info = p.run([{"id": 1, "pets": [{"name": "Fluffy"}]}], table_name="users")
"""

from __future__ import annotations

import copy
import logging
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lakeload.common.context import activate, register_pipeline_factory
from lakeload.config.log_secrets import install_secret_masking
from lakeload.destinations.reference import Destination, JobClient
from lakeload.destinations.registry import resolve_destination
from lakeload.extract.collector import young_objects_only
from lakeload.extract.context import ExtractContext
from lakeload.extract.contracts import root_contracts
from lakeload.extract.decorators import resources_from
from lakeload.extract.extractor import check_extract_names, extract_resources
from lakeload.kernel.filesystem.safe_paths import check_dataset_name, check_pipeline_name
from lakeload.load.package_view import load_with
from lakeload.normalize.early import EarlyNormalize
from lakeload.normalize.normalizer import Normalizer
from lakeload.runtime.connect_prep import check_shared_working
from lakeload.runtime.info import LoadInfo, PackageInfo
from lakeload.runtime.lock import PipelineLock, holds_lock
from lakeload.runtime.package_destination import check_package_destination
from lakeload.runtime.pipeline_maintenance import PipelineMaintenance
from lakeload.runtime.pipeline_modes import (
    dev_dataset_name,
    dev_instance_suffix,
    prepare_working_folder,
    with_credentials,
)
from lakeload.runtime.pipeline_spark import PipelineSpark
from lakeload.runtime.progress import Progress, make_progress
from lakeload.runtime.refresh import RefreshPlan, apply_to_schema, check_refresh, plan_refresh
from lakeload.runtime.run_args import hint_overrides, warn_merge_fallback
from lakeload.runtime.schema_seed import seed_schema
from lakeload.runtime.state import bump_state, new_state, staged_state, stored_state
from lakeload.runtime.step_info import ExtractInfo, NormalizeInfo
from lakeload.runtime.steps import failing_step
from lakeload.runtime.trace import RunTrace
from lakeload.schema.schema import Schema
from lakeload.storage.packages import EXTRACTED, NORMALIZED, read_json
from lakeload.storage.working import DEFAULT_PIPELINES_DIR, pipeline_storage

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


logger = logging.getLogger("lakeload.pipeline")


class Pipeline(PipelineSpark, PipelineMaintenance):
    """Moves data from resources to a dataset in a bucket. Create it with `lakeload.pipeline(...)`."""

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
    ) -> None:
        install_secret_masking()  # botocore & co. log credentials at DEBUG
        self.pipeline_name = check_pipeline_name(pipeline_name)
        self.destination = resolve_destination(destination)
        self.dev_mode = dev_mode  # each instance: a new working folder and its own dataset (see `pipeline_modes`)
        self.refresh = check_refresh(refresh)  # applied on every run() and extract()
        self._instance_suffix = dev_instance_suffix()
        self.dataset_name = self._dataset_name(dataset_name or f"{pipeline_name}_dataset")
        self.pipelines_dir = os.path.expanduser(pipelines_dir or DEFAULT_PIPELINES_DIR)
        self.storage = pipeline_storage(self.pipelines_dir, pipeline_name)
        if not attached:  # `attach()` takes the working folder as it is
            prepare_working_folder(self.storage, pipeline_name, dev_mode)
        self._lock = PipelineLock(self.storage.root, pipeline_name)
        self.progress = make_progress(progress)
        self._init_spark(spark)
        self._source_options: dict[str, dict[str, Any]] = {}  # bucket_url -> fsspec options of files sources
        self._early: dict[str, EarlyNormalize] = {}  # load id -> its normalize begun during extract
        self._state_mark = self.storage.state_mark()
        state = self._read_state()
        self.state: dict[str, Any] = state or new_state(pipeline_name, self.dataset_name, "filesystem", None)
        self.state["dataset_name"] = self.dataset_name
        if attached:
            self.dev_mode = bool(self.state.get("_local", {}).get("_dev_mode"))
        self.state.setdefault("_local", {})["_dev_mode"] = self.dev_mode
        # dev_mode never restores from the bucket, as dlt; nor does a broken state.json (the steps raise instead)
        self._synced = state is not None or self.dev_mode or self._broken is not None
        self._stage_seconds: dict[str, float] = {}
        self.last_trace: RunTrace | None = None
        activate(self)  # lakeload.current.pipeline(), as dlt's

    def _dataset_name(self, name: str) -> str:
        return check_dataset_name(dev_dataset_name(name, self._instance_suffix) if self.dev_mode else name)

    # -- plumbing ----------------------------------------------------------------------------------
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

    # -- steps -------------------------------------------------------------------------------------
    @holds_lock
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
    ) -> str:
        """Stream `data` into a new load package on disk; returns its load id."""
        overrides = hint_overrides(table_name, write_disposition, columns, primary_key, table_format, schema_contract,
                                   loader_file_format)
        return self._extract(data, overrides, schema, loader_file_format, overlap=False, refresh=refresh)

    def _extract(
        self, data: Any, overrides: dict[str, Any], schema: str | Schema | None, loader_file_format: str | None,
        overlap: bool, refresh: str | None = None,
    ) -> str:
        """`extract()`; with `overlap`, normalize starts on each extracted file while extract goes on (`run()`)."""
        started = time.perf_counter()
        activate(self)
        check_shared_working(self.pipeline_name, self._spark, self.storage)  # a remote Connect server: before extract
        refresh = check_refresh(refresh) or self.refresh
        resources, source_name = resources_from(data, overrides["table_name"] or self.pipeline_name)
        if any(v is not None for v in overrides.values()):
            resources = [r.with_hints(**overrides) for r in resources]
        schema_name = seed_schema(self.storage, schema, data) or source_name or self.default_schema_name or self.pipeline_name
        check_extract_names(resources, schema_name, self.naming, overrides["table_name"])  # before anything is extracted
        if not self.state.get("default_schema_name"):
            self.state["default_schema_name"] = schema_name
        if schema_name not in self.state["schema_names"]:
            self.state["schema_names"].append(schema_name)
        stored = self.schema(schema_name)  # read once: only read below
        naming = self._schema_naming(stored)
        contracts = root_contracts(data, resources, overrides, stored)
        context = ExtractContext(self.pipeline_name, schema_name, sources_state=copy.deepcopy(self.state.get("sources", {})),
                                 spark_session=lambda: self.spark)
        plan = plan_refresh(stored, context.sources_state, refresh, schema_name,
                            [r.name for r in resources]) if refresh else None
        staged: dict[str, Any] = {}

        destination = self._extract_destination()

        def manifest_extras() -> dict[str, Any]:  # runs after the resources: the state carries what they changed
            staged.update(staged_state(self.state, context.sources_state, self.destination))
            changed = bump_state(staged) or bool(plan and plan["dropped_tables"])  # a drop always stores the state, as dlt
            state = stored_state(staged) if changed else None
            return {"state": state, "loader_file_format": loader_file_format, "destination": destination, "refresh": plan}

        overlap &= contracts is None or not contracts.manifest()  # early normalize knows the stored schema's contract only
        listener = self._early_normalize(schema_name, loader_file_format, plan) if overlap else None
        self.progress.start("extract", unit="rows")
        try:
            with failing_step("extract", self.pipeline_name, pending=False), young_objects_only():
                result = extract_resources(
                    self.storage,
                    resources,
                    schema_name,
                    naming,
                    progress=lambda n: self.progress.update("extract", n),
                    extra_manifest=manifest_extras,
                    file_max_bytes=self._file_max_bytes(),
                    context=context,
                    listener=listener,
                    known_tables=frozenset(stored.tables) - set(plan["schema_drops"] if plan else ()),
                    contracts=contracts,
                )
        except BaseException:
            if listener is not None:
                listener.abandon()
            raise
        if listener is not None:
            self._early[result.load_id] = listener  # awaited by normalize: the wait is normalize's time
        self.state = staged  # committed only now: a failed extract leaves the state (and picks the same files again)
        self._source_options.update(result.source_options)
        self._save_state()
        self.progress.end("extract", f"{sum(result.items.values())} items into {result.files} files")
        waited = listener.waited_seconds() if listener is not None else 0.0  # for early normalize: normalize's time
        self._add_stage_time("extract", started, -waited)
        if waited:
            self._stage_seconds["normalize"] = self._stage_seconds.get("normalize", 0.0) + waited
        return result.load_id

    def _early_normalize(self, schema_name: str, loader_file_format: str | None, plan: RefreshPlan | None) -> EarlyNormalize:
        """Normalize that starts on extracted files while extract goes on (`run()` only)."""
        schema = apply_to_schema(self.schema(schema_name), plan)
        fmt = loader_file_format or self._preferred_format()
        return EarlyNormalize(lambda: self.spark, lambda: self._normalizer(schema, fmt), schema)

    def _normalizer(self, schema: Schema, fmt: str) -> Normalizer:
        return Normalizer(
            self.spark, self.storage, self._schema_naming(schema), fmt, self._compressed(),
            max_nesting=self._max_nesting(),
            on_progress=lambda n: self.progress.update("normalize", n),
            source_options=self._source_options_for,
        )

    @holds_lock
    def normalize(self) -> list[PackageInfo]:
        """Normalize every extracted package on Spark."""
        self.storage.recover()
        self._forget_early()
        return self._normalize_extracted()

    def _normalize_extracted(self) -> list[PackageInfo]:
        infos = []
        for load_id in self.storage.list_packages(EXTRACTED):
            started = time.perf_counter()
            manifest = read_json(os.path.join(self.storage.package_dir(EXTRACTED, load_id), "manifest.json"))
            schema = apply_to_schema(self.schema(manifest["schema_name"]), manifest.get("refresh"))
            fmt = manifest.get("loader_file_format") or self._preferred_format()
            self.progress.start("normalize", len(manifest["splits"]), unit="Spark tasks")
            early = self._early.pop(load_id, None)
            with failing_step("normalize", self.pipeline_name, load_id):
                result = self._normalizer(schema, fmt).normalize(load_id, schema, early.results(load_id) if early else None)
            self.storage.save_schema(schema)
            warn_merge_fallback(schema, manifest)
            self.progress.end("normalize", f"{sum(result.row_counts.values())} rows in {result.files} files")
            self._add_stage_time("normalize", started)
            beside = early.busy_seconds() if early else 0.0  # pass 1 run while extract went on
            infos.append(PackageInfo(load_id, schema.name, result.row_counts, normalize_seconds=result.elapsed + beside,
                                     spark_tasks=len(manifest["splits"]), state="normalized",
                                     schema_update=result.schema_update, row_path_splits=result.row_path_splits))
        return infos

    @holds_lock
    def load(
        self, destination: Any = None, dataset_name: str | None = None, credentials: Any = None, *,
        redirect_pending: bool = False,
    ) -> LoadInfo:
        """Load every normalized package into the destination; resumes packages a crash left behind.

        A package extracted for another destination is refused unless `redirect_pending=True`.
        """
        self._set_destination(destination, dataset_name, credentials)
        client, info, destination = self._loader()
        info.first_run = self.first_run
        current = self._destination_record()
        self.storage.recover()
        for load_id in self.storage.list_packages(NORMALIZED):
            started = time.perf_counter()
            self.progress.start("load")
            with failing_step("load", self.pipeline_name, load_id):
                package = self.storage.normalized_package(load_id)[1]
                check_package_destination(package, current, load_id, self.pipeline_name, redirect_pending)
                result = load_with(client, destination, self.storage, load_id)
                self.storage.complete(load_id)
            self.progress.end("load", f"{len(result.files)} files")
            self._add_stage_time("load", started)
            info.packages.append(
                PackageInfo(load_id, result.schema_name, result.row_counts, result.files, result.replaced_tables,
                            load_seconds=result.elapsed or time.perf_counter() - started, created_at=package.get("created_at"),
                            schema_update=package.get("schema_update", {}))
            )
        info.finish(self._stage_seconds)
        return info

    def _loader(self) -> tuple[JobClient, LoadInfo, Destination]:
        """The destination's job client, the load info its packages go into, and the destination."""
        client = self._job_client()
        destination = self.destination
        assert destination is not None  # `_job_client` raised otherwise
        info = LoadInfo(self.pipeline_name, destination.name, destination.destination_type, self.dataset_name,
                        destination.location(self.pipeline_name))
        return client, info, destination

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
        self._stage_seconds = {}
        self._set_destination(destination, dataset_name, credentials)
        trace = self.last_trace = RunTrace(
            self.pipeline_name,
            self.destination.name if self.destination else None,
            self.destination.destination_type if self.destination else None,
            clock=self._spark_clock,
        )
        with trace.saved_to(self.storage.root):  # `lakeload pipeline <name> trace` reads it, failed or not
            overrides = hint_overrides(table_name, write_disposition, columns, primary_key, table_format,
                                       schema_contract, loader_file_format)
            self._run_steps(trace, data, overrides, schema, loader_file_format, refresh)
        assert trace.load_info is not None
        return trace.load_info

    def _run_steps(
        self, trace: RunTrace, data: Any, overrides: dict[str, Any], schema: str | Schema | None,
        loader_file_format: str | None, refresh: str | None,
    ) -> None:
        """dlt's steps: [normalize of pending packages,] extract, normalize, load, then `run` around them."""
        with trace.step("run") as run_step:
            self._sync_step()
            with trace.step("normalize") as step:
                pending = self.normalize()
                step.step_info, step.skipped = NormalizeInfo(self.pipeline_name, pending), not pending
                trace.normalized += pending
            if data is not None:
                with trace.step("extract") as step:
                    load_id = self._extract(data, overrides, schema, loader_file_format, overlap=True, refresh=refresh)
                    step.step_info = ExtractInfo(self.pipeline_name, [self.get_load_package_info(load_id)])
                    step.early_normalize = self._early[load_id].waited_seconds() if load_id in self._early else 0.0
                with trace.step("normalize") as step:
                    step.step_info = NormalizeInfo(self.pipeline_name, self._normalize_extracted())
                    trace.normalized += step.step_info.packages
            with trace.step("load") as step:
                run_step.step_info = step.step_info = trace.loaded(self.load())


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
) -> Pipeline:
    """Create a pipeline (dlt's signature); `pipeline_name` defaults to the script's name.

    `dev_mode=True` starts each instance from an empty working folder and loads into a new dataset
    (`<dataset_name>_<YYYYMMDDhhmmss>`); `refresh=` applies that refresh mode on every run.

    >>> p = pipeline("quick_start", destination="filesystem", dataset_name="mydata")
    """
    if not pipeline_name:
        import __main__

        main_file = getattr(__main__, "__file__", None) or "lakeload_pipeline"
        pipeline_name = os.path.splitext(os.path.basename(main_file))[0]
    return Pipeline(pipeline_name, destination, dataset_name, pipelines_dir, progress, spark, dev_mode, refresh)


register_pipeline_factory(pipeline)  # `lakeload.current.pipeline()` makes the default pipeline with it

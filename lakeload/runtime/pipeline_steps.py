"""The steps part of `Pipeline`: extract on the driver, normalize and load on Spark, each package through the
working folder (`lakeload.storage.packages`).

`Steps` is given every other part it works with: the settings (destination, naming, formats), the working folder,
the state (`Maintenance`), the Spark session and stage times (`SparkPart`), the progress display and the early
normalize runs. `Pipeline.extract()`, `normalize()`, `load()` and `run()` hold the lock and call it.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable
from typing import Any

import pendulum

from lakeload.destinations.reference import Destination, JobClient
from lakeload.destinations.state_types import PipelineState
from lakeload.extract.collector import young_objects_only
from lakeload.extract.context import ExtractContext
from lakeload.extract.contracts import root_contracts
from lakeload.extract.decorators import resources_from
from lakeload.extract.extractor import check_extract_names, extract_resources
from lakeload.extract.resource import Resource
from lakeload.extract.writer_scope import scope_of, source_scopes
from lakeload.load.package_view import load_with
from lakeload.normalize.early import EarlyNormalize
from lakeload.normalize.normalizer import Normalizer
from lakeload.runtime.connect_prep import check_shared_working
from lakeload.runtime.early_runs import EarlyRuns
from lakeload.runtime.extract_metrics import extract_info
from lakeload.runtime.info import LoadInfo, PackageInfo
from lakeload.runtime.package_destination import check_package_destination
from lakeload.runtime.pipeline_inspect import package_info
from lakeload.runtime.pipeline_maintenance import Maintenance
from lakeload.runtime.pipeline_settings import PipelineSettings
from lakeload.runtime.pipeline_spark import SparkPart
from lakeload.runtime.progress import Progress
from lakeload.runtime.refresh import RefreshPlan, apply_to_schema, check_refresh, plan_refresh
from lakeload.runtime.run_args import warn_merge_fallback
from lakeload.runtime.schema_seed import seed_schema
from lakeload.runtime.state import bump_state, staged_state, stored_state
from lakeload.runtime.step_info import ExtractInfo, NormalizeInfo
from lakeload.runtime.steps import failing_step
from lakeload.runtime.trace import RunTrace
from lakeload.schema.schema import Schema
from lakeload.storage.packages import EXTRACTED, LOADED, NORMALIZED, PipelineStorage, read_json


class Steps:
    """Extract, normalize and load of one pipeline (see the module docstring)."""

    def __init__(
        self, settings: PipelineSettings, storage: PipelineStorage, maintenance: Maintenance, spark: SparkPart,
        progress: Progress, early: EarlyRuns,
    ) -> None:
        self._settings = settings
        self._storage = storage
        self._maintenance = maintenance
        self._spark = spark
        self.progress = progress
        self._early = early

    def extract(
        self, data: Any, overrides: dict[str, Any], schema: str | Schema | None, loader_file_format: str | None, *,
        overlap: bool, refresh: str | None, default_refresh: str | None,
    ) -> ExtractInfo:
        """Stream `data` into a new load package; with `overlap`, normalize starts on each extracted file while
        extract goes on (`run()`). Returns dlt's `ExtractInfo` of the package."""
        started, started_at = time.perf_counter(), pendulum.now("UTC")
        settings, state = self._settings, self._maintenance.state
        check_shared_working(settings.pipeline_name, self._spark.current, self._storage)  # a remote Connect server
        refresh = check_refresh(refresh) or default_refresh
        resources, schema_name = self._resources(data, overrides, schema)
        scopes = source_scopes(data, schema_name, settings.pipeline_name)
        stored = self._storage.stored_or_new_schema(schema_name)  # read once: only read below
        naming = settings.schema_naming(stored)
        contracts = root_contracts(data, resources, overrides, stored)
        context = ExtractContext(settings.pipeline_name, schema_name, sources_state=copy.deepcopy(state.get("sources", {})),
                                 spark_session=self._spark.session, merge_strategies=settings.refused_merges_but())
        plan = plan_refresh(stored, context.sources_state, refresh, schema_name,
                            [r.name for r in resources]) if refresh else None
        staged: PipelineState = {}
        destination = settings.extract_destination()
        settings.written_format(loader_file_format)  # (a format the destination does not load fails before extract)

        def manifest_extras() -> dict[str, Any]:  # runs after the resources: the state carries what they changed
            staged.update(staged_state(self._maintenance.state, context.sources_state, settings.destination))
            changed = bump_state(staged) or bool(plan and plan["dropped_tables"])  # a drop always stores the state, as dlt
            stored_staged = stored_state(staged) if changed else None
            return {"state": stored_staged, "loader_file_format": loader_file_format, "destination": destination,
                    "refresh": plan}

        overlap &= contracts is None or not contracts.manifest()  # early normalize knows the stored schema's contract only
        listener = self._early_normalize(schema_name, loader_file_format, plan) if overlap else None
        self.progress.start("extract", unit="rows")
        try:
            with failing_step("extract", settings.pipeline_name, pending=False), young_objects_only():
                result = extract_resources(
                    self._storage,
                    resources,
                    schema_name,
                    naming,
                    progress=lambda n: self.progress.update("extract", n),
                    extra_manifest=manifest_extras,
                    file_max_bytes=settings.file_max_bytes(),
                    context=context,
                    listener=listener,
                    known_tables=frozenset(stored.tables) - set(plan["schema_drops"] if plan else ()),
                    contracts=contracts,
                    writer_settings=lambda res: settings.extract_writer(
                        *scope_of(scopes, res, schema_name, settings.pipeline_name)),
                )
        except BaseException:
            if listener is not None:
                listener.abandon()
            raise
        if listener is not None:
            self._early.add(result.load_id, listener)  # awaited by normalize: the wait is normalize's time
        self._maintenance.state = staged  # committed only now: a failed extract leaves the state (and the same files)
        settings.source_options.update(result.source_options)
        self._maintenance.save_state()
        self.progress.end("extract", f"{sum(result.items.values())} items into {result.files} files")
        waited = listener.waited_seconds() if listener is not None else 0.0  # for early normalize: normalize's time
        self._spark.add_stage_time("extract", started, -waited)
        if waited:
            seconds = self._spark.stage_seconds
            seconds["normalize"] = seconds.get("normalize", 0.0) + waited
        return extract_info(settings.pipeline_name, result, resources, package_info(self._storage, result.load_id),
                            (started_at, pendulum.now("UTC")), first_run=not self._storage.list_packages(LOADED))

    def _resources(self, data: Any, overrides: dict[str, Any], schema: str | Schema | None) -> tuple[list[Resource], str]:
        """The resources of `data` with the call's hints, and the schema they go into (named in the state), their
        names checked before anything is extracted."""
        settings, state = self._settings, self._maintenance.state
        resources, source_name = resources_from(data, overrides["table_name"] or settings.pipeline_name)
        if any(v is not None for v in overrides.values()):
            resources = [r.with_hints(**overrides) for r in resources]
        schema_name = (seed_schema(self._storage, schema, data) or source_name or state.get("default_schema_name")
                       or settings.pipeline_name)
        check_extract_names(resources, schema_name, settings.naming, overrides["table_name"])
        if not state.get("default_schema_name"):
            state["default_schema_name"] = schema_name
        if schema_name not in state["schema_names"]:
            state["schema_names"].append(schema_name)
        return resources, schema_name

    def _early_normalize(self, schema_name: str, loader_file_format: str | None, plan: RefreshPlan | None) -> EarlyNormalize:
        """Normalize that starts on extracted files while extract goes on (`run()` only)."""
        schema = apply_to_schema(self._storage.stored_or_new_schema(schema_name), plan)
        fmt = self._settings.written_format(loader_file_format)
        return EarlyNormalize(self._spark.session, lambda: self._normalizer(schema, fmt), schema)

    def _normalizer(self, schema: Schema, fmt: str) -> Normalizer:
        settings = self._settings
        return Normalizer(
            self._spark.session(), self._storage, settings.schema_naming(schema), fmt, settings.compressed(),
            max_nesting=settings.max_nesting(), destination_merges=settings.destination_merges(),
            on_progress=lambda n: self.progress.update("normalize", n),
            source_options=settings.source_options_for,
            file_limits=settings.normalize_file_limits(),
        )

    def run(self, trace: RunTrace, extract: Callable[[], ExtractInfo] | None) -> None:
        """`run()`'s steps, as dlt's: [normalize of pending packages,] `extract` (when there is data), normalize, load,
        then `run` around them, each recorded in `trace`."""
        with trace.step("run") as run_step:
            self._maintenance.sync_step()
            with trace.step("normalize") as step:
                step.step_info = self.normalize()
                step.skipped, trace.normalized = not step.step_info.packages, trace.normalized + step.step_info.packages
            if extract is not None:
                with trace.step("extract") as step:
                    step.step_info = extract()
                    step.early_normalize = self._early.waited_seconds(step.step_info.loads_ids[0])
                with trace.step("normalize") as step:
                    step.step_info = NormalizeInfo(self._settings.pipeline_name, self.normalize_extracted())
                    trace.normalized += step.step_info.packages
            with trace.step("load") as step:
                run_step.step_info = step.step_info = trace.loaded(self.load(redirect_pending=False))

    def normalize(self) -> NormalizeInfo:
        """Normalize every extracted package on Spark, a package a crash left half-way again."""
        self._storage.recover()
        self._early.forget()
        return NormalizeInfo(self._settings.pipeline_name, self.normalize_extracted())

    def normalize_extracted(self) -> list[PackageInfo]:
        """Normalize the extracted packages (their early normalize runs taken)."""
        infos = []
        pipeline_name = self._settings.pipeline_name
        for load_id in self._storage.list_packages(EXTRACTED):
            started = time.perf_counter()
            manifest = read_json(os.path.join(self._storage.package_dir(EXTRACTED, load_id), "manifest.json"))
            schema = apply_to_schema(self._storage.stored_or_new_schema(manifest["schema_name"]), manifest.get("refresh"))
            fmt = self._settings.written_format(manifest.get("loader_file_format"), announce=True)
            self.progress.start("normalize", len(manifest["splits"]), unit="Spark tasks")
            early = self._early.take(load_id)
            with failing_step("normalize", pipeline_name, load_id):
                result = self._normalizer(schema, fmt).normalize(load_id, schema, early.results(load_id) if early else None)
            self._storage.save_schema(schema)
            if self._settings.refused_merges_but() is None:  # (a destination that merges itself does not append)
                warn_merge_fallback(schema, manifest)
            self.progress.end("normalize", f"{sum(result.row_counts.values())} rows in {result.files} files")
            self._spark.add_stage_time("normalize", started)
            beside = early.busy_seconds() if early else 0.0  # pass 1 run while extract went on
            infos.append(PackageInfo(load_id, schema.name, result.row_counts, normalize_seconds=result.elapsed + beside,
                                     spark_tasks=len(manifest["splits"]), state="normalized",
                                     schema_update=result.schema_update, row_path_splits=result.row_path_splits))
        return infos

    def load(self, redirect_pending: bool) -> LoadInfo:
        """Load every normalized package into the destination (see `Pipeline.load`)."""
        client, info, destination = self._loader()
        info.first_run = not self._storage.list_packages(LOADED)
        current = self._settings.destination_record()
        pipeline_name = self._settings.pipeline_name
        self._storage.recover()
        for load_id in self._storage.list_packages(NORMALIZED):
            started = time.perf_counter()
            self.progress.start("load")
            with failing_step("load", pipeline_name, load_id):
                package = self._storage.normalized_package(load_id)[1]
                check_package_destination(package, current, load_id, pipeline_name, redirect_pending)
                result = load_with(client, destination, self._storage, load_id)
                self._storage.complete(load_id)
            self.progress.end("load", f"{len(result.files)} files")
            self._spark.add_stage_time("load", started)
            info.packages.append(
                PackageInfo(load_id, result.schema_name, result.row_counts, [dict(f) for f in result.files],
                            result.replaced_tables,
                            load_seconds=result.elapsed or time.perf_counter() - started, created_at=package.get("created_at"),
                            schema_update=package.get("schema_update", {}), completed_at=self._storage.completed_at(load_id))
            )
        info.finish(self._spark.stage_seconds)
        return info

    def _loader(self) -> tuple[JobClient, LoadInfo, Destination]:
        """The destination's job client, the load info its packages go into, and the destination."""
        client = self._maintenance.job_client()
        settings = self._settings
        destination = settings.destination
        assert destination is not None  # `job_client` raised otherwise
        info = LoadInfo(settings.pipeline_name, destination.name, destination.destination_type, settings.dataset_name,
                        destination.location(settings.pipeline_name))
        return client, info, destination

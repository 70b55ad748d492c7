"""What `lakeload pipeline` prints: read from a pipeline's working folder only (no Spark, no bucket).

    lakeload pipeline --list
    lakeload pipeline github_demo info
    lakeload pipeline github_demo trace
    lakeload pipeline github_demo load-package [LOAD_ID]
    lakeload pipeline github_demo failed-jobs
    lakeload pipeline github_demo schema --format json

Every value shown passes through the secret masking of `lakeload.config.log_secrets`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lakeload.config.log_secrets import mask_secrets
from lakeload.destinations.state_types import PipelineState
from lakeload.errors import LakeloadError, WorkingFolderCorruptedError
from lakeload.runtime.package_destination import DestinationRecord, newest_record
from lakeload.runtime.trace import load_trace
from lakeload.storage.packages import EXTRACTED, LOADED, NORMALIZED, PipelineStorage
from lakeload.storage.working import DEFAULT_PIPELINES_DIR, pipeline_storage

if TYPE_CHECKING:
    from lakeload.runtime.pipeline import Pipeline


class PipelineNotFoundError(LakeloadError):
    """`lakeload pipeline <name>` names no pipeline in the pipelines folder."""


@dataclass
class WorkingFolder:
    """A pipeline's working folder as the command line sees it."""

    name: str
    pipelines_dir: str
    storage: PipelineStorage

    @property
    def state(self) -> PipelineState:
        return self.storage.load_state() or {}

    def repair_state(self) -> PipelineState:
        """The state, or, when `state.json` is broken, the dataset and destination the newest package recorded:
        what `sync` and `drop-pending-packages` need to repair the folder (the other commands name the file)."""
        try:
            return self.state or self.recorded_names()
        except WorkingFolderCorruptedError:
            return self.recorded_names()

    def pending(self) -> list[tuple[str, str]]:
        """`(load id, stage)` of every package not loaded yet (extracted or normalized)."""
        return [(load_id, stage) for stage in (EXTRACTED, NORMALIZED) for load_id in self.storage.list_packages(stage)]

    def attach(self, destination: Any, dataset: str | None = None) -> Pipeline:
        """The pipeline on this folder as it is (nothing wiped, no Spark started); its dataset from the state
        unless `dataset` is given."""
        from lakeload.runtime.pipeline import Pipeline

        return Pipeline(self.name, destination, dataset or self.repair_state().get("dataset_name"), self.pipelines_dir,
                        attached=True)

    def configured_destination(self) -> str:
        """The destination the state names, else the configured filesystem one."""
        return str(self.repair_state().get("destination_name") or "filesystem")

    def recorded_names(self) -> PipelineState:
        """`dataset_name` and `destination_name` as the newest package recorded them (empty when none did)."""
        record = self.recorded()
        return {"dataset_name": record["dataset_name"], "destination_name": record["destination_name"]} if record else {}

    def recorded(self) -> DestinationRecord | None:
        """Where the pipeline last loaded (the newest loaded package's record), else where its pending packages
        go; None for packages without a record. The bucket URL's password is masked."""
        return newest_record(self.storage, (LOADED,)) or newest_record(self.storage, (NORMALIZED, EXTRACTED))

    def destination(self) -> Any:
        """The bucket the pipeline last loaded to, with credentials from configuration (a script that passed its
        bucket in code left it in no configuration); the configured destination when no package records one."""
        from lakeload.runtime.attach import recorded_destination

        found = recorded_destination(self.storage, (LOADED,)) or recorded_destination(self.storage, (NORMALIZED, EXTRACTED))
        return found if found is not None else self.configured_destination()


def pipelines_folder(pipelines_dir: str | None) -> str:
    return os.path.expanduser(pipelines_dir or DEFAULT_PIPELINES_DIR)


def open_folder(name: str, pipelines_dir: str | None) -> WorkingFolder:
    """The working folder of pipeline `name`; `PipelineNotFoundError` (listing the pipelines there) if none."""
    folder = pipelines_folder(pipelines_dir)
    if not os.path.isdir(os.path.join(folder, name)):
        known = ", ".join(list_pipelines(folder)) or "none"
        raise PipelineNotFoundError(
            f"No pipeline '{name}' in {folder} (pipelines there: {known}). Fix: check the name, or pass --pipelines-dir."
        )
    return WorkingFolder(name, folder, pipeline_storage(folder, name))


def list_pipelines(folder: str) -> list[str]:
    """Names of the pipelines with a working folder in `folder`."""
    if not os.path.isdir(folder):
        return []
    return sorted(n for n in os.listdir(folder) if os.path.isdir(os.path.join(folder, n)) and not n.startswith("."))


def show_list(pipelines_dir: str | None) -> str:
    folder = pipelines_folder(pipelines_dir)
    names = list_pipelines(folder)
    lines = [f"{len(names)} pipeline(s) in {folder}"] + [f"  {n}" for n in names]
    return "\n".join(lines)


def show_info(wf: WorkingFolder) -> str:
    """The pipeline's state, schemas and packages, as `dlt pipeline <name> info` shows them."""
    state = wf.state
    sources = state.get("sources", {})
    lines = [
        f"Pipeline {wf.name}",
        f"  working folder: {wf.storage.root}",
        f"  dataset: {state.get('dataset_name')}",
        f"  destination: {_where(wf)}",
        f"  state version: {state.get('_state_version', 0)}",
        f"  schemas: {', '.join(state.get('schema_names', [])) or 'none'} (default: {state.get('default_schema_name')})",
    ]
    for source, source_state in sources.items():
        resources = ", ".join(source_state.get("resources", {})) or "none"
        lines.append(f"  source {source}: resources with state: {resources}")
    for stage, label in ((EXTRACTED, "extracted (to normalize)"), (NORMALIZED, "normalized (to load)"), (LOADED, "loaded")):
        ids = wf.storage.list_packages(stage)
        shown = ", ".join(ids[-5:]) + (" ..." if len(ids) > 5 else "")
        lines.append(f"  packages {label}: {len(ids)}" + (f" [{shown}]" if ids else ""))
    trace = load_trace(wf.storage.root)
    if trace is not None:
        failed = [s["step"] for s in trace["steps"] if s.get("error")]
        lines.append(f"  last run: {trace['started_at']}" + (f", FAILED at {failed[0]}" if failed else ", completed"))
    return mask_secrets("\n".join(lines))


def _where(wf: WorkingFolder) -> str:
    """The destination and bucket the packages record, or the state's destination when none does."""
    record = wf.recorded()
    if record is None:
        return f"{wf.state.get('destination_name') or wf.state.get('destination_type')} (no package records its bucket)"
    bucket = f" at {record['bucket_url']}" if record["bucket_url"] else ""
    return f"{record['destination_type']} '{record['destination_name']}'{bucket}"


def spark_start_note(trace: dict[str, Any]) -> str:
    """Which steps waited for Spark's start (that wait is left out of their times), or that none did."""
    waited = [f"{s['step']} waited {s['spark_wait']:.2f} s of it" for s in trace["steps"]
              if s["step"] != "run" and s.get("spark_wait", 0.0) >= 0.005]
    return ", ".join(waited) + " (left out of the steps' times)" if waited else "beside extract: no step waited for it"


def show_trace(wf: WorkingFolder) -> str:
    """The last run's steps with their times, rows per table and errors."""
    trace = load_trace(wf.storage.root)
    if trace is None:
        return f"Pipeline {wf.name} has no trace yet: it is written by every pipeline.run(), extract(), normalize() and load()."
    bucket = f" at {trace['bucket_url']}" if trace.get("bucket_url") else ""
    lines = [f"Run of {wf.name} to {trace.get('destination_name')}{bucket} started {trace['started_at']}"]
    start = trace.get("spark_start")
    if start:  # not a step: the steps' times leave it out (see lakeload.runtime.trace)
        lines.append(f"  {'spark start':<11} {start['elapsed']:8.2f} s  {spark_start_note(trace)}")
    for step in trace["steps"]:
        status = f"FAILED: {step['error']}" if step.get("error") else "ok"
        lines.append(f"  {step['step']:<11} {step['elapsed']:8.2f} s  {status}")
    for package in trace.get("packages", []):
        rows = sum(package["row_counts"].values())
        seconds = package["normalize_seconds"] + package["load_seconds"]
        rate = f", {rows / seconds:,.0f} rows/s" if seconds > 0 else ""
        lines.append(f"  package {package['load_id']} ({package['schema_name']}): {rows} rows in {package['files']} "
                     f"files, {package.get('spark_tasks', 0)} Spark tasks, normalize {package['normalize_seconds']:.2f} s, "
                     f"load {package['load_seconds']:.2f} s{rate}")
        lines += [f"    {table}: {count}" for table, count in sorted(package["row_counts"].items())]
    return mask_secrets("\n".join(lines))


def show_load_package(wf: WorkingFolder, load_id: str | None) -> str:
    """One package (the newest when no id is given): its stage, schema, rows per table and files."""
    from lakeload.runtime.pipeline_inspect import package_info

    if load_id is None:
        ids = sorted(i for stage in (EXTRACTED, NORMALIZED, LOADED) for i in wf.storage.list_packages(stage))
        if not ids:
            return f"Pipeline {wf.name} has no load packages."
        load_id = ids[-1]
    info = package_info(wf.storage, load_id)
    lines = [f"Load package {info.load_id} of schema {info.schema_name}: {info.state}"
             + (f", created {info.created_at}" if info.created_at else "")]
    lines += [f"  {table}: {count} rows" for table, count in sorted(info.row_counts.items())]
    lines.append(f"  {len(info.files)} file(s)")
    return mask_secrets("\n".join(lines))


def show_failed_jobs(wf: WorkingFolder) -> str:
    """What failed: lakeload stops a step at its first failed job, so this is the failed step of the last run and
    the packages it left pending (with how to retry or drop them)."""
    trace = load_trace(wf.storage.root)
    failed = [s for s in (trace or {}).get("steps", []) if s.get("error")]
    pending = [load_id for load_id, _ in wf.pending()]
    if not failed and not pending:
        return f"Pipeline {wf.name}: no failed jobs."
    lines = [f"Pipeline {wf.name}:"]
    lines += [f"  the last run failed at {s['step']}: {s['error']}" for s in failed]
    if pending:
        lines.append(f"  pending packages: {', '.join(pending)}. Retry with pipeline.load() or the next run(); give "
                     f"them up with `lakeload pipeline {wf.name} drop-pending-packages`.")
    return mask_secrets("\n".join(lines))


def show_schema(wf: WorkingFolder, schema_name: str | None, fmt: str) -> str:
    """A stored schema (the default one when none is named) as YAML or JSON, dlt's layout."""
    name = schema_name or wf.state.get("default_schema_name")
    schema = wf.storage.load_schema(name) if name else None
    if schema is None:
        raise PipelineNotFoundError(
            f"Pipeline {wf.name} has no schema {name!r} (schemas: {', '.join(wf.state.get('schema_names', [])) or 'none'})."
            " Fix: run the pipeline first, or name one of its schemas with --schema."
        )
    return mask_secrets(json.dumps(schema.to_dict(), indent=2) if fmt == "json" else schema.to_pretty_yaml())

"""`pipeline.last_trace`: what the last `run()` did, step by step (dlt's trace, kept small); steps called on their
own are added to it (`lakeload.runtime.pipeline_traces`).

As in dlt, a run's steps are `extract`, `normalize`, `load` and last `run` (the whole call; packages left
pending by an earlier run add a `normalize` first), each in the order it finished, with its `step_info`:
`last_extract_info`, `last_normalize_info` and `last_load_info` read the last of each.

Spark's start is not a step (a script reading `steps` by name sees dlt's names only): `trace.spark_start`
holds it when this run started Spark (when, `elapsed`, and the `thread` that ran it: `lakeload-normalize_0` when
it started beside the generator), and a step's `elapsed` is its own time, less what its thread waited for that
start (`spark_wait`). Normalize starts on extracted files while extract goes on, and extract waits for those
tasks before its package moves on: that wait (`early_normalize`) counts in normalize's `elapsed`, not extract's.
`started_at`/`finished_at` stay the step's wall-clock window, as in dlt. The `run` step's `elapsed` is the whole
call, start included.

Example (after `p.run(...)`, which needs Spark)::

    [s.step for s in p.last_trace.steps]    # ['extract', 'normalize', 'load', 'run']
    p.last_trace.spark_start.elapsed        # None when Spark was already running
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

import pendulum

from lakeload.config.log_secrets import mask_secrets
from lakeload.runtime.info import LoadInfo, PackageInfo
from lakeload.runtime.spark_start import SparkStart, SparkStartClock
from lakeload.runtime.step_info import ExtractInfo, NormalizeInfo
from lakeload.storage.packages import read_json, write_json_atomic

TRACE_FILE = "trace.json"


class SparkStartRecord(TypedDict):
    """When the run's Spark session started and how long that took (`thread`: started beside extract)."""

    started_at: str
    elapsed: float
    thread: str  # the name of the thread that started it


class StepRecord(TypedDict):
    """One step of the run in `trace.json`."""

    step: str
    started_at: str
    elapsed: float
    error: str | None
    spark_wait: float


class PackageRecord(TypedDict):
    """One package the run loaded, in `trace.json`."""

    load_id: str
    schema_name: str
    row_counts: dict[str, int]
    normalize_seconds: float
    load_seconds: float
    files: int
    spark_tasks: int


class TraceRecord(TypedDict):
    """`trace.json`: the last run of the pipeline (`RunTrace.asdict`), read by `lakeload pipeline ... trace` and
    the dashboard."""

    pipeline_name: str
    destination_name: str | None
    destination_type: str | None
    bucket_url: str | None
    started_at: str
    finished_at: str | None
    spark_start: SparkStartRecord | None
    steps: list[StepRecord]
    load_ids: list[str]
    row_counts: dict[str, int]
    packages: list[PackageRecord]


def read_trace(folder: str) -> TraceRecord | None:
    """The last trace saved in the working folder `folder` (a `run()`'s and the steps called after it; None before
    the first)."""
    path = os.path.join(folder, TRACE_FILE)
    return cast(TraceRecord, read_json(path)) if os.path.exists(path) else None


def load_trace(folder: str) -> dict[str, Any] | None:
    """`read_trace` as a plain dict, for `runtime.pipeline_views` (which passes it on as one)."""
    path = os.path.join(folder, TRACE_FILE)
    return read_json(path) if os.path.exists(path) else None  # type: ignore[no-any-return]


@dataclass
class StepTrace:
    """One step of a run: its name, when it started and ended, and what went wrong, if anything."""

    step: str
    started_at: pendulum.DateTime
    finished_at: pendulum.DateTime | None = None
    error: str | None = None
    step_info: Any = None  # ExtractInfo, NormalizeInfo or LoadInfo (dlt's), None when the step failed
    skipped: bool = False  # set inside the block: the step had nothing to do and is not recorded
    spark_wait: float = 0.0  # seconds the step waited for Spark's start (not in `elapsed`, except for `run`)
    early_normalize: float = 0.0  # seconds extract waited for normalize begun beside it: normalize's, not extract's

    @property
    def step_exception(self) -> str | None:
        """dlt's name of the step's error."""
        return self.error

    @property
    def elapsed(self) -> float:
        """The step's own seconds: its window less its wait for Spark's start (see the module doc)."""
        window = (self.finished_at - self.started_at).total_seconds() if self.finished_at else 0.0
        if self.step == "run":
            return window
        moved = self.early_normalize if self.step == "normalize" else -self.early_normalize
        return max(0.0, window - self.spark_wait + moved)


@dataclass
class RunTrace:
    """The trace of one `run()`: the destination it went to, its steps and the load info."""

    pipeline_name: str
    destination_name: str | None
    destination_type: str | None
    started_at: pendulum.DateTime = field(default_factory=lambda: pendulum.now("UTC"))
    steps: list[StepTrace] = field(default_factory=list)
    load_info: LoadInfo | None = None
    normalized: list[PackageInfo] = field(default_factory=list)  # what normalize did (its Spark tasks)
    clock: SparkStartClock | None = field(default=None, repr=False)  # the pipeline's, to time Spark's start apart
    spark_start: SparkStart | None = None  # Spark's start, when this run started it
    _perf_started: float = field(default_factory=time.perf_counter, repr=False)

    @contextlib.contextmanager
    def step(self, step: str) -> Iterator[StepTrace]:
        """Record step `step` for the `with` block: start, end, and the error it raised (credentials masked); the
        step enters `steps` when it ends, as dlt's (a `run` step around others comes after them).

        >>> trace = RunTrace("quick_start", "filesystem", "filesystem")
        >>> with trace.step("load") as record:
        ...     record.step_info = "the LoadInfo"     # record.step_info = load()
        >>> with trace.step("normalize"):
        ...     raise ValueError("no such file")
        Traceback (most recent call last):
        ValueError: no such file
        >>> [(s.step, s.error) for s in trace.steps]
        [('load', None), ('normalize', 'ValueError: no such file')]
        """
        record, started = StepTrace(step, pendulum.now("UTC")), time.perf_counter()
        try:
            yield record
        except BaseException as exc:
            record.error = mask_secrets(f"{type(exc).__name__}: {exc}")
            raise
        finally:
            record.finished_at = pendulum.now("UTC")
            if step == "normalize" and self.steps and self.steps[-1].step == "extract":
                record.early_normalize = self.steps[-1].early_normalize  # that wait was this normalize's work
            if self.clock is not None:
                record.spark_wait = self.clock.waited(started, time.perf_counter())
                self.spark_start = self.clock.since(self._perf_started)
            if not record.skipped or record.error:
                self.steps.append(record)

    @classmethod
    def from_record(cls, record: TraceRecord) -> RunTrace:
        """A trace read back from `trace.json` (`asdict`): its steps' names, times and errors, without their infos."""
        steps = []
        for saved in record["steps"]:
            started = cast(pendulum.DateTime, pendulum.parse(saved["started_at"]))
            wait = saved.get("spark_wait", 0.0)
            steps.append(StepTrace(saved["step"], started, started.add(seconds=saved["elapsed"] + wait), saved["error"],
                                   spark_wait=wait))
        return cls(record["pipeline_name"], record["destination_name"], record["destination_type"],
                   cast(pendulum.DateTime, pendulum.parse(record["started_at"])), steps)

    def last_pipeline_step_trace(self, step_name: str) -> StepTrace | None:
        """The last step named `step_name` (dlt's)."""
        return next((s for s in reversed(self.steps) if s.step == step_name), None)

    def _last_info(self, step_name: str) -> Any:
        step = self.last_pipeline_step_trace(step_name)
        return step.step_info if step is not None else None

    @property
    def last_extract_info(self) -> ExtractInfo | None:
        return self._last_info("extract")  # type: ignore[no-any-return]

    @property
    def last_normalize_info(self) -> NormalizeInfo | None:
        return self._last_info("normalize")  # type: ignore[no-any-return]

    @property
    def last_load_info(self) -> LoadInfo | None:
        return self._last_info("load")  # type: ignore[no-any-return]

    def loaded(self, info: LoadInfo) -> LoadInfo:
        """The run's load info, its packages given the normalize seconds (and Spark tasks) this run's normalize took."""
        normalized = {p.load_id: p for p in self.normalized}
        for package in info.packages:
            done = normalized.get(package.load_id)
            if done is not None:
                package.normalize_seconds, package.spark_tasks = done.normalize_seconds, done.spark_tasks
        self.load_info = info
        return info

    def asdict(self) -> TraceRecord:
        """The trace as JSON-ready values (what `trace.json` in the working folder holds)."""
        info = self.load_info
        start = self.spark_start
        return {
            "pipeline_name": self.pipeline_name,
            "destination_name": self.destination_name,
            "destination_type": self.destination_type,
            "bucket_url": info.bucket_url if info else None,  # masked, as the load info's
            "started_at": self.started_at.isoformat(),
            "finished_at": self.steps[-1].finished_at.isoformat() if self.steps and self.steps[-1].finished_at else None,
            "spark_start": SparkStartRecord(started_at=start.started_at.isoformat(), elapsed=start.elapsed,
                                            thread=start.thread) if start else None,
            "steps": [
                {"step": s.step, "started_at": s.started_at.isoformat(), "elapsed": s.elapsed, "error": s.error,
                 "spark_wait": s.spark_wait}
                for s in self.steps
            ],
            "load_ids": info.load_ids if info else [],
            "row_counts": info.row_counts if info else {},
            "packages": [
                {"load_id": p.load_id, "schema_name": p.schema_name, "row_counts": p.row_counts,
                 "normalize_seconds": p.normalize_seconds, "load_seconds": p.load_seconds, "files": len(p.files),
                 "spark_tasks": p.spark_tasks}
                for p in (info.load_packages if info else [])
            ],
        }

    @contextlib.contextmanager
    def saved_to(self, folder: str) -> Iterator[RunTrace]:
        """Run the `with` block, then save the trace as `<folder>/trace.json`, whether the block failed or not."""
        try:
            yield self
        finally:
            write_json_atomic(os.path.join(folder, TRACE_FILE), self.asdict())

    def __str__(self) -> str:
        steps = ", ".join(f"{s.step} {s.elapsed:.2f} s" + (" FAILED" if s.error else "") for s in self.steps)
        if self.spark_start is not None:
            steps = f"spark start {self.spark_start.elapsed:.2f} s, {steps}"
        return f"Run of {self.pipeline_name} to {self.destination_name} ({self.destination_type}): {steps}"

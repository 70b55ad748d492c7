"""`pipeline.last_trace`: what the last `run()` did, step by step (dlt's trace, kept small).

As in dlt, a run's steps are `extract`, `normalize`, `load` and last `run` (the whole call; packages left
pending by an earlier run add a `normalize` first), each in the order it finished, with its `step_info`:
`last_extract_info`, `last_normalize_info` and `last_load_info` read the last of each.

>>> [s.step for s in p.last_trace.steps]
['extract', 'normalize', 'load', 'run']
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pendulum

from lakeload.runtime.info import LoadInfo, PackageInfo
from lakeload.runtime.log_secrets import mask_secrets
from lakeload.runtime.packages import read_json, write_json_atomic
from lakeload.runtime.step_info import ExtractInfo, NormalizeInfo

TRACE_FILE = "trace.json"


def load_trace(folder: str) -> dict[str, Any] | None:
    """The trace of the last `run()` saved in the working folder `folder` (None before the first run)."""
    path = os.path.join(folder, TRACE_FILE)
    return read_json(path) if os.path.exists(path) else None


@dataclass
class StepTrace:
    """One step of a run: its name, when it started and ended, and what went wrong, if anything."""

    step: str
    started_at: pendulum.DateTime
    finished_at: pendulum.DateTime | None = None
    error: str | None = None
    step_info: Any = None  # ExtractInfo, NormalizeInfo or LoadInfo (dlt's), None when the step failed
    skipped: bool = False  # set inside the block: the step had nothing to do and is not recorded

    @property
    def step_exception(self) -> str | None:
        """dlt's name of the step's error."""
        return self.error

    @property
    def elapsed(self) -> float:
        return (self.finished_at - self.started_at).total_seconds() if self.finished_at else 0.0


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

    @contextlib.contextmanager
    def step(self, step: str) -> Iterator[StepTrace]:
        """Record step `step` for the `with` block: start, end, and the error it raised (credentials masked); the
        step enters `steps` when it ends, as dlt's (a `run` step around others comes after them).

        >>> with trace.step("load") as record:
        ...     record.step_info = load()
        """
        record = StepTrace(step, pendulum.now("UTC"))
        try:
            yield record
        except BaseException as exc:
            record.error = mask_secrets(f"{type(exc).__name__}: {exc}")
            raise
        finally:
            record.finished_at = pendulum.now("UTC")
            if not record.skipped or record.error:
                self.steps.append(record)

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

    def asdict(self) -> dict[str, Any]:
        """The trace as JSON-ready values (what `trace.json` in the working folder holds)."""
        info = self.load_info
        tasks = {p.load_id: p.spark_tasks for p in self.normalized}
        return {
            "pipeline_name": self.pipeline_name,
            "destination_name": self.destination_name,
            "destination_type": self.destination_type,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.steps[-1].finished_at.isoformat() if self.steps and self.steps[-1].finished_at else None,
            "steps": [
                {"step": s.step, "started_at": s.started_at.isoformat(), "elapsed": s.elapsed, "error": s.error}
                for s in self.steps
            ],
            "load_ids": info.load_ids if info else [],
            "row_counts": info.row_counts if info else {},
            "packages": [
                {"load_id": p.load_id, "schema_name": p.schema_name, "row_counts": p.row_counts,
                 "normalize_seconds": p.normalize_seconds, "load_seconds": p.load_seconds, "files": len(p.files),
                 "spark_tasks": tasks.get(p.load_id, 0)}
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
        return f"Run of {self.pipeline_name} to {self.destination_name} ({self.destination_type}): {steps}"

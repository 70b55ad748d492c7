"""`pipeline.last_trace`: what the last `run()` did, step by step (dlt's trace, kept small)."""

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

    def start(self, step: str) -> StepTrace:
        trace = StepTrace(step, pendulum.now("UTC"))
        self.steps.append(trace)
        return trace

    @contextlib.contextmanager
    def step(self, step: str) -> Iterator[StepTrace]:
        """Record step `step` for the `with` block: start, end, and the error it raised (credentials masked).

        >>> with trace.step("load"):
        ...     load()
        """
        record = self.start(step)
        try:
            yield record
        except BaseException as exc:
            record.error = mask_secrets(f"{type(exc).__name__}: {exc}")
            raise
        finally:
            record.finished_at = pendulum.now("UTC")

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

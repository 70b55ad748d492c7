"""`pipeline.last_trace`: what the last `run()` did, step by step (dlt's trace, kept small)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pendulum

from lakeload.runtime.info import LoadInfo
from lakeload.runtime.log_secrets import mask_secrets


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
        return {
            "pipeline_name": self.pipeline_name,
            "destination_name": self.destination_name,
            "destination_type": self.destination_type,
            "started_at": self.started_at.isoformat(),
            "steps": [{"step": s.step, "elapsed": s.elapsed, "error": s.error} for s in self.steps],
            "load_ids": self.load_info.load_ids if self.load_info else [],
        }

    def __str__(self) -> str:
        steps = ", ".join(f"{s.step} {s.elapsed:.2f} s" + (" FAILED" if s.error else "") for s in self.steps)
        return f"Run of {self.pipeline_name} to {self.destination_name} ({self.destination_type}): {steps}"

"""The traces part of `Pipeline`: `pipeline.last_trace` after `run()` and after a step called on its own, as dlt's.

`run()` makes a new trace of its steps (`Traces.run`). `extract()`, `normalize()` or `load()` called on their own
(the `traced` decorator) each make a one-step trace that, as dlt's `merge_traces`, is added to the last trace: after
`p.extract(...)`, `p.normalize()`, `p.load()` the trace holds `extract`, `normalize`, `load`, and
`last_extract_info`, `last_normalize_info`, `last_load_info` read them; after a `run()`, a step called alone is added
to the run's trace. Inside `run()` the steps are the run's (see `Steps.run`). The trace is saved as `trace.json` in
the working folder after every call, failed or not, and read back by a new pipeline object of that folder (its steps
without their infos, which `trace.json` does not keep).

>>> import tempfile
>>> traces = Traces("quick_start", tempfile.mkdtemp(), None)
>>> with traces.step("extract", None) as step:
...     step.step_info = "the ExtractInfo"
>>> [s.step for s in traces.last.steps], traces.last.last_extract_info
(['extract'], 'the ExtractInfo')
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from typing import Any, Protocol, TypeVar

import pendulum

from lakeload.destinations.reference import Destination
from lakeload.runtime.spark_start import SparkStartClock
from lakeload.runtime.trace import TRACE_FILE, RunTrace, StepTrace, read_trace
from lakeload.storage.packages import write_json_atomic

_F = TypeVar("_F", bound=Callable[..., Any])


class Traces:
    """The last trace of one pipeline object, and the `run()` in progress."""

    def __init__(self, pipeline_name: str, folder: str, clock: SparkStartClock | None) -> None:
        self.pipeline_name = pipeline_name
        self.folder = folder  # the working folder: `trace.json`
        self.clock = clock
        self.last: RunTrace | None = None
        self._running = False

    @property
    def last_trace(self) -> RunTrace | None:
        """The last trace this object made, else the one saved in the working folder (steps without infos)."""
        if self.last is None and os.path.exists(os.path.join(self.folder, TRACE_FILE)):
            record = read_trace(self.folder)
            self.last = RunTrace.from_record(record) if record is not None else None
        return self.last

    def forget(self) -> None:
        """No last trace (the working folder was dropped)."""
        self.last = None

    def _new(self, destination: Destination | None) -> RunTrace:
        return RunTrace(self.pipeline_name, destination.name if destination else None,
                        destination.type_name if destination else None, clock=self.clock)

    @contextlib.contextmanager
    def run(self, destination: Destination | None) -> Iterator[RunTrace]:
        """The trace of a `run()`: it replaces the last one, and is saved whether the run failed or not."""
        trace = self.last = self._new(destination)
        self._running = True
        try:
            with trace.saved_to(self.folder):
                yield trace
        finally:
            self._running = False

    @contextlib.contextmanager
    def step(self, name: str, destination: Destination | None) -> Iterator[StepTrace]:
        """Record step `name` called on its own, added to the last trace; inside `run()`, the run records it."""
        if self._running:
            yield StepTrace(name, pendulum.now("UTC"))  # not kept: `Steps.run` has the run's steps
            return
        trace = self._new(destination)
        try:
            with trace.step(name) as record:
                yield record
        finally:
            if name == "normalize" and record.step_info is not None:
                trace.normalized += record.step_info.packages
            if name == "load" and record.step_info is not None:
                trace.loaded(record.step_info)
            self.last = self._merged(trace)
            write_json_atomic(os.path.join(self.folder, TRACE_FILE), self.last.asdict())

    def _merged(self, trace: RunTrace) -> RunTrace:
        """dlt's `merge_traces`: a one-step trace is added to the last one (the last 100 steps kept)."""
        last = self.last_trace
        if last is None or len(trace.steps) != 1:
            return trace
        last.steps = [*last.steps, *trace.steps][-100:]
        last.normalized += trace.normalized
        if trace.load_info is not None:
            last.load_info = trace.load_info
        return last


class _Traced(Protocol):
    _traces: Traces

    @property
    def destination(self) -> Destination | None: ...


def traced(step: str) -> Callable[[_F], _F]:
    """A pipeline method that is step `step` of the trace (dlt's `with_runtime_trace`): it returns the step's info."""

    def decorate(method: _F) -> _F:
        @functools.wraps(method)
        def wrapper(pipeline: _Traced, *args: Any, **kwargs: Any) -> Any:
            with pipeline._traces.step(step, pipeline.destination) as record:
                record.step_info = method(pipeline, *args, **kwargs)
            return record.step_info

        return wrapper  # type: ignore[return-value]

    return decorate

"""Spark's start, timed apart from the steps: `spark start 5.10 s` is its own line, not part of extract's time.

A pipeline starts its Spark session when a step first needs it: beside the generator (early normalize starts it in
its own thread once extract's first file fills), or on the thread of a step that waits for it (a small extract's
normalize, a `load()` alone, a source reading through Spark). The clock records the start's window, and every
stretch a thread spent waiting for it; a step's own time is its window less what its thread waited for Spark.
A start beside the generator is not taken from extract's time: extract did not wait for it.

>>> clock = SparkStartClock()
>>> step_started = time.perf_counter()
>>> with clock.starting():        # around the session's start: `session_for(pipeline_name, spark)`
...     time.sleep(0.2)
>>> clock.asked(step_started)     # the step asked for the session at `step_started` and has it now
>>> clock.start.elapsed >= 0.2
True
>>> clock.own_seconds(step_started, time.perf_counter()) < 0.2  # the step's time without its wait for Spark
True
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pendulum


@dataclass
class SparkStart:
    """One start of Spark: when (wall clock and `perf_counter`) and how long; `thread` names who ran it."""

    started_at: pendulum.DateTime
    started: float  # time.perf_counter()
    finished: float
    thread: str

    @property
    def elapsed(self) -> float:
        return self.finished - self.started


@dataclass
class SparkStartClock:
    """Spark's start in one pipeline, and the stretches (thread id, from, to) threads waited for it."""

    start: SparkStart | None = None
    waits: list[tuple[int, float, float]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @contextlib.contextmanager
    def starting(self) -> Iterator[None]:
        """Time the `with` block as Spark's start (a block that fails records nothing: the step raises)."""
        started_at, started = pendulum.now("UTC"), time.perf_counter()
        yield
        with self._lock:
            self.start = SparkStart(started_at, started, time.perf_counter(), threading.current_thread().name)

    def asked(self, since: float) -> None:
        """The current thread asked for the session at `since` and has it now: if a start ended meanwhile, the
        thread waited for it (ran it, or blocked while another thread ran it)."""
        now = time.perf_counter()
        with self._lock:
            if self.start is not None and self.start.finished >= since:
                self.waits.append((threading.get_ident(), since, now))

    def waited(self, started: float, finished: float) -> float:
        """Seconds the current thread waited for Spark's start between `started` and `finished`."""
        me = threading.get_ident()
        with self._lock:
            return sum(max(0.0, min(finished, b) - max(started, a)) for thread, a, b in self.waits if thread == me)

    def own_seconds(self, started: float, finished: float | None = None) -> float:
        """The current thread's time from `started` to `finished` (now by default), less its wait for Spark."""
        finished = time.perf_counter() if finished is None else finished
        return max(0.0, finished - started - self.waited(started, finished))

    def since(self, started: float) -> SparkStart | None:
        """The start, when it began at or after `started` (during that run); None otherwise."""
        start = self.start
        return start if start is not None and start.started >= started else None

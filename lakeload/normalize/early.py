"""Normalize while extract runs: pass 1 of every extracted file starts on Spark as soon as the file is closed.

`pipeline.run()` overlaps the two steps. Extract closes a JSONL file when it reaches `file_max_bytes`; that
file's normalize task (parse, infer, write; see `kernel.normalize.tasks.normalize_split`) is submitted as its own
Spark job from a small thread pool while the generator goes on producing the next file; Spark itself starts
in that pool as soon as extract's first JSONL file holds 1 MiB, while the generator fills it. Before the package
leaves `extracting`, every submitted task is awaited; the normalize step then folds the results in split
order with those of any file extract did not hand over, exactly as if all had run at the end, so the
tables come out the same. If extract fails, the tasks are awaited and their output dropped with the package.
"""

from __future__ import annotations

import copy
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from lakeload.kernel.normalize.plan import Split
from lakeload.kernel.normalize.report import SplitReport
from lakeload.kernel.normalize.tasks import normalize_split
from lakeload.schema.typing import TTable
from lakeload.spark.session import run_tasks
from lakeload.storage.packages import NORMALIZING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.normalize.normalizer import Normalizer
    from lakeload.schema.schema import Schema

logger = logging.getLogger("lakeload.normalize")
EARLY_JOBS = 2  # Spark jobs in flight at once: enough to keep local cores busy beside the generator
# Python's GIL switch interval while Spark starts beside the generator (Python's default: 5 ms), see `quick_handoff`
START_SWITCH_INTERVAL = 0.0002


@contextmanager
def quick_handoff(interval: float = START_SWITCH_INTERVAL) -> Iterator[None]:
    """Python's GIL switch interval shortened to `interval` seconds inside the block, then put back.

    `run()` starts Spark in a thread beside the generator's. The start makes ~160 py4j calls, each waiting on a
    socket without the GIL and then asking for it back, and runs ~1 s of Python (imports, configuration). Against a
    thread busy in pure Python each hand-over waits up to the switch interval (5 ms): the JVM waits between calls
    and the start's Python runs in 5 ms slices. In a cold 1M-event `run()` on 2 cores, one core stood idle for ~3 s
    of the start; with 0.2 ms both were busy from ~1.5 s on and the first job began 1.5-4 s sooner.
    """
    previous = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    applied = sys.getswitchinterval()  # Python keeps whole microseconds: compare with what it kept
    try:
        yield
    finally:
        if sys.getswitchinterval() == applied:  # unless someone set their own meanwhile
            sys.setswitchinterval(previous)


class EarlyNormalize:
    """Runs pass 1 of closed splits of package `load_id` in the background."""

    def __init__(self, spark: Callable[[], SparkSession], normalizer: Callable[[], Normalizer], schema: Schema) -> None:
        self._spark = spark
        self._normalizer = normalizer
        self._schema = copy.deepcopy(schema)
        self._pool = ThreadPoolExecutor(max_workers=EARLY_JOBS, thread_name_prefix="lakeload-normalize")
        self._futures: dict[int, tuple[str, Future[SplitReport]]] = {}
        self._load_id: str | None = None  # the package extract is writing (one per extract)
        self._starting = False  # Spark's start was submitted (once the first file fills)
        self._busy: list[tuple[float, float]] = []  # perf_counter windows of the tasks, Spark's start excluded
        self._waited = 0.0  # seconds extract waited for the tasks (after Spark's start): normalize's time
        self._lock = threading.Lock()

    def filling(self) -> None:
        """Called by extract once a JSONL file holds `FILLING_BYTES`: Spark starts now, in the background, so that
        the first file's job finds it running (or starting) instead of starting it once the file is complete. A
        small extract, or one that fails at its first items, starts no Spark here. A start that fails is left to
        that job, which raises its error."""
        with self._lock:
            if not self._starting:
                self._starting = True
                self._pool.submit(self._start)

    def _start(self) -> None:
        with quick_handoff():
            self._spark()

    def submit(self, load_id: str, index: int, split: dict[str, Any], tables: dict[str, TTable]) -> None:
        """Called by extract when split `index` (a closed JSONL file) is complete."""
        if split.get("file_format") != "jsonl":
            return
        hints = copy.deepcopy(tables)
        future = self._pool.submit(self._run, load_id, index, split, hints)
        with self._lock:
            self._futures[index] = (os.path.basename(split["path"]), future)
            self._load_id = load_id

    def _run(self, load_id: str, index: int, split: dict[str, Any], tables: dict[str, TTable]) -> SplitReport:
        spark = self._spark()  # a start is Spark's time, not this task's
        started = time.perf_counter()
        try:
            return self._pass_one(spark, load_id, index, split, tables)
        finally:
            with self._lock:
                self._busy.append((started, time.perf_counter()))

    def _pass_one(
        self, spark: SparkSession, load_id: str, index: int, split: dict[str, Any], tables: dict[str, TTable]
    ) -> SplitReport:
        normalizer = self._normalizer()
        schema = copy.deepcopy(self._schema)
        item = Split(index, split["path"], split["root_table"], "jsonl", split.get("may_have_tags", False))
        plan = normalizer.plan(load_id, schema, tables, [item])
        normalizer.output(plan)
        description = f"lakeload normalize {load_id}"
        result: SplitReport = run_tasks(spark, normalize_split, plan, [item], description, working=plan.working)[0]
        return result

    def busy_seconds(self) -> float:
        """Seconds in which some task ran (overlapping tasks counted once): this normalize's time beside extract."""
        with self._lock:
            windows = sorted(self._busy)
        total, reach = 0.0, float("-inf")
        for started, finished in windows:
            total += max(0.0, finished - max(started, reach))
            reach = max(reach, finished)
        return total

    def wait(self) -> None:
        """Wait for every submitted task. A failed one is left to the normalize step, which runs it again
        and reports its error there (extract itself succeeded). Spark's start is awaited first, by asking for the
        session: the wait is then Spark's time, not normalize's (`runtime.spark_start`)."""
        with self._lock:
            futures = [f for _, f in self._futures.values()]
        if futures:
            try:
                self._spark()
            except Exception:  # noqa: BLE001 - a start that fails is the normalize step's to raise, as it reruns the tasks
                logger.debug("Spark did not start for early normalize; normalize starts it again", exc_info=True)
        started = time.perf_counter()
        for future in futures:
            if future.exception() is not None:
                logger.debug("early normalize task failed; normalize runs it again", exc_info=future.exception())
        if futures:
            with self._lock:
                self._waited += time.perf_counter() - started

    def waited_seconds(self) -> float:
        """Seconds the callers of `wait()` waited for the tasks, Spark's start excluded: normalize's time, spent
        inside extract's (extract waits for them before its package moves on)."""
        with self._lock:
            return self._waited

    def results(self, load_id: str) -> dict[int, tuple[str, SplitReport]]:
        """Successful pass-1 results of package `load_id` by split index, with the split's file name."""
        self.wait()
        self._pool.shutdown(wait=True)
        if load_id != self._load_id:
            return {}
        with self._lock:
            return {index: (name, f.result()) for index, (name, f) in self._futures.items() if f.exception() is None}

    def abandon(self) -> None:
        """Extract failed: stop, wait for running tasks, and drop what they wrote."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._load_id is not None:
            self._normalizer().storage.discard(NORMALIZING, self._load_id)

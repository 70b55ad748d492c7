"""Naming, following and interrupting the Spark jobs of one lakeload step, on classic and Connect sessions.

A classic session marks the jobs with a job group and polls the driver's status tracker for completed tasks.
A Spark Connect session has no driver here: the jobs carry an operation tag (`spark.addTag`), completed
tasks come from Connect's progress messages (`registerProgressHandler`), and Ctrl-C interrupts this step's
operations only (`spark.interruptTag`).

Example (on a Spark session)::

    with tracked_jobs(spark, "Normalizing package 1795296531.14", on_progress=bar.advance):
        frame.collect()
"""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from lakeload.spark.session_kind import is_connect

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

POLL_SECONDS = 0.5
logger = logging.getLogger("lakeload.spark")


def _poll_progress(spark: SparkSession, group: str, on_progress: Callable[[int], None], stop: threading.Event) -> None:
    """Report newly completed tasks of the job group until `stop` is set."""
    tracker = spark.sparkContext.statusTracker()
    reported = 0
    while not stop.wait(POLL_SECONDS):
        try:
            done = 0
            for job_id in tracker.getJobIdsForGroup(group):
                job = tracker.getJobInfo(job_id)
                for stage_id in job.stageIds if job else ():
                    stage = tracker.getStageInfo(stage_id)
                    done += stage.numCompletedTasks if stage else 0
        except Exception:  # progress is best effort; the job itself reports real errors
            return
        if done > reported:
            on_progress(done - reported)
            reported = done


@contextlib.contextmanager
def _classic_jobs(spark: SparkSession, description: str, on_progress: Callable[[int], None] | None) -> Iterator[None]:
    context = spark.sparkContext
    group = f"lakeload-{uuid.uuid4().hex[:12]}"
    context.setJobGroup(group, description)
    stop = threading.Event()
    poller = None
    if on_progress is not None:
        poller = threading.Thread(target=_poll_progress, args=(spark, group, on_progress, stop), daemon=True)
        poller.start()
    try:
        yield
    except KeyboardInterrupt:  # this step's jobs stop (a context shared with other runs keeps theirs)
        with contextlib.suppress(Exception):
            context.cancelJobGroup(group)
        raise
    finally:
        stop.set()
        if poller is not None:
            poller.join(timeout=2)
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        context.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]


class ConnectProgress:
    """A Connect progress handler that reports the completed tasks of operations run by one thread."""

    def __init__(self, on_progress: Callable[[int], None]) -> None:
        self.on_progress = on_progress
        self.thread = threading.get_ident()
        self.done: dict[tuple[str | None, int], int] = {}

    def __call__(self, stages: Iterable[Any] | None, inflight_tasks: int, operation_id: str | None, done: bool) -> None:
        if threading.get_ident() != self.thread:  # another step's operation on the same session
            return
        new = 0
        for stage in stages or ():
            key = (operation_id, int(stage.stage_id))
            completed = int(stage.num_completed_tasks)
            new += max(0, completed - self.done.get(key, 0))
            self.done[key] = max(completed, self.done.get(key, 0))
        if new:
            self.on_progress(new)


@contextlib.contextmanager
def _connect_jobs(spark: SparkSession, on_progress: Callable[[int], None] | None) -> Iterator[None]:
    tag = f"lakeload-{uuid.uuid4().hex[:12]}"
    spark.addTag(tag)
    handler = ConnectProgress(on_progress) if on_progress is not None else None
    if handler is not None:
        spark.registerProgressHandler(handler)  # type: ignore[arg-type]
    try:
        yield
    except KeyboardInterrupt:
        with contextlib.suppress(Exception):  # the server may be gone; the interrupt is what matters
            interrupted = spark.interruptTag(tag)
            logger.info("Interrupted %d Spark Connect operation(s) tagged %s", len(interrupted), tag)
        raise
    finally:
        if handler is not None:
            spark.removeProgressHandler(handler)  # type: ignore[arg-type]
        spark.removeTag(tag)


def tracked_jobs(
    spark: SparkSession, description: str, on_progress: Callable[[int], None] | None = None
) -> contextlib.AbstractContextManager[None]:
    """Mark the Spark jobs started inside as this step's (job group or Connect tag); `on_progress(n)` hears of
    `n` more completed tasks."""
    if is_connect(spark):
        return _connect_jobs(spark, on_progress)
    return _classic_jobs(spark, description, on_progress)


@contextlib.contextmanager
def job_description(spark: SparkSession, description: str) -> Iterator[None]:
    """Show `description` for the jobs started inside in Spark's UI (classic sessions; Connect has no such label)."""
    if is_connect(spark):
        yield
        return
    spark.sparkContext.setJobDescription(description)
    try:
        yield
    finally:
        spark.sparkContext.setJobDescription(None)  # type: ignore[arg-type]

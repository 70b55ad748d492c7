"""The Spark part of `Pipeline`: its session, started once when a step first needs it, and the steps' times kept
apart from that start (`lakeload.runtime.spark_start`): `Elapsed: spark start 5.10 s, extract 0.12 s, ...`.

>>> import time
>>> part = SparkPart("quick_start", PipelineStorage("/tmp/pipelines/quick_start"))   # no session yet
>>> started = time.perf_counter()
>>> part.add_stage_time("extract", started)
>>> list(part.stage_seconds), part.current is None
(['extract'], True)
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from lakeload.runtime.connect_prep import prepare_session
from lakeload.runtime.spark_start import SparkStartClock
from lakeload.storage.packages import PipelineStorage
from lakeload.storage.working import warn_unreachable_packages

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class SparkPart:
    """The session of pipeline `pipeline_name` (working folder `storage`), and the seconds per stage of a run."""

    def __init__(self, pipeline_name: str, storage: PipelineStorage, spark: SparkSession | None = None) -> None:
        self._pipeline_name = pipeline_name
        self._storage = storage
        self._session = spark
        self._checked = False
        self._lock = threading.RLock()
        self.clock = SparkStartClock()
        self.stage_seconds: dict[str, float] = {}  # a run's seconds per stage: `run()` starts it afresh

    @property
    def current(self) -> SparkSession | None:
        """The session as it is now: the one passed in or started, None before (never starts one)."""
        return self._session

    def session(self) -> SparkSession:
        """The Spark session lakeload runs on: the one passed in, the active one, or one it starts from `[spark]`."""
        asked = time.perf_counter()
        with self._lock:
            if self._session is None or not self._checked:
                from lakeload.spark.session import session_for
                from lakeload.spark.session_kind import session_master

                with self.clock.starting():  # its own line in the trace and the load info, not a step's
                    self._session = session_for(self._pipeline_name, self._session)
                    warn_unreachable_packages(session_master(self._session), self._storage)
                    prepare_session(self._pipeline_name, self._session, self._storage)  # Connect: shared data, code
                self._checked = True
                start = self.clock.start
                self.stage_seconds["spark_start"] = start.elapsed if start else 0.0
        self.clock.asked(asked)
        return self._session

    def add_stage_time(self, stage: str, started: float, moved: float = 0.0) -> None:
        """Add to `stage` this thread's seconds since `started`, less its wait for Spark's start, plus `moved`
        (seconds of another stage's work it waited for: negative for extract's wait on early normalize)."""
        seconds = self.clock.own_seconds(started) + moved
        self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + seconds

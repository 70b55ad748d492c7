"""The pipeline's Spark session, started once when a step first needs it, and the steps' times kept apart from
that start (`lakeload.runtime.spark_start`): `Elapsed: spark start 5.10 s, extract 0.12 s, ...`."""

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


class PipelineSpark:
    """Spark plumbing of `Pipeline`: the session, and the seconds per stage without its start."""

    pipeline_name: str
    storage: PipelineStorage
    _stage_seconds: dict[str, float]

    def _init_spark(self, spark: SparkSession | None) -> None:
        self._spark = spark
        self._spark_checked = False
        self._spark_lock = threading.RLock()
        self._spark_clock = SparkStartClock()

    @property
    def spark(self) -> SparkSession:
        """The Spark session lakeload runs on: the one passed in, the active one, or one it starts from `[spark]`."""
        asked = time.perf_counter()
        with self._spark_lock:
            if self._spark is None or not self._spark_checked:
                from lakeload.spark.session import session_for
                from lakeload.spark.session_kind import session_master

                with self._spark_clock.starting():  # its own line in the trace and the load info, not a step's
                    self._spark = session_for(self.pipeline_name, self._spark)
                    warn_unreachable_packages(session_master(self._spark), self.storage)
                    prepare_session(self.pipeline_name, self._spark, self.storage)  # Connect: shared data, shipped code
                self._spark_checked = True
                start = self._spark_clock.start
                self._stage_seconds["spark_start"] = start.elapsed if start else 0.0
        self._spark_clock.asked(asked)
        return self._spark

    def _add_stage_time(self, stage: str, started: float, moved: float = 0.0) -> None:
        """Add to `stage` this thread's seconds since `started`, less its wait for Spark's start, plus `moved`
        (seconds of another stage's work it waited for: negative for extract's wait on early normalize)."""
        seconds = self._spark_clock.own_seconds(started) + moved
        self._stage_seconds[stage] = self._stage_seconds.get(stage, 0.0) + seconds

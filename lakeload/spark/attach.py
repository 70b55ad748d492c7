"""Runs on the kept JVM through its py4j gateway: classic Spark, as the run that started the JVM had it.

A first run's driver JVM is kept as the warm engine when that run ends (`handover`). Through Spark Connect, a run
on it pays for the JVM's SQL side on first use (planner, Connect session, that session's Python workers): about
4 s for a run started the moment the first one ended, since a small run's jobs are plain jobs on the Spark context
(`session.run_tasks`) and the first run never used SQL. Through the JVM's own py4j gateway instead, a later run
gets a classic session on the same context, whose jobs run the code the first run already JIT-compiled, on the
Python daemon it already started: a run attaches in a few tenths of a second.

The supervisor hands the gateway to runs of the same user (`gateway_desk`; the secret never lands in a file, an
argument or the environment). A run attaches only when it runs the very lakeload and Python the JVM's Python
workers run (`gateway_desk.code_id`); otherwise it uses Spark Connect, whose sessions ship their own code.

What stays per process: its SQL session (a new session on the engine's shared state, never the JVM's default
one, so settings and temporary views stay its own), its job groups (Ctrl-C cancels its own jobs), and `stop()`
detaches without stopping the engine other runs use.

Example (on the running engine `state = connect_server.running_server()`)::

    session = attached_session(state, {"spark.sql.session.timeZone": "UTC"})   # None: use Connect instead
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pyspark import SparkContext

from lakeload.spark.gateway_desk import DeskAnswer, ask_desk, code_id, gateway_client
from lakeload.spark.pandas_warning import pandas_check_silenced

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.spark.connect_server import ServerState

logger = logging.getLogger("lakeload.spark")


class AttachedContext(SparkContext):
    """pyspark's `SparkContext` on the engine's running context: `stop()` detaches this process, `cancelAllJobs()`
    cancels this process's job groups only; the engine and other runs' jobs go on."""

    _own_groups: set[str]

    def setJobGroup(self, groupId: str, description: str, interruptOnCancel: bool = False) -> None:
        self._own_groups.add(groupId)
        super().setJobGroup(groupId, description, interruptOnCancel)

    def cancelAllJobs(self) -> None:
        for group in list(self._own_groups):
            self.cancelJobGroup(group)

    def stop(self) -> None:
        accumulators = getattr(self, "_accumulatorServer", None)
        if accumulators is not None:
            accumulators.shutdown()
            self._accumulatorServer = None  # type: ignore[assignment]
        gateway = SparkContext._gateway
        with SparkContext._lock:
            SparkContext._active_spark_context = None
            SparkContext._gateway = None  # a later session in this process attaches or starts anew
            SparkContext._jvm = None
        self._jsc = None  # type: ignore[assignment]
        if gateway is not None:
            with contextlib.suppress(Exception):
                gateway.close()


def attached_session(state: ServerState, options: Mapping[str, str]) -> SparkSession | None:
    """A classic session of this process on the engine `state` through its gateway (see the module), with the SQL
    `options`; None when the engine hands out no gateway, runs other code, or cannot be reached."""
    if SparkContext._gateway is not None:
        return None
    answer = ask_desk(state.attach)  # (none for a server without a desk: `attach` is "")
    if answer is None or answer.code != code_id():
        return None
    try:
        context = _attach(answer)
    except Exception as exc:  # py4j's errors: the gateway is gone or refuses; Connect serves the run instead
        logger.info("could not attach to the Spark engine's gateway (%s); using Spark Connect", type(exc).__name__)
        with SparkContext._lock:
            SparkContext._gateway = SparkContext._jvm = SparkContext._active_spark_context = None
        return None
    from lakeload.spark.deferred_session import DeferredSession

    return DeferredSession(context, options, isolated=True)


def _attach(answer: DeskAnswer) -> AttachedContext:
    gateway = gateway_client(answer.port, answer.secret)
    SparkContext._ensure_initialized(gateway=gateway)
    running = gateway.jvm.org.apache.spark.SparkContext.getOrCreate()
    if running.isStopped():
        raise RuntimeError("the engine's Spark context was stopped")
    handler = signal.getsignal(signal.SIGINT)
    with pandas_check_silenced():  # pyspark checks the pandas version while the context starts
        context = AttachedContext(gateway=gateway, jsc=gateway.jvm.org.apache.spark.api.java.JavaSparkContext(running))
    context._own_groups = set()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, handler)  # pyspark's handler cancels every job of the context, others' too
    return context

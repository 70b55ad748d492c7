"""Issue 17's "through Connect: within 15% of the in-process figures", shared by the bench scripts.

A benchmark child runs in-process Spark with :data:`LOCAL_ENV` (so a running ``lakeload spark start`` server
never changes its figure) and on a local Spark Connect server with :data:`REMOTE_ENV`; the parent wraps a
Connect child in :func:`run_on_server` (:func:`local_connect_server`), which starts the server when none runs
(its start is timed and reported on its own, never inside the child's figures), samples the server's memory
(it is no descendant of the child) and stops it afterwards only if it started it::

    result = run_on_server(lambda: run_child({**spec, "process_env": REMOTE_ENV}), TreeRssSampler)
    goal = connect_goal("files", result, in_process_result)  # result["spark_engine"] from spark_engine()
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goals import Goal, ratio

REPO_ROOT = Path(__file__).resolve().parents[1]
CONNECT_BOUND = 1.15
"""Issue 17: a run through a local Connect server takes at most 15% longer than the same run in-process."""
LOCAL_ENV = {"SPARK__MODE": "local"}
REMOTE_ENV = {"SPARK__MODE": "remote"}
_DROPPED = ("SPARK__MODE", "SPARK__REMOTE", "SPARK_REMOTE")


def child_environment(base: Mapping[str, str], process_env: Mapping[str, str] | None) -> dict[str, str]:
    """``base`` with ``process_env`` applied; Spark's mode/URL keys are dropped first when it sets the mode.

    Without a configured URL, ``SPARK__MODE=remote`` runs on the local server of ``lakeload spark start``.
    """
    env = dict(base)
    if process_env and "SPARK__MODE" in process_env:
        for key in _DROPPED:
            env.pop(key, None)
    env.update(process_env or {})
    return env


@dataclass(frozen=True)
class LocalServer:
    """The local Connect server a Connect child runs on: its pid, and its start seconds (None: it was running)."""

    pid: int
    start_s: float | None


@contextlib.contextmanager
def local_connect_server() -> Iterator[LocalServer]:
    """A local Connect server for the duration of the block; started here when none runs, then stopped here.

    The server's Python workers import this checkout's lakeload (``PYTHONPATH``), like the children's.
    """
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from lakeload.spark.connect_server import running_server, start_server, stop_server

    running = running_server()
    if running is not None:
        print(f"--> using the running local Connect server {running.url} (left running)", flush=True)
        yield LocalServer(running.pid, None)
        return
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), path]))
    started = time.perf_counter()
    try:
        state = start_server()
    finally:
        if path is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = path
    start_s = time.perf_counter() - started
    print(f"--> local Connect server {state.url} started in {start_s:.1f} s (not in any figure below)", flush=True)
    try:
        yield LocalServer(state.pid, start_s)
    finally:
        stop_server()
        print("--> local Connect server stopped", flush=True)


def run_on_server(run: Callable[[], dict[str, Any]], sampler: Callable[[int], Any]) -> dict[str, Any]:
    """``run()`` (a Connect child) inside :func:`local_connect_server`; adds the server's start and peak RSS.

    ``sampler(pid)`` is the bench's ``TreeRssSampler``: the server (its JVM and Python workers) is no
    descendant of the child, so its memory is sampled on its own.
    """
    with local_connect_server() as server:
        rss = sampler(server.pid)
        rss.start()
        try:
            result = run()
        finally:
            rss.stop()
    return {**result, "connect_server_start_s": server.start_s, "connect_server_peak_rss_mb": rss.peak_tree_mb}


def spark_engine() -> str:
    """In a child after its run: ``"connect"`` when lakeload's session is a Spark Connect one, else ``"in-process"``."""
    from lakeload.spark.session import get_spark
    from lakeload.spark.session_kind import is_connect

    return "connect" if is_connect(get_spark()) else "in-process"


def connect_goal(scenario: str, connect: Mapping[str, Any] | None, in_process: Mapping[str, Any] | None) -> Goal:
    """Issue 17's bound: Connect's ``total_s`` / the in-process ``total_s`` <= 1.15.

    Not measured when either run is missing, failed, or did not run on the engine it names (a warning says so).
    """
    connect, in_process = connect or {}, in_process or {}
    engines = (connect.get("spark_engine"), in_process.get("spark_engine"))
    value = ratio(connect.get("total_s"), in_process.get("total_s"))
    if value is not None and engines != ("connect", "in-process"):
        print(f"WARNING: the Connect run ran on {engines[0]!r}, the in-process run on {engines[1]!r}: not compared")
        value = None
    return Goal(f"Connect / in-process ({scenario})", value, CONNECT_BOUND, at_most=True)

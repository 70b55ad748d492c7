"""The warm engine's supervisor process (`python -m lakeload.spark.warm_supervisor`, started by `warm_engine`).

It holds the supervisor lock for its whole life: starts the engine (a Connect server of its own), or keeps the JVM
a run that ended handed over (`handover`), starts the engine's shared session's Python workers, and stops the
engine once no process has used it for `[spark] warm_idle_seconds`. Its log is `~/.lakeload/logs/warm_engine.log`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from lakeload.errors import SparkSetupError
from lakeload.spark import connect_server as server
from lakeload.spark import handover
from lakeload.spark.class_archive import ClassArchive
from lakeload.spark.warm_engine import (
    AUTO,
    DEFAULT_IDLE_SECONDS,
    POLL_S,
    WAIT_POLL_S,
    idle_for,
    mark_holder,
    mark_used,
    supervisor_lock,
)

logger = logging.getLogger("lakeload.spark")


def supervise(pipeline_name: str | None, idle_seconds: float) -> int:
    """The supervisor's life: start the engine (or adopt one started automatically), stop it once idle."""
    with supervisor_lock(blocking=False) as mine:
        if not mine:
            return 0  # another supervisor runs
        state = server.running_server()
        if state is not None and state.started_by != AUTO:
            return 0  # started by hand: kept until `lakeload spark stop`
        if state is None:
            state = server.start_server(pipeline_name=pipeline_name, started_by=AUTO, idle_seconds=idle_seconds)
            _warm_up_in_background()
        mark_used()  # its start counts as a use (the run that waits for it connects next)
        watch(state)
    return 0


def supervise_handed_over(pipeline_name: str | None, idle_seconds: float, lock_fd: int, jvm_stdin: int,
                          outputs: tuple[int, ...]) -> int:
    """The supervisor of a JVM an exiting run handed over (`handover`; the lock `lock_fd` held since that run): keep
    it as the engine, or stop it and start a server when it cannot be kept; stop it once idle."""
    handover.drain(outputs, sys.stdout)
    given = handover.Handover.from_json(sys.stdin.read())
    release = _Release(jvm_stdin)
    try:
        mark_holder(lock_fd)
        if server.running_server() is not None:  # started meanwhile: the JVM ends as its run's would have
            release()
        else:
            state = _adopt_or_start(given, release, pipeline_name, idle_seconds)
            if state.pid != given.pid:  # a new server; runs attach to a kept JVM instead (`attach`): nothing to warm
                _warm_up_in_background()
            mark_used()
            watch(state, release if state.pid == given.pid else None)
    finally:
        os.close(lock_fd)
    while server.server_alive(given.pid):  # made a hand-kept engine: its standard input stays open until it ends
        time.sleep(POLL_S)
    return 0


class _Release:
    """Closes a kept JVM's standard input once: the JVM then ends by itself (pyspark's gateway exits on its end of
    input), shutting Spark down cleanly whatever signals it was started ignoring."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = fd

    def __call__(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


def _adopt_or_start(given: handover.Handover, release: Callable[[], None], pipeline_name: str | None,
                    idle_seconds: float) -> server.ServerState:
    try:
        state = handover.adopt(given, AUTO, idle_seconds)
        logger.info("kept the Spark JVM %s of a run that ended as the engine at %s", given.pid, state.url)
        return state
    except SparkSetupError as exc:
        logger.info("%s; starting a Spark Connect server instead", exc)
    release()  # the JVM ends as its run's would have
    if given.archive_part:  # the archive it writes as it ends is put in place once it has ended
        server.terminate(given.pid)
        ClassArchive(given.archive, given.archive_part).promote()
    return server.start_server(pipeline_name=pipeline_name, started_by=AUTO, idle_seconds=idle_seconds)


def _warm_up_in_background() -> None:
    """Start the new engine's shared session and its Python workers in a short-lived process of its own
    (`shared_session.warm_up`), so the supervisor stays small; its output goes to the supervisor's log."""

    def run() -> None:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run([sys.executable, "-m", "lakeload.spark.shared_session"], stdin=subprocess.DEVNULL,
                           timeout=server.START_TIMEOUT, check=False)
        mark_used()  # its idle time counts from the end of the warm-up (which may take longer than the idle stop)

    threading.Thread(target=run, name="lakeload-warm-up", daemon=True).start()


def watch(state: server.ServerState, release: Callable[[], None] | None = None) -> None:
    """Return once the engine is gone, stopped by hand, or made a hand-kept one; stop it when idle too long
    (`release`: what ends a kept JVM by itself, done before it is stopped)."""
    while True:
        time.sleep(POLL_S)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(state.pid, os.WNOHANG)  # reap it when it exited (this process started it)
        current = server.read_state()
        if current is None and server.server_alive(state.pid):  # its state file is gone (the folder deleted): stop it all the same
            if release is not None:
                release()
            server.terminate(state.pid)
            return
        if current is None or current.pid != state.pid or current.started_by != AUTO:
            return
        if not server.running_server():
            with contextlib.suppress(FileNotFoundError):
                os.remove(server.state_path())
            return
        if idle_for() >= (current.idle_seconds or DEFAULT_IDLE_SECONDS) and _still_idle(current):
            logger.info("stopping the warm Spark engine at %s: unused for %.0f s", state.url, idle_for())
            if release is not None:
                release()
            server.stop_server()
            return


def _still_idle(state: server.ServerState) -> bool:
    """Whether the engine is still unused after a short grace: a run that chose it a moment ago marks its use
    before it connects, so it is not handed an engine that is stopping."""
    time.sleep(WAIT_POLL_S * 4)
    return idle_for() >= (state.idle_seconds or DEFAULT_IDLE_SECONDS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lakeload.spark.warm_supervisor", description=__doc__)
    parser.add_argument("--idle-seconds", type=float, default=DEFAULT_IDLE_SECONDS)
    parser.add_argument("--pipeline", default=None)
    parser.add_argument("--adopt", action="store_true", help="keep the JVM of a run that ended (lakeload.spark.handover)")
    parser.add_argument("--lock-fd", type=int)
    parser.add_argument("--jvm-stdin", type=int)
    parser.add_argument("--jvm-output", default="")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(process)d %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)  # its connections' opening and closing
    if args.adopt:
        outputs = tuple(int(fd) for fd in args.jvm_output.split(",") if fd)
        return supervise_handed_over(args.pipeline, args.idle_seconds, args.lock_fd, args.jvm_stdin, outputs)
    return supervise(args.pipeline, args.idle_seconds)


if __name__ == "__main__":
    sys.exit(main())

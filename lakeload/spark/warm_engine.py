"""The warm local engine lakeload keeps by itself: a Spark Connect server started on first use, stopped when idle.

Starting Spark takes seconds, more than a small run itself. So when a pipeline needs Spark, `[spark] mode` is
"auto", no `master` or `remote` is configured and no server runs, the run starts Spark in its own process as
before, and when that process exits, its JVM is kept and becomes the engine (`handover`: Spark Connect's service
started in it), or, when it cannot be kept, lakeload starts the local Connect server of `lakeload spark start`
in the background (`connect_server.start_server`); later runs, in any process, connect to it (a run that finds
it still starting waits for it). A small supervisor process (`python -m
lakeload.spark.warm_supervisor`, detached, so it outlives the script) starts the server, then stops it once no
process has used it for `[spark] warm_idle_seconds` (15 minutes): each process on it marks its use at the start
and every `HEARTBEAT_S` while it lives (`keep_alive`).

```toml
[spark]
warm = false                 # never start an engine by itself (env SPARK__WARM=false)
warm_idle_seconds = 900      # how long an unused engine it started stays up
```

One supervisor at a time: it holds an exclusive lock on `~/.lakeload/spark/warm_engine.lock` for its whole life,
so two processes starting at once start one engine. A server recorded but gone (killed) is not taken for a
running one (`running_server` checks its pid and port) and is replaced. `lakeload spark status` shows such an
engine (started automatically, idle time left), `lakeload spark stop` stops it.

>>> resolve_warm(None, {"SPARK__WARM": "false"}).enabled
False
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from lakeload.config.resolver import resolve
from lakeload.errors import ConfigurationError, SparkSetupError
from lakeload.spark import connect_server as server

logger = logging.getLogger("lakeload.spark")
AUTO = "auto"
DEFAULT_IDLE_SECONDS = 900.0
HEARTBEAT_S = 30.0  # how often a process on the engine marks that it still uses it (at most; a quarter of the idle time)
POLL_S = 2.0  # how often the supervisor looks at the engine
WAIT_POLL_S = 0.05
LOCK_FILE = os.path.join("~", ".lakeload", "spark", "warm_engine.lock")
USED_FILE = os.path.join("~", ".lakeload", "spark", "warm_engine.used")
SUPERVISOR_LOG = os.path.join("~", ".lakeload", "logs", "warm_engine.log")
_kept: set[str] = set()  # URLs this process marks its use of
_spawned: subprocess.Popen[bytes] | None = None  # the supervisor this process started
_at_exit: tuple[str | None, float] | None = None  # (pipeline, idle seconds) when this process starts the engine at exit
_handing_over = False  # whether this process offers its own Spark as the engine when it exits (`handover`)


@dataclass(frozen=True)
class WarmSettings:
    """`[spark] warm` (start an engine by itself) and `[spark] warm_idle_seconds`, with where they came from."""

    enabled: bool = True
    idle_seconds: float = DEFAULT_IDLE_SECONDS
    enabled_source: str | None = None
    idle_source: str | None = None


def resolve_warm(pipeline_name: str | None = None, environ: Mapping[str, str] | None = None) -> WarmSettings:
    """The warm-engine settings for `pipeline_name` (env and TOML).

    >>> resolve_warm(None, {"SPARK__WARM_IDLE_SECONDS": "60"}).idle_seconds
    60.0
    """
    warm = resolve(("spark",), "warm", pipeline_name, hint=bool, environ=environ)
    idle = resolve(("spark",), "warm_idle_seconds", pipeline_name, hint=float, environ=environ)
    seconds = DEFAULT_IDLE_SECONDS if idle.value is None else idle.value
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
        raise ConfigurationError(
            f"[spark] warm_idle_seconds = {idle.value!r} (from {idle.source}) must be a number of seconds above 0. "
            "Set it to e.g. 900, or turn the warm engine off with [spark] warm = false (env SPARK__WARM=false)."
        )
    return WarmSettings(warm.value is not False, float(seconds), warm.source, idle.source)


def _path(template: str) -> str:
    return os.path.expanduser(template)


@contextlib.contextmanager
def supervisor_lock(blocking: bool) -> Iterator[bool]:
    """Hold the supervisor lock while inside; yields False (holding nothing) when another process holds it."""
    import fcntl

    fd = lock_descriptor(blocking)
    if fd is None:
        yield False
        return
    try:
        mark_holder(fd)
        yield True
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def lock_descriptor(blocking: bool = False) -> int | None:
    """An open descriptor holding the supervisor lock (it can be passed on to a supervisor), or None when another
    process holds it (`blocking`: wait for it instead)."""
    import fcntl

    path = _path(LOCK_FILE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def mark_holder(fd: int) -> None:
    """Write this process's pid into the lock file held through `fd`."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)


def supervisor_running() -> bool:
    """True while a supervisor process holds the lock (starting or watching an engine)."""
    with supervisor_lock(blocking=False) as free:
        return not free


def wait_supervisor_gone(timeout: float = 4 * POLL_S) -> bool:
    """Wait until no supervisor runs (one whose engine was stopped by hand exits within `POLL_S`); True if none."""
    deadline = time.monotonic() + timeout
    while supervisor_running():
        if time.monotonic() >= deadline:
            return False
        time.sleep(WAIT_POLL_S * 2)
    return True


def spawn_supervisor(pipeline_name: str | None, idle_seconds: float) -> None:
    """Start the supervisor in the background (its own session: it outlives this process), unless one runs."""
    if supervisor_running():
        return
    global _spawned
    _spawned = _popen_supervisor(pipeline_name, idle_seconds)


def _popen_supervisor(pipeline_name: str | None, idle_seconds: float, *adopting: str,
                      pass_fds: tuple[int, ...] = ()) -> subprocess.Popen[bytes]:
    log_file = _path(SUPERVISOR_LOG)
    os.makedirs(os.path.dirname(log_file), exist_ok=True)
    command = [sys.executable, "-m", "lakeload.spark.warm_supervisor", "--idle-seconds", str(idle_seconds), *adopting]
    with open(log_file, "ab") as log:
        return subprocess.Popen(command + (["--pipeline", pipeline_name] if pipeline_name else []),
                                stdin=subprocess.PIPE if adopting else subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True, cwd=os.path.dirname(log_file),
                                pass_fds=pass_fds)


def session_started(log_file: str) -> None:
    """This process started Spark in itself as a first run (`engine_state` returned None): when it exits, its JVM is
    offered as the engine (`handover`), ahead of the archive's and the supervisor's exit handlers. `log_file`:
    where that JVM's Spark log goes."""
    global _handing_over
    if _at_exit is not None and not _handing_over:
        _handing_over = True
        atexit.register(_hand_over_at_exit, log_file)


def _hand_over_at_exit(log_file: str) -> None:
    """At exit: start a supervisor that keeps this process's JVM as the engine, holding the supervisor lock from here
    on so that a run starting now waits for it; else leave it to `spawn_supervisor` (a new server)."""
    from lakeload.spark import class_archive, handover

    if _at_exit is None or server.running_server() is not None:
        return
    lock = lock_descriptor()
    if lock is None:
        return  # another supervisor runs
    try:
        offered = handover.this_jvm(log_file)
        if offered is None:
            return
        given, stdin_fd, output_fds = offered
        fds = (lock, stdin_fd, *output_fds)
        args = ("--adopt", "--lock-fd", str(lock), "--jvm-stdin", str(stdin_fd), "--jvm-output", ",".join(map(str, output_fds)))
        child = _popen_supervisor(_at_exit[0], _at_exit[1], *args, pass_fds=fds)
        if child.stdin is not None:
            with contextlib.suppress(OSError):
                child.stdin.write(given.to_json().encode())
                child.stdin.close()
        atexit.unregister(spawn_supervisor)
        class_archive.outlive_process()
    except Exception as exc:  # at exit: never raise; the JVM then ends with this process as before
        logger.debug("the Spark JVM could not be handed over: %s", exc)
    finally:
        os.close(lock)


def wait_for_engine(timeout: float = server.START_TIMEOUT) -> server.ServerState | None:
    """The running server once it answers; None when the supervisor gave up (its log says why) or after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = server.running_server()
        if state is not None:
            return state
        spawned = _spawned is not None and _spawned.poll() is None  # it may not hold its lock yet
        if not spawned and not supervisor_running():
            return server.running_server()
        time.sleep(WAIT_POLL_S)
    return None


def wanted(pipeline_name: str | None) -> WarmSettings | None:
    """The warm settings when this run should start (or wait for) the warm engine, else None.

    Only with nothing that names another engine: `[spark] mode` "auto", no `remote`, no `master`, not a driver
    spark-submit started (its JVM is up) nor a process with a Spark context of its own."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from lakeload.spark.connect_session import resolve_engine
    from lakeload.spark.settings import resolve_spark_settings

    if "PYSPARK_GATEWAY_PORT" in os.environ or SparkContext._active_spark_context is not None:
        return None
    if SparkSession.getActiveSession() is not None:
        return None
    engine = resolve_engine(pipeline_name)
    if engine.mode != "auto" or engine.remote or resolve_spark_settings(pipeline_name).master is not None:
        return None
    warm = resolve_warm(pipeline_name)
    if not warm.enabled or _client_missing():
        return None
    return warm


def _client_missing() -> bool:
    try:
        server.check_connect_client()
    except SparkSetupError:  # Connect's client packages are not installed: Spark starts in the process
        return True
    return False


def engine_state(pipeline_name: str | None) -> server.ServerState | None:
    """The warm engine for this run, or None for a session in this process.

    When an engine runs (or starts), the run waits for it and uses it. When none does, this run starts Spark in
    its own process as before, and the engine starts in the background once this process exits (`atexit`): two
    Sparks starting at once on a small machine would slow this run down, and later runs find the engine up.
    """
    warm = wanted(pipeline_name)
    if warm is None:
        return None
    if server.running_server() is None and not supervisor_running():
        _start_at_exit(pipeline_name, warm.idle_seconds)
        return None
    state = wait_for_engine()
    mark_used()
    if state is None:
        logger.info("The warm Spark engine did not start (see %s); Spark starts in this process", _path(SUPERVISOR_LOG))
        return None
    return state


def start_ahead(pipeline_name: str | None = None) -> bool:
    """Start the engine in the background now, when a run would (`lakeload init`: the user's first run follows);
    True when a supervisor was started."""
    if wanted(pipeline_name) is None or server.running_server() is not None or supervisor_running():
        return False
    spawn_supervisor(pipeline_name, resolve_warm(pipeline_name).idle_seconds)
    return True


def _start_at_exit(pipeline_name: str | None, idle_seconds: float) -> None:
    """Start the supervisor when this process exits (once per process)."""
    global _at_exit
    if _at_exit is None:
        _at_exit = (pipeline_name, idle_seconds)
        atexit.register(spawn_supervisor, pipeline_name, idle_seconds)


def mark_used() -> None:
    """Note that a process uses the engine now (the supervisor measures idle time from the latest mark)."""
    path = _path(USED_FILE)
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8"):
            pass
        os.utime(path)


def idle_for(now: float | None = None) -> float:
    """Seconds since a process last marked its use of the engine."""
    try:
        return max(0.0, (time.time() if now is None else now) - os.path.getmtime(_path(USED_FILE)))
    except OSError:
        return 0.0


def keep_alive(url: str) -> None:
    """Mark this process's use of the engine at `url` now and every `HEARTBEAT_S` while it lives, when `url` is
    the recorded local server; an engine started automatically whose supervisor is gone gets a new one."""
    state = server.read_state()
    if state is None or state.url != url:
        return
    mark_used()
    if state.started_by == AUTO and not supervisor_running():
        spawn_supervisor(None, state.idle_seconds or DEFAULT_IDLE_SECONDS)
    if url in _kept:
        return
    _kept.add(url)
    every = min(HEARTBEAT_S, (state.idle_seconds or DEFAULT_IDLE_SECONDS) / 4)

    def beat() -> None:
        while True:
            time.sleep(every)
            mark_used()

    threading.Thread(target=beat, name="lakeload-warm-engine", daemon=True).start()


def keep_by_hand(state: server.ServerState) -> server.ServerState:
    """Make an engine started automatically one kept until `lakeload spark stop` (its supervisor lets it be)."""
    kept = replace(state, started_by="hand", idle_seconds=0.0)
    server.write_state(kept)
    return kept

"""A local Spark Connect server in the background: the warm engine behind `lakeload spark start | stop | status`.

The server is pyspark's own (`SparkConnectServer` from the jars inside the pyspark wheel), launched with
`spark-submit` on `local[*]`, bound to 127.0.0.1 only, with lakeload's quiet logging and Spark settings. Its
pid, port and log file are kept in `~/.lakeload/spark/connect_server.json`; pipelines in later processes find
it there (`[spark] mode = "auto"`) and run on it through Spark Connect instead of starting Spark themselves.
Like an in-process session, the server's JVM uses a class-data archive of its own (`class_archive`): the
first server writes it when `stop_server` stops it, later ones start with it.

Example (starts a server)::

    state = start_server()          # returns once the server answers; ~7 s, ~2 s with its class archive
    running_server().url            # 'sc://127.0.0.1:15002'
    stop_server()                   # the state of the server it stopped
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from lakeload.errors import SparkSetupError
from lakeload.spark.class_archive import ClassArchive, class_archive, with_archive
from lakeload.spark.gateway_desk import ask_desk

HOST = "127.0.0.1"
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
KEPT_JVM_MARKS = (b"org.apache.spark.deploy.SparkSubmit", b"pyspark-shell", b"spark.app.name=lakeload")
STATE_FILE = os.path.join("~", ".lakeload", "spark", "connect_server.json")
LOG_FILE = os.path.join("~", ".lakeload", "logs", "connect_server.log")
DEFAULT_PORT = 15002  # Spark Connect's own default port
START_TIMEOUT = 120.0
STOP_TIMEOUT = 30.0
ROLE = "connect-server"  # the server's class archive is its own (`class_archive`)
CLIENT_MODULES = ("grpc", "grpc_status", "google.rpc", "zstandard", "pandas", "pyarrow")


@dataclass(frozen=True)
class ServerState:
    """A local Connect server lakeload started: its process, where it listens and where it logs."""

    pid: int
    port: int
    master: str
    log_file: str
    started_at: float
    archive: str = ""  # the JVM class-data archive it started with or writes at exit (`class_archive`)
    archive_part: str = ""  # where it writes that archive when it stops ("" when it started with one)
    started_by: str = "hand"  # "hand" (`lakeload spark start`) or "auto" (the warm engine, `warm_engine`)
    idle_seconds: float = 0.0  # an "auto" server stops itself after this long unused
    attach: str = ""  # a kept JVM's: the socket its supervisor hands its py4j gateway out on (`spark.attach`)

    @property
    def url(self) -> str:
        """The Spark Connect URL of the server (`sc://127.0.0.1:<port>`)."""
        return f"sc://{HOST}:{self.port}"


def state_path() -> str:
    """Where the running server's state is kept (`~/.lakeload/spark/connect_server.json`)."""
    return os.path.expanduser(STATE_FILE)


def check_connect_client() -> None:
    """Raise a `SparkSetupError` naming the install command when Spark Connect's client packages are missing."""
    import importlib.util

    missing = [name for name in CLIENT_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise SparkSetupError(
            f"Spark Connect's client packages are missing ({', '.join(missing)} cannot be imported). "
            "Install them with `pip install \"lakeload[connect]\"` (or `pip install \"pyspark[connect]\"`)."
        )


def spark_home() -> str:
    """The Spark installation inside the pyspark wheel (its `bin/spark-submit` and `jars/`)."""
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def default_or_free_port() -> int:
    """Spark Connect's own port 15002 when nothing listens on it, else a free loopback port."""
    return DEFAULT_PORT if not port_answers(DEFAULT_PORT) else free_port()


def port_answers(port: int, timeout: float = 0.5) -> bool:
    """True when something accepts TCP connections on 127.0.0.1:`port`."""
    with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=timeout):
        return True
    return False


def server_command(master: str, port: int, conf: Mapping[str, str]) -> list[str]:
    """The `spark-submit` command line of a Connect server on `master`, listening on 127.0.0.1:`port`."""
    settings = {**conf, "spark.connect.grpc.binding.address": HOST, "spark.connect.grpc.binding.port": str(port)}
    command = [os.path.join(spark_home(), "bin", "spark-submit"), "--class", SERVER_CLASS,
               "--name", "lakeload Spark Connect server", "--master", master]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    return command


def server_environment(conf: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: this venv's Python for its workers, loopback networking, pyspark's SPARK_HOME."""
    from lakeload.spark.settings import executors_python

    env = dict(os.environ)
    env["SPARK_HOME"] = spark_home()
    env["PYSPARK_PYTHON"] = executors_python(conf, env)
    env["SPARK_LOCAL_IP"] = HOST
    env["SPARK_CONNECT_MODE"] = "0"  # spark-submit launches a classic driver, as start-connect-server.sh does
    for name in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET"):
        env.pop(name, None)
    return env


def launch(master: str, port: int, conf: Mapping[str, str], log_file: str) -> subprocess.Popen[bytes]:
    """Start a Connect server process in its own session (it outlives this process); output goes to `log_file`."""
    from lakeload.spark.java import check_java

    check_java()
    os.makedirs(os.path.dirname(log_file), exist_ok=True)
    with open(log_file, "ab") as log:
        return subprocess.Popen(
            server_command(master, port, conf), env=server_environment(conf), stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=os.path.dirname(log_file),
        )


def _log_tail(log_file: str, lines: int = 8) -> str:
    try:
        with open(log_file, encoding="utf-8", errors="replace") as handle:
            return "".join(handle.readlines()[-lines:]).strip()
    except OSError:
        return ""


def wait_until_listening(process: subprocess.Popen[bytes], port: int, log_file: str, timeout: float = START_TIMEOUT) -> None:
    """Return once the server accepts connections; stop it and raise a `SparkSetupError` if it exits or is too slow."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SparkSetupError(
                f"The Spark Connect server exited with code {process.returncode} while starting. Its log "
                f"({log_file}) ends with:\n{_log_tail(log_file)}\nFix the cause above, then start it again."
            )
        if port_answers(port):
            return
        time.sleep(0.2)
    terminate(process.pid)
    raise SparkSetupError(
        f"The Spark Connect server did not listen on {HOST}:{port} within {timeout:.0f} s and was stopped; see "
        f"{log_file}. On a busy machine start it again with a longer `--timeout`."
    )


def server_alive(pid: int) -> bool:
    """Whether `pid` is a live Spark Connect server process (not a pid used again since, where /proc tells)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # the pid may have been reused by another program since the server stopped
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            command = handle.read()
    except OSError:
        return True  # no /proc (macOS): trust the pid
    return SERVER_CLASS.encode() in command or is_kept_jvm(command)


def is_kept_jvm(command_line: bytes) -> bool:
    """Whether a process's command line (`/proc/<pid>/cmdline`) is that of a driver JVM lakeload launched in a run
    (kept as the engine when that run ended: `lakeload.spark.handover`)."""
    return all(mark in command_line for mark in KEPT_JVM_MARKS)


def terminate(pid: int, timeout: float = STOP_TIMEOUT) -> None:
    """Stop the server process `pid` and its process group: SIGTERM (Spark shuts down cleanly), then SIGKILL."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server_alive(pid):
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reap it when this process started it
        time.sleep(0.1)
    if server_alive(pid):  # a JVM started with SIGTERM ignored (it inherits that) does not stop on it
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # a server is its session's leader: its Python workers go too


def read_state(path: str | None = None) -> ServerState | None:
    """The server recorded in `path` (default `state_path()`), running or not, or None when none is."""
    try:
        with open(path or state_path(), encoding="utf-8") as handle:
            return ServerState(**json.load(handle))
    except (OSError, ValueError, TypeError):
        return None


def running_server() -> ServerState | None:
    """The recorded server when its process is alive and its port answers (a kept JVM: or its gateway desk, while
    its Connect service starts), else None."""
    state = read_state()
    if state is None or not server_alive(state.pid):
        return None
    if not port_answers(state.port) and not (state.attach and ask_desk(state.attach, timeout=0.5) is not None):
        return None
    return state


def wait_for_port(state: ServerState, timeout: float = START_TIMEOUT) -> bool:
    """Wait until the Connect port of `state` answers (a kept JVM starts its service after it is recorded)."""
    deadline = time.monotonic() + timeout
    while not port_answers(state.port):
        if time.monotonic() > deadline or not server_alive(state.pid):
            return False
        time.sleep(0.1)
    return True


def write_state(state: ServerState, path: str | None = None) -> None:
    """Record `state` in `path` (default `state_path()`) for other processes, atomically."""
    path = path or state_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temp = f"{path}.{os.getpid()}.tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(asdict(state), handle)
    os.replace(temp, path)


def start_server(
    master: str | None = None, port: int | None = None, timeout: float = START_TIMEOUT, pipeline_name: str | None = None,
    started_by: str = "hand", idle_seconds: float = 0.0,
) -> ServerState:
    """Start a local Connect server in the background and record it; returns the running one if there is one.

    `master` defaults to `[spark] master` or `local[*]`; `port` to 15002, or a free port when that is taken.
    The server gets the settings an in-process session would (`[spark.conf]`, lakeload's quiet logging).

    Example (starts a server, or returns the running one)::

        start_server(port=15002).url   # 'sc://127.0.0.1:15002'
    """
    from lakeload.spark.python_daemon import with_python_daemon
    from lakeload.spark.settings import DEFAULT_MASTER, resolve_spark_settings, session_conf, with_lazy_jit

    running = running_server()
    if running is not None:
        return running
    check_connect_client()
    settings = resolve_spark_settings(pipeline_name)
    master = master or settings.master or DEFAULT_MASTER
    if port is None:
        port = default_or_free_port()
    elif port_answers(port):
        raise SparkSetupError(f"Port {port} on {HOST} is already in use; choose another with `--port`.")
    log_file = os.path.expanduser(LOG_FILE)
    conf = with_python_daemon(master, with_lazy_jit(master, session_conf(settings), settings.lazy_jit))
    archive = class_archive(conf, ROLE) if settings.class_archive else None
    process = launch(master, port, with_archive(conf, archive) if archive else conf, log_file)
    try:
        wait_until_listening(process, port, log_file, timeout)
    except SparkSetupError:
        if archive is None or archive.part is not None or process.poll() is None:
            raise
        archive.discard()  # the JVM could not use it: start again without it
        archive, process = None, launch(master, port, conf, log_file)
        wait_until_listening(process, port, log_file, timeout)
    path, part = (archive.path, archive.part or "") if archive else ("", "")
    state = ServerState(process.pid, port, master, log_file, time.time(), path, part, started_by, idle_seconds)
    write_state(state)
    return state


def stop_server(timeout: float = STOP_TIMEOUT) -> ServerState | None:
    """Stop the recorded server and forget it; returns what was stopped, or None when none was running."""
    state = read_state()
    stopped = None
    if state is not None and server_alive(state.pid):
        terminate(state.pid, timeout)
        stopped = state
    if state is not None and state.archive_part:  # written by the JVM as it stopped: later servers start with it
        ClassArchive(state.archive, state.archive_part).promote()
    if state is not None and state.attach:  # its supervisor's gateway desk (`gateway_desk`) answers no more
        with contextlib.suppress(OSError):
            os.remove(state.attach)
    with contextlib.suppress(FileNotFoundError):
        os.remove(state_path())
    return stopped

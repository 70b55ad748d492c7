"""One real local Spark Connect server per test session, started from pyspark's own jars.

Registered as a pytest plugin from tests/conftest.py. The session-scoped ``connect_server`` fixture starts
``SparkConnectServer`` with ``spark-submit`` on ``local[2]`` (quiet logs, bound to 127.0.0.1 on a free port),
waits until it answers, and stops it at the end of the session (SIGTERM, then SIGKILL of its process group;
it also dies with the test process through PR_SET_PDEATHSIG). It is started only when a test asks for it,
and never more than once per session.

The server is recorded in ``<home>/.lakeload/spark/connect_server.json`` as ``lakeload spark start`` would
record it, so a child process run with ``HOME=<home>`` finds it (``[spark] mode = "auto"``) and so do
``lakeload spark status | stop`` there.

Its Python workers cannot import lakeload, as on a server that never installed it: they run a throwaway venv's
Python that sees the test venv's site-packages (pyspark, pyarrow, ...) through a plain path entry, so the
editable install's import hook there is never run; PYTHONPATH is dropped and the server runs in its own
folder. lakeload reaches them only the way it reaches any Connect server: shipped with `addArtifacts`.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from lakeload.spark import connect_server as server
from lakeload.spark.settings import SparkSettings, session_conf
from servers.fixtures import _die_with_parent

MASTER = "local[2]"
TEST_CONF = {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"}
START_TIMEOUT = float(os.environ.get("LAKELOAD_TEST_SERVER_TIMEOUT", "120"))


@dataclass(frozen=True)
class ConnectServer:
    """The session's Connect server: its URL, the HOME that records it, and how long it took to start."""

    port: int
    home: Path
    log_file: str
    startup_seconds: float

    @property
    def url(self) -> str:
        return f"sc://{server.HOST}:{self.port}"

    def env(self) -> dict[str, str]:
        """Environment for a child process that should find this server as the running local one."""
        return {**os.environ, "HOME": str(self.home)}


def python_without_lakeload(folder: Path) -> str:
    """A Python with this venv's packages but without lakeload (not installed, not on any path)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    purelib = sysconfig.get_paths(vars={"base": str(folder), "platbase": str(folder)})["purelib"]
    Path(purelib, "shared_site_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return str(folder / "bin" / "python")


def _state_file(home: Path) -> str:
    return str(home / ".lakeload" / "spark" / "connect_server.json")


def _stop_recorded(home: Path, first_pid: int) -> None:
    """Stop the server the state file names now (a test may have restarted it) and the one started here."""
    state = server.read_state(_state_file(home))
    for pid in {first_pid, *([state.pid] if state else [])}:
        server.terminate(pid, timeout=20)


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectServer]:
    """A running local Spark Connect server (pyspark's jars, local[2], 127.0.0.1, quiet logs) for this session."""
    home = tmp_path_factory.mktemp("connect-home")
    log_dir = home / ".lakeload" / "logs"
    log_dir.mkdir(parents=True)
    log_file = str(log_dir / "connect_server.log")
    started = time.monotonic()
    workers_python = python_without_lakeload(home / "server-venv")
    conf = {**session_conf(SparkSettings(log_file=str(log_dir / "spark.log"))), **TEST_CONF,
            "spark.pyspark.python": workers_python}
    env = {**server.server_environment(conf), "HOME": str(home)}
    env.pop("PYTHONPATH", None)
    port = server.free_port()
    with open(log_file, "ab") as log:
        process = subprocess.Popen(
            server.server_command(MASTER, port, conf), env=env, cwd=str(home), stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_die_with_parent,
        )
    atexit.register(server.terminate, process.pid, 5)
    server.wait_until_listening(process, port, log_file, START_TIMEOUT)
    startup = time.monotonic() - started
    server.write_state(server.ServerState(process.pid, port, MASTER, log_file, time.time()), _state_file(home))
    try:
        yield ConnectServer(port, home, log_file, startup)
    finally:
        _stop_recorded(home, process.pid)
        process.wait(timeout=30)

"""`lakeload spark start | status | stop` against the session's real local Spark Connect server."""

from __future__ import annotations

import subprocess
import sys

import pytest
from servers.spark_connect import ConnectServer

from lakeload.spark.connect_server import read_state


def _cli(server: ConnectServer, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lakeload.cli.main", "spark", *args], env=server.env(),
                          capture_output=True, text=True, timeout=300, cwd=server.home)


@pytest.mark.slow  # stops the session's server and starts it again (~5-15 s)
def test_cli_status_stop_start_round_trip(connect_server: ConnectServer) -> None:
    state_file = str(connect_server.home / ".lakeload" / "spark" / "connect_server.json")
    first = read_state(state_file)
    assert first is not None

    status = _cli(connect_server, "status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert connect_server.url in status.stdout and f"pid {first.pid}" in status.stdout

    stopped = _cli(connect_server, "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert read_state(state_file) is None
    down = _cli(connect_server, "status")
    assert down.returncode == 1 and "No Spark Connect server is running" in down.stdout
    assert _cli(connect_server, "stop").returncode == 1  # nothing left to stop

    # start it again on the same port, so the later tests of this session still find it there
    started = _cli(connect_server, "start", "--master", "local[2]", "--port", str(connect_server.port))
    assert started.returncode == 0, started.stdout + started.stderr
    again = read_state(state_file)
    assert again is not None and again.pid != first.pid and again.port == connect_server.port
    assert "started" in started.stdout and connect_server.url in started.stdout
    assert _cli(connect_server, "status").returncode == 0
    repeated = _cli(connect_server, "start")  # a running server is kept, not started twice
    assert repeated.returncode == 0 and "already running" in repeated.stdout
    assert read_state(state_file) == again

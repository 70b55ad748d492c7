"""The local Connect server's shared session (`lakeload.spark.shared_session`), with real client processes on the
real server of the `connect_server` fixture."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from servers.spark_connect import ConnectServer

from lakeload.spark.connect_server import ServerState
from lakeload.spark.session_kind import with_session_id
from lakeload.spark.shared_session import shared_session_id

CHILD = Path(__file__).with_name("shared_child.py")


def child(server: ConnectServer, tmp_path: Path, **args: Any) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(CHILD), json.dumps(args)], env=server.env(), capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_the_shared_session_is_named_by_server_and_code() -> None:
    state = ServerState(4242, 15002, "local[*]", "log", 1.5)
    first = shared_session_id(state, "lakeload-0.1.0-aa.zip")
    assert first == shared_session_id(ServerState(4242, 15002, "local[2]", "other", 1.5), "lakeload-0.1.0-aa.zip")
    assert len({first, shared_session_id(state, "lakeload-0.1.0-bb.zip"), shared_session_id(state, "lakeload-0.1.0-aa.zip", 1),
                shared_session_id(ServerState(4243, 15002, "local[*]", "log", 1.5), "lakeload-0.1.0-aa.zip"),
                shared_session_id(ServerState(4242, 15002, "local[*]", "log", 2.5), "lakeload-0.1.0-aa.zip")}) == 5
    assert with_session_id("sc://127.0.0.1:1/", "x") == "sc://127.0.0.1:1/;session_id=x"
    assert with_session_id("sc://h:1/;token=t", "x") == "sc://h:1/;token=t;session_id=x"


def test_runs_in_fresh_processes_join_one_server_session(connect_server: ConnectServer, tmp_path: Path) -> None:
    runs = [child(connect_server, tmp_path, mode="run", bucket=str(tmp_path / f"bucket{i}"),
                  pipelines_dir=str(tmp_path / f"pipelines{i}")) for i in range(2)]
    assert runs[0]["shared"] is True and runs[0]["session_id"] == runs[1]["session_id"]
    assert runs[0]["tag"] != runs[1]["tag"]  # each process still tags its own operations
    assert all(run["rows"] == {"users": 10, "users__tags": 20} for run in runs)


def _hold(server: ConnectServer, tmp_path: Path, name: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    (out / f"hold-{name}").write_text("")
    args = {"mode": "hold", "out": str(out), "name": name, "root": str(tmp_path / name), "url": server.url}
    process = subprocess.Popen([sys.executable, str(CHILD), json.dumps(args)], env=server.env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        raise AssertionError(process.communicate()[1][-4000:])
    return process, dict(json.loads(line))


@pytest.mark.slow  # two clients hold operations on the server while a third cleans up
def test_a_dead_clients_operations_are_stopped_and_its_neighbours_run_on(
    connect_server: ConnectServer, tmp_path: Path
) -> None:
    dead, dead_seen = _hold(connect_server, tmp_path, "dead")
    alive, alive_seen = _hold(connect_server, tmp_path, "alive")
    try:
        assert dead_seen["session_id"] == alive_seen["session_id"]  # one server session, two clients
        dead.send_signal(signal.SIGKILL)
        dead.wait(timeout=30)
        cleanup = child(connect_server, tmp_path, mode="cleanup", root=str(tmp_path / "dead"), url=connect_server.url)
        assert cleanup["session_id"] == alive_seen["session_id"]
        assert any(message.startswith("Stopped 1 Spark operation") for message in cleanup["messages"]), cleanup
        (tmp_path / "out" / "hold-dead").unlink()  # its Python function outlives the killed task otherwise (Spark's way)
        (tmp_path / "out" / "hold-alive").unlink()  # the neighbour's operation was left running: it ends normally
        stdout, stderr = alive.communicate(timeout=120)
        assert alive.returncode == 0, stderr[-4000:]
        assert json.loads(stdout.strip().splitlines()[-1]) == {"rows": 1}
        # a second look finds nothing of the dead client's left running on the server
        again = child(connect_server, tmp_path, mode="cleanup", root=str(tmp_path / "dead"), url=connect_server.url)
        assert not any(message.startswith("Stopped") for message in again["messages"]), again
    finally:
        for flag in (tmp_path / "out").glob("hold-*"):
            flag.unlink()
        for process in (dead, alive):
            if process.poll() is None:
                process.kill()


def test_stop_leaves_the_session_to_others_and_a_released_one_is_replaced(
    connect_server: ConnectServer, tmp_path: Path
) -> None:
    stopped = child(connect_server, tmp_path, mode="stop")
    after_stop = child(connect_server, tmp_path, mode="stop")
    assert after_stop["session_id"] == stopped["session_id"]  # stop() closed the client, not the server session
    released = child(connect_server, tmp_path, mode="release")
    assert released["session_id"] == stopped["session_id"]
    replaced = child(connect_server, tmp_path, mode="run", bucket=str(tmp_path / "bucket"),
                     pipelines_dir=str(tmp_path / "pipelines"))
    assert replaced["shared"] is True and replaced["session_id"] != stopped["session_id"]
    assert replaced["rows"] == {"users": 10, "users__tags": 20}


def test_a_client_closes_at_exit_so_pyspark_calls_no_server_then(connect_server: ConnectServer, tmp_path: Path) -> None:
    """pyspark's exit hook cleans the server's ML cache, retrying for minutes when the engine was stopped meanwhile
    (an idle engine stopped as a run ends): lakeload's client is closed first, so the hook skips every call."""
    assert child(connect_server, tmp_path, mode="exit") == {"closed": True}

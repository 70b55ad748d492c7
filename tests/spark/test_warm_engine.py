"""The warm engine lakeload starts by itself (`lakeload.spark.warm_engine`): real child processes, a real server.

The suite turns it off (`SPARK__WARM=false`, tests/conftest.py); these tests turn it on for their children only.
Everything lives under the test's HOME, and every engine and supervisor started here is stopped at the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lakeload.errors import ConfigurationError
from lakeload.runtime.config_report import show_configuration
from lakeload.spark import connect_server, gateway_desk, warm_engine

REPO = Path(__file__).resolve().parents[2]
CHILD = """
import json, sys
import lakeload
from lakeload.spark.session_kind import is_connect
from lakeload.spark.connect_session import opened_url
pipeline = lakeload.pipeline("warm", destination=lakeload.destinations.filesystem(sys.argv[1]), dataset_name="ds",
                             pipelines_dir=sys.argv[2])
info = pipeline.run([{"id": i, "tags": ["a"]} for i in range(10)], table_name="t")
from pyspark import SparkContext
from lakeload.spark.attach import AttachedContext
jvm = vars(SparkContext._gateway).get("proc") if SparkContext._gateway else None
attached, shuffle, total = isinstance(SparkContext._active_spark_context, AttachedContext), None, None
if attached:  # its own SQL session on the engine's context: settings of its own, stop() only detaches
    shuffle = pipeline.spark.conf.get("spark.sql.shuffle.partitions")
    pipeline.spark.conf.set("spark.sql.shuffle.partitions", "3")
    total = pipeline.spark.range(5).selectExpr("sum(id)").first()[0]
    pipeline.spark.stop()
print(json.dumps({"connect": is_connect(pipeline.spark), "url": opened_url(pipeline.spark), "failed": info.has_failed_jobs,
                  "session_id": getattr(pipeline.spark, "session_id", None), "jvm": jvm.pid if jvm else None,
                  "attached": attached, "shuffle": shuffle, "total": total}))
"""


def _servers_in(home: Path) -> list[int]:
    """Pids of the Connect servers whose working folder is `home`'s log folder (where lakeload launches them)."""
    logs, found = str(home / ".lakeload" / "logs"), []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes()
            if connect_server.SERVER_CLASS.encode() in command and os.readlink(entry / "cwd") == logs:
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def _jvms_in(home: Path) -> list[int]:
    """Pids of every lakeload JVM (a Connect server, a run's driver) running with `home` as HOME."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command, env = (entry / "cmdline").read_bytes(), (entry / "environ").read_bytes()
        except OSError:
            continue
        lakeload_jvm = connect_server.SERVER_CLASS.encode() in command or connect_server.is_kept_jvm(command)
        if lakeload_jvm and f"HOME={home}\0".encode() in env:
            found.append(int(entry.name))
    return found


def _supervisors(home: Path) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes()
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"lakeload.spark.warm_supervisor" in command and f"HOME={home}\0".encode() in env:
            pids.append(int(entry.name))
    return pids


@pytest.fixture
def warm_home() -> Iterator[Path]:
    """The test's HOME (tests/conftest.py); whatever engine or supervisor runs there at the end is stopped."""
    home = Path(os.environ["HOME"])
    yield home
    connect_server.stop_server(timeout=20)
    for pid in _jvms_in(home):
        connect_server.terminate(pid, timeout=10)
    for pid in _supervisors(home):
        os.kill(pid, signal.SIGKILL)


def _child_env(home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(home), "SPARK__WARM": "true", **extra}


def _start_child(tmp_path: Path, name: str, env: dict[str, str]) -> subprocess.Popen[str]:
    folder = tmp_path / name
    return subprocess.Popen([sys.executable, "-c", CHILD, str(folder / "bucket"), str(folder / "pipes")], env=env,
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(child: subprocess.Popen[str]) -> dict[str, object]:
    out, err = child.communicate(timeout=600)
    assert child.returncode == 0, err[-3000:]
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result


def test_warm_settings_resolved_and_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    assert warm_engine.resolve_warm(None, {}) == warm_engine.WarmSettings()
    off = warm_engine.resolve_warm("p", {"P__SPARK__WARM": "false", "SPARK__WARM_IDLE_SECONDS": "60"})
    assert (off.enabled, off.idle_seconds) == (False, 60.0)
    assert off.enabled_source == "environment variable P__SPARK__WARM"
    with pytest.raises(ConfigurationError, match=r"warm_idle_seconds = 0\.0 .*SPARK__WARM=false"):
        warm_engine.resolve_warm(None, {"SPARK__WARM_IDLE_SECONDS": "0"})
    monkeypatch.setenv("SPARK__MASTER", "local[1]")
    assert warm_engine.wanted(None) is None  # the suite's SPARK__WARM=false
    monkeypatch.setenv("SPARK__WARM", "true")
    assert warm_engine.wanted(None) is None  # a configured master: Spark in the process
    monkeypatch.setenv("SPARK__WARM", "false")
    monkeypatch.setenv("SPARK__WARM_IDLE_SECONDS", "120")
    shown = {line.key: str(line) for line in show_configuration()}
    assert shown["spark.warm"] == "spark.warm = false  (environment variable SPARK__WARM)"  # the suite's own setting
    assert shown["spark.warm_idle_seconds"] == "spark.warm_idle_seconds = 120.0  (environment variable SPARK__WARM_IDLE_SECONDS)"


def _shared_id(state: connect_server.ServerState, tmp_path: Path) -> str:
    """The shared session every process with this checkout's lakeload joins on `state`."""
    from lakeload.spark.connect_shipping import package_archive
    from lakeload.spark.shared_session import shared_session_id

    return shared_session_id(state, os.path.basename(package_archive(str(tmp_path / "archives"))))


@pytest.mark.slow  # a first run's JVM kept as the engine, runs on it, its idle stop (~1-2 min)
def test_a_first_runs_jvm_kept_as_the_engine_once_used_by_later_runs_and_stopped_when_idle(
    tmp_path: Path, warm_home: Path
) -> None:
    # a state file left by an engine that was killed: detected and replaced
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = connect_server.ServerState(gone.pid, connect_server.free_port(), "local[*]", "x.log", time.time(),
                                       started_by=warm_engine.AUTO, idle_seconds=900.0)
    connect_server.write_state(stale)

    env = _child_env(warm_home, SPARK__WARM_IDLE_SECONDS="15")
    first, second = _start_child(tmp_path, "a", env), _start_child(tmp_path, "b", env)
    results = [_finish(first), _finish(second)]
    assert all(r["connect"] is False and not r["failed"] for r in results), results  # first runs: Spark in the process

    deadline = time.monotonic() + 300  # not a speed bound: how long an engine may take to start on a loaded machine
    while time.monotonic() < deadline and (connect_server.running_server() is None or len(_jvms_in(warm_home)) > 1):
        time.sleep(0.5)
    state = connect_server.running_server()
    assert state is not None and state.pid != stale.pid and state.started_by == warm_engine.AUTO
    assert state.idle_seconds == 15.0
    # the JVM of one of the two processes that ended at once is the engine; the other's ended with its process
    assert state.pid in [r["jvm"] for r in results] and _jvms_in(warm_home) == [state.pid]
    assert not _servers_in(warm_home)  # no Connect server was started besides it
    assert len(_supervisors(warm_home)) == 1
    log = warm_home / ".lakeload" / "logs" / "warm_engine.log"
    assert f"kept the Spark JVM {state.pid} of a run that ended as the engine at {state.url}" in log.read_text()

    status = subprocess.run([sys.executable, "-m", "lakeload.cli.main", "spark", "status"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert status.returncode == 0 and "Started automatically" in status.stdout, status.stdout + status.stderr
    assert "stops itself after 15 s unused" in status.stdout

    # later runs attach to the kept JVM through its gateway (classic Spark, as the first runs had it): no second
    # engine, no Connect session; two at once, each with its own SQL settings; stop() leaves the engine up
    later = [_start_child(tmp_path, name, env) for name in ("c", "d")]
    for result in [_finish(child) for child in later]:
        assert result["attached"] is True and result["connect"] is False and not result["failed"], result
        assert result["jvm"] is None and result["total"] == 10  # no JVM of its own; its SQL side works
        assert result["shuffle"] != "3"  # the other run's setting is not its own
    assert connect_server.running_server() == state and _jvms_in(warm_home) == [state.pid]
    assert "warmed" not in log.read_text()  # nothing to warm for runs that attach
    answer = gateway_desk.ask_desk(state.attach)  # the gateway's secret: handed out by the desk, written nowhere
    assert answer is not None and answer.secret
    written = [p for p in warm_home.rglob("*") if p.is_file() and answer.secret.encode() in p.read_bytes()]
    assert not written and answer.secret not in log.read_text()

    stopped_by = time.monotonic() + 240  # idle 15 s, then a clean stop (a stuck JVM is killed 30 s after SIGTERM)
    while time.monotonic() < stopped_by and (connect_server.read_state() is not None or _jvms_in(warm_home)):
        time.sleep(1)
    left = {pid: Path(f"/proc/{pid}/status").read_text().splitlines()[:3] for pid in _jvms_in(warm_home)}
    assert connect_server.read_state() is None and not left, (connect_server.read_state(), left, log.read_text()[-3000:])
    while time.monotonic() < deadline + 300 and _supervisors(warm_home):
        time.sleep(0.5)
    assert not _supervisors(warm_home)


@pytest.mark.slow  # a Connect server started by `lakeload init`, then a run on it
def test_init_starts_the_engine_for_the_first_run_and_not_when_turned_off(tmp_path: Path, warm_home: Path) -> None:
    off = subprocess.run([sys.executable, "-m", "lakeload.cli.main", "init", "generator", "filesystem", "--dir",
                          str(tmp_path / "off")], env=_child_env(warm_home, SPARK__WARM="false"), cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert off.returncode == 0 and "Starting" not in off.stdout, off.stdout + off.stderr
    assert not _supervisors(warm_home) and connect_server.read_state() is None

    env = _child_env(warm_home, SPARK__WARM_IDLE_SECONDS="60")
    init = subprocess.run([sys.executable, "-m", "lakeload.cli.main", "init", "generator", "filesystem", "--dir",
                           str(tmp_path / "project")], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert init.returncode == 0 and "Starting lakeload's local Spark engine in the background" in init.stdout, init.stderr
    first = _finish(_start_child(tmp_path, "first", env))  # the user's first run: on the engine init started
    state = connect_server.running_server()
    assert state is not None and state.started_by == warm_engine.AUTO
    assert first["connect"] is True and first["url"] == state.url and not first["failed"]
    assert first["session_id"] == _shared_id(state, tmp_path)
    assert _servers_in(warm_home) == [state.pid]
    stop = subprocess.run([sys.executable, "-m", "lakeload.cli.main", "spark", "stop"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert stop.returncode == 0 and "Stopped the Spark Connect server" in stop.stdout, stop.stdout + stop.stderr
    assert not _servers_in(warm_home)  # nothing of the engine outlives `stop`; its supervisor has let go and exits
    deadline = time.monotonic() + 30
    while _supervisors(warm_home) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _supervisors(warm_home)


@pytest.mark.slow  # a Connect server started in its place (~10-30 s)
def test_a_jvm_that_cannot_be_kept_ends_and_a_server_takes_its_place(tmp_path: Path, warm_home: Path) -> None:
    from lakeload.spark import handover

    gone = subprocess.Popen(["true"])
    gone.wait()
    given = handover.Handover(gone.pid, connect_server.free_port(), "not-the-secret", "local[*]", str(tmp_path / "spark.log"),
                              "", "")
    jvm_stdin_read, jvm_stdin = os.pipe()  # stands for the JVM's standard input: it ends when the write end closes
    output_read, output_write = os.pipe()
    lock = warm_engine.lock_descriptor()
    assert lock is not None
    command = [sys.executable, "-m", "lakeload.spark.warm_supervisor", "--idle-seconds", "60", "--adopt", "--lock-fd", str(lock),
               "--jvm-stdin", str(jvm_stdin), "--jvm-output", str(output_read)]
    log_file = warm_home / ".lakeload" / "logs" / "warm_engine.log"  # where `spawn_supervisor` sends its output
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with log_file.open("ab") as log:
        supervisor = subprocess.Popen(command, stdin=subprocess.PIPE, pass_fds=(lock, jvm_stdin, output_read),
                                      env=_child_env(warm_home), start_new_session=True, cwd=tmp_path, stdout=log,
                                      stderr=subprocess.STDOUT)
    assert supervisor.stdin is not None
    supervisor.stdin.write(given.to_json().encode())
    supervisor.stdin.close()
    for fd in (lock, jvm_stdin, output_read):
        os.close(fd)
    assert warm_engine.supervisor_running()  # the lock went over with the descriptor: a run now waits for the engine
    os.write(output_write, b"a line the JVM wrote\n")
    os.close(output_write)

    assert os.read(jvm_stdin_read, 1) == b""  # let go: that JVM ends as its run's would have
    state = warm_engine.wait_for_engine(timeout=300)
    assert state is not None and state.pid != gone.pid and state.started_by == warm_engine.AUTO
    assert _servers_in(warm_home) == [state.pid]  # a Connect server of its own
    log = log_file.read_text()
    assert f"The Spark JVM {gone.pid} could not be reached to keep it as the engine" in log
    assert "starting a Spark Connect server instead" in log and "a line the JVM wrote" in log
    assert "not-the-secret" not in log
    connect_server.stop_server(timeout=20)
    supervisor.wait(timeout=60)

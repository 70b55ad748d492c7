"""`lakeload spark start | status | stop` against the session's real local Spark Connect server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from servers.spark_connect import ConnectServer

from lakeload.spark.connect_server import read_state
from lakeload.spark.settings import LAZY_JIT_OPTIONS


def _cli(server: ConnectServer, *args: str, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = server.env() if cache is None else {**server.env(), "XDG_CACHE_HOME": str(cache)}
    return subprocess.run([sys.executable, "-m", "lakeload.cli.main", "spark", *args], env=env,
                          capture_output=True, text=True, timeout=300, cwd=server.home)


def _java_options(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        return handle.read().replace(b"\0", b" ").decode()


@pytest.mark.slow  # stops the session's server and starts it again, three times (~15-40 s)
def test_cli_status_stop_start_round_trip(connect_server: ConnectServer, tmp_path: Path) -> None:
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

    # a server started with no class archive in the cache writes one as `stop` stops it ...
    cache, port = tmp_path / "cache", str(connect_server.port)
    writer = _cli(connect_server, "start", "--master", "local[2]", "--port", port, cache=cache)
    assert writer.returncode == 0, writer.stdout + writer.stderr
    written = read_state(state_file)
    assert written is not None and written.archive_part and not os.path.exists(written.archive)
    assert f"-XX:ArchiveClassesAtExit={written.archive_part}" in _java_options(written.pid)
    assert _cli(connect_server, "stop", cache=cache).returncode == 0
    assert os.path.getsize(written.archive) > 1 << 20 and not os.path.exists(written.archive_part)
    assert written.archive.startswith(str(cache / "lakeload" / "jvm"))

    # ... and the next one starts with it (on the same port, so the later tests of this session still find it)
    started = _cli(connect_server, "start", "--master", "local[2]", "--port", port, cache=cache)
    assert started.returncode == 0, started.stdout + started.stderr
    again = read_state(state_file)
    assert again is not None and again.archive == written.archive and again.archive_part == ""
    assert f"-XX:SharedArchiveFile={written.archive}" in _java_options(again.pid)
    assert LAZY_JIT_OPTIONS in _java_options(again.pid)  # a local server's JVM compiles as a local session's
    assert again is not None and again.pid != first.pid and again.port == connect_server.port
    assert "started" in started.stdout and connect_server.url in started.stdout
    assert _cli(connect_server, "status").returncode == 0
    repeated = _cli(connect_server, "start")  # a running server is kept, not started twice
    assert repeated.returncode == 0 and "already running" in repeated.stdout
    assert read_state(state_file) == again

    # a damaged archive: the server that cannot map it is started again without it, and the archive is dropped
    assert _cli(connect_server, "stop", cache=cache).returncode == 0
    archive = Path(written.archive)
    archive.chmod(0o644)
    archive.write_bytes(archive.read_bytes()[: 2 << 20])
    recovered = _cli(connect_server, "start", "--master", "local[2]", "--port", port, cache=cache)
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr
    last = read_state(state_file)
    assert last is not None and not archive.exists() and "SharedArchiveFile" not in _java_options(last.pid)
    assert _cli(connect_server, "status").returncode == 0

"""`lakeload pipeline <name> show` stopped with SIGTERM: the real command and its real Streamlit server, with a
page open in headless Chromium; afterwards no process serves the port and none of its processes survives."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from test_dashboard import browser, free_port


def processes_serving(port: int) -> list[int]:
    """Pids whose command line asks Streamlit for `port` (the server, whichever process runs it)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in b" ".join(argv) and b"--server.port" in argv and str(port).encode() in argv:
            found.append(int(entry))
    return found


def port_is_free(port: int) -> bool:
    """A new server can listen on `port` (as servers do, past the closed connections' TIME_WAIT)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            s.listen()
        except OSError:
            return False
        return True


def test_sigterm_stops_the_dashboard_and_frees_its_port(tmp_path: Path) -> None:
    (tmp_path / "pipelines" / "stopped").mkdir(parents=True)  # a working folder: the page itself may say it is empty
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "lakeload.cli", "pipeline", "stopped", "show", "--port", str(port),
         "--pipelines-dir", str(tmp_path / "pipelines")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    driver = None
    try:
        for _ in range(200):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):  # noqa: S310
                    break
            except OSError:
                assert process.poll() is None, "the dashboard exited before serving"
                time.sleep(0.3)
        driver = browser()
        driver.get(f"http://127.0.0.1:{port}/")  # a live session while it is stopped
        serving = processes_serving(port)
        assert serving, "no Streamlit process found for the port"
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        for _ in range(50):  # a server that outlived the command would hold the port for good
            if not processes_serving(port) and port_is_free(port):
                break
            time.sleep(0.2)
        assert processes_serving(port) == [] and port_is_free(port)
    finally:
        if driver is not None:
            driver.quit()
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


def start_dashboard(tmp_path: Path, port: int) -> subprocess.Popen[bytes]:
    (tmp_path / "pipelines" / "stopped").mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [sys.executable, "-m", "lakeload.cli", "pipeline", "stopped", "show", "--port", str(port),
         "--pipelines-dir", str(tmp_path / "pipelines")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    for _ in range(200):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):  # noqa: S310
                return process
        except OSError:
            assert process.poll() is None, "the dashboard exited before serving"
            time.sleep(0.3)
    raise AssertionError("the dashboard never served")


def test_killing_the_command_takes_its_server_along(tmp_path: Path) -> None:
    port = free_port()
    process = start_dashboard(tmp_path, port)
    try:
        assert processes_serving(port)
        process.kill()  # the command only: no chance to pass anything on
        process.wait(timeout=10)
        for _ in range(100):
            if not processes_serving(port) and port_is_free(port):
                break
            time.sleep(0.2)
        assert processes_serving(port) == [] and port_is_free(port)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def test_a_server_deaf_to_sigterm_is_killed_after_the_grace_period() -> None:
    from lakeload.dashboard.launch import STOP_GRACE_SECONDS, _stop

    deaf = subprocess.Popen([sys.executable, "-c", "import signal, sys, time\n"
                             "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\ntime.sleep(120)"],
                            stdout=subprocess.PIPE)
    try:
        assert deaf.stdout is not None and deaf.stdout.readline() == b"ready\n"
        started = time.monotonic()
        code = _stop(deaf, signal.SIGTERM)
        assert code == -signal.SIGKILL
        assert STOP_GRACE_SECONDS <= time.monotonic() - started < STOP_GRACE_SECONDS + 10
    finally:
        deaf.kill()
        deaf.wait()

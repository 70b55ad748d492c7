"""Start the dashboard: `streamlit run` on `lakeload/dashboard/app.py`, bound to loopback by default.

The server runs as a child of the command: SIGTERM or Ctrl-C is passed on to it, and a server that has not stopped
within `STOP_GRACE_SECONDS` (Streamlit waits for a page's open connection and running script) is killed, so a
stopped dashboard never keeps its port. On Linux the server also dies with the command if that is killed.

>>> command = streamlit_command("github_demo", None, port=8501)
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import signal
import subprocess
import sys
from types import FrameType

from lakeload.errors import ConfigurationError

APP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "app.py")
STOP_GRACE_SECONDS = 5.0
_PR_SET_PDEATHSIG = 1


def streamlit_command(pipeline_name: str, pipelines_dir: str | None, port: int, host: str = "127.0.0.1") -> list[str]:
    """The command line that serves the dashboard of `pipeline_name` on `host:port` (no telemetry, no browser)."""
    if importlib.util.find_spec("streamlit") is None:
        raise ConfigurationError('The dashboard needs Streamlit. Fix: pip install "lakeload[dashboard]".')
    command = [
        sys.executable, "-m", "streamlit", "run", APP,
        "--server.address", host, "--server.port", str(port), "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--global.developmentMode", "false",
        "--server.fileWatcherType", "none", "--client.toolbarMode", "viewer",
        "--", "--pipeline", pipeline_name,
    ]
    return command + (["--pipelines-dir", pipelines_dir] if pipelines_dir else [])


def _die_with_parent() -> None:
    """In the server's process before exec: the kernel sends it SIGTERM when the command dies (Linux only)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _stop(server: subprocess.Popen[bytes], signum: int) -> int:
    """Pass `signum` on to the server; kill it if it has not exited after the grace period."""
    if server.poll() is None:
        server.send_signal(signum)
    try:
        return server.wait(timeout=STOP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        server.kill()
        return server.wait()


def serve(pipeline_name: str, pipelines_dir: str | None, port: int, host: str) -> int:
    """Run the Streamlit server until it exits or this process is stopped (SIGTERM, SIGINT); its exit code."""
    command = streamlit_command(pipeline_name, pipelines_dir, port, host)
    print(f"Dashboard of pipeline '{pipeline_name}' on http://{host}:{port} (Ctrl-C stops it)", flush=True)
    stop_signal: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop_signal.append(signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        server = subprocess.Popen(command, preexec_fn=_die_with_parent)  # noqa: PLW1509 (prctl only, no locks)
        while not stop_signal:
            try:
                return server.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                continue
        return _stop(server, stop_signal[0])
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

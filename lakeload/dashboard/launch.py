"""Start the dashboard: `streamlit run` on `lakeload/dashboard/app.py`, bound to loopback by default.

>>> command = streamlit_command("github_demo", None, port=8501)
"""

from __future__ import annotations

import importlib.util
import os
import sys

from lakeload.errors import ConfigurationError

APP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "app.py")


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


def serve(pipeline_name: str, pipelines_dir: str | None, port: int, host: str) -> None:
    """Replace this process by the Streamlit server (Ctrl-C stops it)."""
    command = streamlit_command(pipeline_name, pipelines_dir, port, host)
    print(f"Dashboard of pipeline '{pipeline_name}' on http://{host}:{port} (Ctrl-C stops it)", flush=True)
    os.execv(command[0], command)

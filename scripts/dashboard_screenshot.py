#!/usr/bin/env python
"""Regenerate docs/dashboard.png: the dashboard (`lakeload pipeline <name> show`) of a small pipeline, as a user sees it.

Loads the README's quick-start data (three loads, a nested table, a Delta table) into a temporary folder with
the local Spark, starts the real Streamlit dashboard on a free loopback port, opens it in headless Chromium
(Debian's chromium and chromedriver, as tests/dashboard uses them) with a SQL query filled in, and saves the
page to docs/dashboard.png. Run it after a change to the dashboard:

    .venv/bin/python scripts/dashboard_screenshot.py            # writes docs/dashboard.png
    .venv/bin/python scripts/dashboard_screenshot.py --out x.png
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
QUERY = "SELECT u.name, count(p.kind) AS pets FROM users u LEFT JOIN users__pets p ON p._dlt_parent_id = u._dlt_id GROUP BY 1"


def load(folder: Path) -> None:
    """Three small loads of the quick start's users (a nested table) and a Delta table of events."""
    import lakeload

    pipeline = lakeload.pipeline("quick_start", destination=lakeload.destinations.filesystem(str(folder / "bucket")),
                                 dataset_name="mydata", pipelines_dir=str(folder / "pipelines"))
    pipeline.run([{"id": 1, "name": "Alice", "pets": [{"kind": "cat"}, {"kind": "dog"}]},
                  {"id": 2, "name": "Bob", "pets": [{"kind": "fish"}]}], table_name="users")
    pipeline.run([{"id": 3, "name": "Carol", "pets": []}], table_name="users")
    pipeline.run([{"event": i, "payload": {"value": i * 10}} for i in range(5)], table_name="events", table_format="delta")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(url: str, process: subprocess.Popen[str], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as answer:  # noqa: S310 (loopback)
                if answer.status == 200:
                    return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the dashboard did not start: {process.stdout.read() if process.stdout else ''}") from None
            time.sleep(0.3)


def screenshot(url: str, out: Path) -> None:
    from urllib.parse import quote

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1400,2000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get(f"{url}/?sql={quote(QUERY)}")
        WebDriverWait(driver, 120).until(lambda d: "Carol" in d.page_source and "events" in d.page_source)
        time.sleep(2)  # the last elements settle
        driver.save_screenshot(str(out))
    finally:
        driver.quit()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "dashboard.png")
    args = parser.parse_args(argv)
    os.environ["SPARK__WARM"] = "false"  # this script's Spark ends with it
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        load(folder)
        port = free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "lakeload.cli", "pipeline", "quick_start", "show", "--port", str(port),
             "--pipelines-dir", str(folder / "pipelines")],
            env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, process)
            screenshot(url, args.out)
        finally:
            process.terminate()
            process.wait(timeout=30)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

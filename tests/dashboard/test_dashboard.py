"""`lakeload pipeline <name> show`: the real Streamlit server in a subprocess, opened in a real headless Chromium
(Debian's chromium and chromedriver, installed by scripts/setup.sh), checked in the page's DOM."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from servers.buckets import Bucket

import lakeload

pytestmark = pytest.mark.usefixtures("spark")
CHROMIUM, CHROMEDRIVER = shutil.which("chromium") or "/usr/bin/chromium", shutil.which("chromedriver") or "/usr/bin/chromedriver"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def loaded_with_a_failed_package(tmp_path: Path, bucket: Bucket) -> tuple[lakeload.Pipeline, str]:
    p = lakeload.pipeline("dash", destination=bucket.destination(), dataset_name="ds",
                          pipelines_dir=str(tmp_path / "pipelines"))
    p.run([{"id": 1, "name": "a", "pets": [{"kind": "cat"}, {"kind": "dog"}]}, {"id": 2, "name": "b", "pets": []}],
          table_name="users")
    p.run([{"id": 3, "name": "c", "pets": [{"kind": "owl"}]}], table_name="users")
    p.run([{"event": i, "payload": {"v": i}} for i in range(5)], table_name="events", table_format="delta")

    def boom(schema_name: str, table_name: str, load_id: str, file_id: str, ext: str) -> str:
        raise ValueError("layout exploded")

    p.destination = lakeload.destinations.filesystem(bucket.url, credentials=bucket.credentials,
                                                     layout="{table_name}/{boom}/{load_id}.{file_id}.{ext}",
                                                     extra_placeholders={"boom": boom})
    with pytest.raises(lakeload.PipelineStepFailed):
        p.run([{"id": 4, "name": "d"}], table_name="users")
    return p, p.list_normalized_load_packages()[0]


@pytest.fixture
def server(tmp_path: Path, bucket_kind: Bucket) -> Iterator[tuple[str, lakeload.Pipeline, str]]:
    p, failed = loaded_with_a_failed_package(tmp_path, bucket_kind)
    port = free_port()
    # credentials in configuration, the bucket in none (the pipeline was given it in code): the dashboard finds it
    env = {**os.environ, **{k: v for k, v in bucket_kind.env.items() if not k.endswith("BUCKET_URL")}}
    process = subprocess.Popen(
        [sys.executable, "-m", "lakeload.cli", "pipeline", "dash", "show", "--port", str(port),
         "--pipelines-dir", str(tmp_path / "pipelines")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as answer:  # noqa: S310 (loopback)
                    if answer.status == 200:
                        break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"the dashboard did not start: {process.stdout.read() if process.stdout else ''}") from None
                time.sleep(0.3)
        yield url, p, failed
    finally:
        process.terminate()
        process.wait(timeout=20)


def browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,3200"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@pytest.mark.parametrize("bucket_kind", ["local", pytest.param("s3", marks=pytest.mark.slow)], indirect=True)
def test_dashboard_shows_loads_rows_schema_trace_pending_and_sql(
    server: tuple[str, lakeload.Pipeline, str], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    url, p, failed = server
    driver = browser()
    try:
        driver.get(url + "/?sql=SELECT%20count(*)%20AS%20pet_count%20FROM%20users__pets")
        WebDriverWait(driver, 90).until(lambda d: "pet_count" in d.page_source and failed in d.page_source)
        tables = [t.text for t in driver.find_elements(By.TAG_NAME, "table")]
        page = driver.find_element(By.TAG_NAME, "body").text
        driver.save_screenshot(str(tmp_path / "dashboard.png"))
    finally:
        driver.quit()
    assert (tmp_path / "dashboard.png").stat().st_size > 10_000
    loads = p.list_completed_load_packages()
    history = next(t for t in tables if t.startswith("load_id\nschema_name\nstatus"))
    assert all(load_id in history for load_id in loads) and "complete" in history  # load history from _dlt_loads
    rows = next(t for t in tables if t.startswith("load_id\ntable\nrows"))
    assert f"{loads[0]}\nusers\n2" in rows and f"{loads[1]}\nusers\n1" in rows  # rows per table per load
    assert f"{loads[2]}\nevents\n5" in rows  # a Delta table, read through DuckDB too
    assert "users__pets" in page and "_dlt_parent_id" in page and "parent_key" in page  # the schema with hints
    assert "layout exploded" in page  # the last run's error, beside the pending package
    sql_result = next(t for t in tables if t.startswith("pet_count"))
    assert sql_result.split("\n")[1].strip() == "3"  # the SQL box's result

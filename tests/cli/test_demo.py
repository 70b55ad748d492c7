"""`lakeload demo` end to end: a real local Spark run in a subprocess, row counts read back with DuckDB."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakeload.cli.demo import count_rows
from lakeload.runtime.trace import load_trace


@dataclass
class DemoRun:
    """`lakeload demo` run once in a fresh process (its own Spark start), bucket and folder in a temp folder."""

    folder: Path
    env: dict[str, str]
    result: subprocess.CompletedProcess[str]

    @property
    def bucket(self) -> Path:
        return self.folder / "bucket"

    @property
    def pipelines_dir(self) -> Path:
        return self.folder / "pipelines"

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`lakeload ...` as a command, in a folder with no configuration: the demo's bucket is in no config."""
        command = [sys.executable, "-m", "lakeload.cli", *args, "--pipelines-dir", str(self.pipelines_dir)]
        return subprocess.run(command, cwd=self.folder / "elsewhere", env=self.env, capture_output=True, text=True,
                              timeout=120)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    folder = tmp_path_factory.mktemp("demo")
    (folder / "elsewhere").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(("DESTINATION__", "SPARK__"))}
    env.update(PYSPARK_PYTHON=sys.executable, HOME=str(folder / "home"), SPARK__WARM="false")  # no engine left behind
    command = [
        sys.executable, "-m", "lakeload.cli.main", "demo", "--events", "2000",
        "--bucket", str(folder / "bucket"), "--pipelines-dir", str(folder / "pipelines"), "--progress", "none",
    ]
    result = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return DemoRun(folder, env, result)


def test_demo_loads_events_and_counts_rows(demo: DemoRun) -> None:
    result = demo.result
    assert re.search(r"^events\s+2000$", result.stdout, re.MULTILINE), result.stdout
    assert re.search(r"^events__tags\s+\d+$", result.stdout, re.MULTILINE), result.stdout
    assert "Total time:" in result.stdout
    dataset = demo.bucket / "github_events"
    assert list((dataset / "events").glob("*.parquet"))
    assert (dataset / "init").is_file()
    assert list((dataset / "_dlt_loads").glob("*.jsonl"))


def test_after_the_demo_info_and_trace_name_its_bucket(demo: DemoRun) -> None:
    """The demo passes its bucket in code: the commands find it in the packages' records, not in configuration."""
    url = f"file://{demo.bucket}"
    info = demo.cli("pipeline", "github_demo", "info")
    assert info.returncode == 0, info.stderr
    assert f"destination: filesystem 'filesystem' at {url}" in info.stdout
    trace = demo.cli("pipeline", "github_demo", "trace")
    assert trace.returncode == 0, trace.stderr
    assert f"to filesystem at {url} started" in trace.stdout
    package = load_trace(str(demo.pipelines_dir / "github_demo"))
    assert package is not None and package["bucket_url"] == url


def test_the_demo_times_spark_start_apart_from_the_steps(demo: DemoRun) -> None:
    """Spark's start is its own entry (not a step: the steps keep dlt's names), left out of extract's time; the
    package's normalize, begun beside extract, is not 0 s."""
    trace = load_trace(str(demo.pipelines_dir / "github_demo"))
    assert trace is not None and trace["spark_start"] is not None
    steps = {s["step"]: s for s in trace["steps"]}
    assert [s["step"] for s in trace["steps"]] == ["extract", "normalize", "load", "run"]
    start = trace["spark_start"]["elapsed"]
    assert start > 0 and steps["extract"]["elapsed"] < steps["run"]["elapsed"] - start
    assert trace["packages"][0]["normalize_seconds"] > 0
    assert re.search(r"^Elapsed: spark start [0-9.]+ s, extract [0-9.]+ s, normalize [0-9.]+ s, load [0-9.]+ s$",
                     demo.result.stdout, re.MULTILINE), demo.result.stdout
    shown = demo.cli("pipeline", "github_demo", "trace").stdout
    assert re.search(r"^  spark start +[0-9.]+ s", shown, re.MULTILINE) and "normalize 0.00 s" not in shown


def test_count_rows_reads_each_table_folder(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    pq.write_table(pa.table({"x": [1, 2, 3]}), tmp_path / "a" / "1.f1.parquet")
    pq.write_table(pa.table({"x": [4], "y": ["new column"]}), tmp_path / "a" / "2.f2.parquet")
    (tmp_path / "a__b").mkdir()
    pq.write_table(pa.table({"z": [1]}), tmp_path / "a__b" / "1.f3.parquet")

    assert count_rows(str(tmp_path), ["a", "a__b", "empty"], "parquet") == [("a", 4), ("a__b", 1), ("empty", 0)]

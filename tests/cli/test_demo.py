"""`lakeload demo` end to end: a real local Spark run in a subprocess, row counts read back with DuckDB."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from lakeload.cli.demo import count_rows


def test_demo_loads_events_and_counts_rows(tmp_path: Path) -> None:
    bucket, pipelines_dir = tmp_path / "bucket", tmp_path / "pipelines"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    command = [
        sys.executable, "-m", "lakeload.cli.main", "demo", "--events", "2000",
        "--bucket", str(bucket), "--pipelines-dir", str(pipelines_dir), "--progress", "none",
    ]
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)

    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert re.search(r"^events\s+2000$", result.stdout, re.MULTILINE), result.stdout
    assert re.search(r"^events__tags\s+\d+$", result.stdout, re.MULTILINE), result.stdout
    assert "Total time:" in result.stdout
    dataset = bucket / "github_events"
    assert list((dataset / "events").glob("*.parquet"))
    assert (dataset / "init").is_file()
    assert list((dataset / "_dlt_loads").glob("*.jsonl"))


def test_count_rows_reads_each_table_folder(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    pq.write_table(pa.table({"x": [1, 2, 3]}), tmp_path / "a" / "1.f1.parquet")
    pq.write_table(pa.table({"x": [4], "y": ["new column"]}), tmp_path / "a" / "2.f2.parquet")
    (tmp_path / "a__b").mkdir()
    pq.write_table(pa.table({"z": [1]}), tmp_path / "a__b" / "1.f3.parquet")

    assert count_rows(str(tmp_path), ["a", "a__b", "empty"], "parquet") == [("a", 4), ("a__b", 1), ("empty", 0)]

"""The same pipeline runs unchanged on `local-cluster[2,1,1024]`, where executors are other processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

CHILD = Path(__file__).with_name("cluster_child.py")


@pytest.mark.slow  # a local-cluster: two executor JVMs of their own
def test_full_pipeline_on_local_cluster(tmp_path: Path) -> None:
    bucket, pipes = tmp_path / "bucket", tmp_path / "pipes"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    done = subprocess.run([sys.executable, str(CHILD), str(bucket), str(pipes)], env=env, capture_output=True,
                          text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["executors"] == 2 and result["worker_pids"] >= 2 and not result["driver_pid_in_workers"]
    assert result["first"]["events"] == 3000
    assert result["second"] == {"frame_rows": 100, "frame_rows__tags": 200}
    assert result["sink_rows"] == 500 and not result["sink_in_driver"]  # the sink ran on the cluster's executors
    count = duckdb.sql(f"SELECT count(*) FROM read_parquet('{bucket}/ds/events/*.parquet')").fetchall()[0]
    assert count == (3000,)
    tags = duckdb.sql(f"SELECT count(*) FROM read_json('{bucket}/ds/frame_rows__tags/*.jsonl.gz')").fetchall()[0]
    assert tags == (200,)

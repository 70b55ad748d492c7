"""The same pipelines run unchanged on `local-cluster[2,1,1024]`, where executors are other processes: one with
its package data in the local pipeline folder into a local bucket, one with its package data in an S3 working
bucket that loads JSON records, a Spark DataFrame and JSONL/Parquet files read from the S3 server into a bucket on
the S3 server (moto on 127.0.0.1, auth enforced). Both run in one child process, so the cluster starts once."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import s3fs
from servers.fixtures import S3Server, fresh_prefix, s3_storage_options

CHILD = Path(__file__).with_name("cluster_child.py")
CREDENTIALS = ("DESTINATION__FILESYSTEM__CREDENTIALS", "SOURCES__FILESYSTEM__CREDENTIALS")


def _source_files(fs: s3fs.S3FileSystem, prefix: str) -> None:
    """500 JSON lines in a plain and a gzipped JSONL file, and 40 rows in a Parquet file."""
    lines = [json.dumps({"id": i, "kind": "file", "items": [{"n": i}, {"n": i + 1}]}) for i in range(500)]
    fs.pipe(f"{prefix}/source/a.jsonl", "\n".join(lines[:300]).encode() + b"\n")
    fs.pipe(f"{prefix}/source/b.jsonl.gz", gzip.compress("\n".join(lines[300:]).encode() + b"\n"))
    sink = io.BytesIO()
    pq.write_table(pa.table({"id": pa.array(range(40), pa.int32()), "label": [f"l{i}" for i in range(40)]}), sink)
    fs.pipe(f"{prefix}/source/rows.parquet", sink.getvalue())


def _run_child(s3: S3Server, prefix: str, tmp_path: Path) -> dict[str, Any]:
    """The child on local-cluster: S3 credentials in its environment, the S3 working bucket for `cluster_s3` only."""
    working = {"CLUSTER_S3__SPARK__WORKING_URL": f"s3://{prefix}/work",
               **s3.credential_env("CLUSTER_S3__SPARK__WORKING_CREDENTIALS")}
    credentials = {name: value for section in CREDENTIALS for name, value in s3.credential_env(section).items()}
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, EXTRACT__FILE_MAX_BYTES="400000", **credentials, **working)
    args = [str(tmp_path / "bucket"), str(tmp_path / "pipes"), f"s3://{prefix}/lake", f"s3://{prefix}/source"]
    done = subprocess.run([sys.executable, str(CHILD), *args], env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    assert s3.secret_key not in done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


@pytest.mark.slow  # a local-cluster: two executor JVMs of their own
def test_full_pipelines_on_local_cluster_with_local_and_s3_working_data(s3_server: S3Server, tmp_path: Path) -> None:
    fs = s3fs.S3FileSystem(**s3_storage_options(s3_server))
    prefix = f"{s3_server.bucket}/{fresh_prefix('cluster')}"
    _source_files(fs, prefix)
    result = _run_child(s3_server, prefix, tmp_path)
    assert result["executors"] == 2 and result["worker_pids"] >= 2 and not result["driver_in_workers"]

    local, bucket = result["local"], tmp_path / "bucket"
    assert local["working"] is False  # the working bucket was set for `cluster_s3` only
    assert local["first"]["events"] == 3000
    assert local["second"] == {"frame_rows": 100, "frame_rows__tags": 200}
    assert local["sink_rows"] == 500 and not local["sink_in_driver"]  # the sink ran on the cluster's executors
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{bucket}/ds/events/*.parquet')").fetchall()[0] == (3000,)
    assert duckdb.sql(f"SELECT count(*) FROM read_json('{bucket}/ds/frame_rows__tags/*.jsonl.gz')").fetchall()[0] == (200,)

    s3 = result["s3"]
    assert s3["working"] is True
    counts = s3["counts"]
    assert counts["json"]["events"] == 3000
    assert counts["frame"] == {"frame_rows": 100, "frame_rows__tags": 200, "frame_rows__pets": 100}
    assert counts["jsonl_files"] == {"file_events": 500, "file_events__items": 1000}
    assert counts["again"] == {}  # incremental: no new files
    assert counts["parquet_files"] == {"file_rows": 40}
    stored = s3["stored"]
    assert stored["events"] == 3000 and stored["frame_rows__tags"] == 200 and stored["file_events__items"] == 1000
    tables = {p.rsplit("/", 1)[-1] for p in fs.ls(f"{prefix}/lake/ds")}
    assert {"events", "frame_rows", "frame_rows__pets", "file_events", "file_rows", "_dlt_loads", "init"} <= tables
    fs.invalidate_cache()
    assert [f for f in fs.find(f"{prefix}/work") if not f.endswith("/")] == []  # every load completed: nothing left
    for path in (tmp_path / "pipes").rglob("*"):
        assert not path.is_file() or s3_server.secret_key.encode() not in path.read_bytes()

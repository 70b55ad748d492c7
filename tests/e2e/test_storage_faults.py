"""Loads into S3 (moto) through a fault-injecting TCP proxy: transient resets are retried, persistent ones
fail the load (the package stays pending), terminal errors are not retried.

Rows are read back from moto directly, never through the proxy.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pyarrow.parquet as pq
import pytest
import s3fs
from servers.fault_proxy import FaultProxy
from servers.fixtures import S3Server, fresh_prefix

import lakeload
from lakeload.errors import DestinationError, PipelineStepFailed, StorageUnavailableError

pytestmark = pytest.mark.usefixtures("spark")
USERS = [{"id": i, "name": f"u{i}", "pets": [{"n": j} for j in range(i % 3)]} for i in range(40)]
EVENTS = [{"id": i, "kind": "k" * (i % 5)} for i in range(30)]


@pytest.fixture
def proxy(s3_server: S3Server) -> Iterator[FaultProxy]:
    port = int(s3_server.endpoint_url.rsplit(":", 1)[1])
    with FaultProxy("127.0.0.1", port, drop_share=0.0, seed=13, max_bytes=200) as running:
        yield running


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__FILESYSTEM__RETRY_ATTEMPTS", "8")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__RETRY_INITIAL_BACKOFF", "0.05")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__RETRY_MAX_BACKOFF", "0.2")


def destination(s3: S3Server, endpoint: str, prefix: str, secret: str | None = None) -> Any:
    credentials = s3.credentials(secret, endpoint)
    return lakeload.destinations.filesystem(bucket_url=s3.url(prefix), credentials=credentials)


def direct_fs(s3: S3Server) -> s3fs.S3FileSystem:
    return s3fs.S3FileSystem(endpoint_url=s3.endpoint_url, key=s3.access_key, secret=s3.secret_key,
                             skip_instance_cache=True)


def rows_of(fs: s3fs.S3FileSystem, folder: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted(fs.find(folder)):
        data = fs.cat_file(path)
        if path.endswith(".parquet"):
            rows += pq.read_table(io.BytesIO(data)).to_pylist()
        elif ".jsonl" in path:
            text = gzip.decompress(data) if path.endswith(".gz") else data
            rows += [json.loads(line) for line in text.splitlines() if line.strip()]
    return rows


def delta_rows(s3: S3Server, uri: str) -> list[dict[str, Any]]:
    from deltalake import DeltaTable

    options = {"AWS_ENDPOINT_URL": s3.endpoint_url, "AWS_ACCESS_KEY_ID": s3.access_key,
               "AWS_SECRET_ACCESS_KEY": s3.secret_key, "AWS_REGION": s3.region, "AWS_ALLOW_HTTP": "true"}
    return DeltaTable(uri, storage_options=options).to_pyarrow_table().to_pylist()


@pytest.mark.usefixtures("fast_retries")
def test_loads_through_resets_finish_with_exact_rows(s3_server: S3Server, proxy: FaultProxy, tmp_path: Any) -> None:
    prefix = fresh_prefix("faults")
    pipeline = lakeload.pipeline("faults", destination=destination(s3_server, proxy.endpoint, prefix),
                                 dataset_name="ds", pipelines_dir=str(tmp_path / "p"))
    proxy.set_drop_share(0.3)
    pipeline.run(USERS, table_name="users", loader_file_format="parquet")
    pipeline.run(EVENTS, table_name="events", loader_file_format="jsonl")
    pipeline.run(EVENTS, table_name="events_delta", table_format="delta")
    assert proxy.resets >= 3, (proxy.connections, proxy.resets)  # faults really happened

    fs = direct_fs(s3_server)
    root = f"{s3_server.bucket}/{prefix}/ds"
    users = rows_of(fs, f"{root}/users")
    assert sorted(r["id"] for r in users) == [u["id"] for u in USERS]
    assert sorted((r["n"]) for r in rows_of(fs, f"{root}/users__pets")) == sorted(
        p["n"] for u in USERS for p in u["pets"])
    assert sorted((r["id"], r["kind"]) for r in rows_of(fs, f"{root}/events")) == [(e["id"], e["kind"]) for e in EVENTS]
    delta = delta_rows(s3_server, f"s3://{root}/events_delta")
    assert sorted((r["id"], r["kind"]) for r in delta) == [(e["id"], e["kind"]) for e in EVENTS]
    assert len(fs.ls(f"{root}/_dlt_loads")) == 3


@pytest.mark.usefixtures("fast_retries")
def test_persistent_faults_fail_the_load_and_the_next_run_finishes(
    s3_server: S3Server, proxy: FaultProxy, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    prefix = fresh_prefix("faults-down")
    pipeline = lakeload.pipeline("faults_down", destination=destination(s3_server, proxy.endpoint, prefix),
                                 dataset_name="ds", pipelines_dir=str(tmp_path / "p"))
    load_id = pipeline.extract(EVENTS, table_name="events").loads_ids[0]
    pipeline.normalize()
    proxy.set_drop_share(1.0)
    before = proxy.connections
    with caplog.at_level(logging.INFO, logger="lakeload.storage"), pytest.raises(PipelineStepFailed) as info:
        pipeline.load()
    assert info.value.step == "load" and info.value.load_id == load_id
    assert isinstance(info.value.__cause__, StorageUnavailableError)  # a LoadError and a DestinationError
    assert "through 8 attempt(s)" in str(info.value)
    assert s3_server.secret_key not in str(info.value)
    assert proxy.connections - before >= 8  # every attempt reached the proxy, and was reset
    assert len([r for r in caplog.records if "retrying" in r.getMessage()]) == 7

    proxy.set_drop_share(0.0)
    info_ok = pipeline.load()
    assert info_ok.load_ids == [load_id]
    fs = direct_fs(s3_server)
    root = f"{s3_server.bucket}/{prefix}/ds"
    assert sorted(r["id"] for r in rows_of(fs, f"{root}/events")) == [e["id"] for e in EVENTS]


def test_wrong_secret_fails_without_retries(
    s3_server: S3Server, proxy: FaultProxy, tmp_path: Any, caplog: pytest.LogCaptureFixture,
) -> None:
    """Counted, not timed: no retry in lakeload's log, at most 2 connections through the proxy, none reset."""
    prefix = fresh_prefix("faults-403")
    wrong = "wrong-secret-value-123"
    pipeline = lakeload.pipeline("faults_403", destination=destination(s3_server, proxy.endpoint, prefix, wrong),
                                 dataset_name="ds", pipelines_dir=str(tmp_path / "p"))
    with caplog.at_level(logging.INFO, logger="lakeload.storage"), pytest.raises(DestinationError) as info:
        pipeline.run(EVENTS, table_name="events")
    assert not isinstance(info.value, StorageUnavailableError)
    assert "access refused" in str(info.value) and wrong not in str(info.value)
    assert not [r for r in caplog.records if "retrying" in r.getMessage()]
    assert proxy.connections <= 2 and proxy.resets == 0

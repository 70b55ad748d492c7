"""Files sources on a real S3 server (moto on 127.0.0.1, auth enforced): executors read the bucket themselves."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import s3fs
from servers.fixtures import S3Server, fresh_prefix, s3_storage_options

import lakeload
from lakeload.errors import PipelineStepFailed
from lakeload.sources.filesystem import filesystem, read_csv, read_jsonl, read_parquet

pytestmark = pytest.mark.usefixtures("spark")


def credentials(s3: S3Server, secret: str | None = None) -> dict[str, Any]:
    return s3.credentials(secret)


def make_pipeline(bucket: Path, pipelines_dir: Path, name: str = "s3_files") -> lakeload.Pipeline:
    destination = lakeload.destinations.filesystem(bucket_url=str(bucket))
    return lakeload.pipeline(name, destination=destination, dataset_name="ds", pipelines_dir=str(pipelines_dir))


def jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


@pytest.fixture
def s3_prefix(s3_server: S3Server) -> tuple[s3fs.S3FileSystem, str]:
    fs = s3fs.S3FileSystem(**s3_storage_options(s3_server))
    return fs, f"{s3_server.bucket}/{fresh_prefix('files-source')}"


def test_jsonl_parquet_and_csv_from_s3(
    s3_server: S3Server, s3_prefix: tuple[s3fs.S3FileSystem, str], bucket: Path, pipelines_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fs, prefix = s3_prefix
    records = [{"id": i, "name": f"n{i}", "tags": [{"t": j} for j in range(i % 2)]} for i in range(40)]
    fs.pipe_file(f"{prefix}/events/2024/a.jsonl", jsonl(records[:30]))  # ~1 kB: byte ranges of 300 bytes
    fs.pipe_file(f"{prefix}/events/b.jsonl.gz", gzip.compress(jsonl(records[30:])))
    fs.pipe_file(f"{prefix}/tables/p1.parquet", parquet(pa.table({"id": [1, 2], "price": [1.5, None]})))
    fs.pipe_file(f"{prefix}/tables/p2.parquet", parquet(pa.table({"id": [3], "label": ["x"]})))
    fs.pipe_file(f"{prefix}/tables/c.csv", b"id,amount\n1,0.5\n2,1.5\n")
    fs.pipe_file(f"{prefix}/tables/d.csv", b"id,amount,note\n3,7,late\n")  # one more column, ints: nothing dropped
    monkeypatch.setenv("EXTRACT__FILE_MAX_BYTES", "300")
    url, creds = f"s3://{prefix}", credentials(s3_server)
    p = make_pipeline(bucket, pipelines_dir)

    info = p.run(filesystem(f"{url}/events", creds, "**/*.jsonl*", incremental=True) | read_jsonl(add_file_name=True),
                 table_name="events")
    assert info.row_counts == {"events": 40, "events__tags": 20}
    rows = p.dataset()("SELECT id, _file_name FROM events").arrow().to_pylist()
    assert sorted(r["id"] for r in rows) == list(range(40))
    assert {r["_file_name"] for r in rows if r["id"] >= 30} == {f"{url}/events/b.jsonl.gz"}

    info = p.run(filesystem(f"{url}/tables", creds, "*.parquet") | read_parquet(add_file_name=True), table_name="prices")
    assert info.row_counts == {"prices": 3}
    types = {n: c.get("data_type") for n, c in p.default_schema.tables["prices"]["columns"].items()}
    assert {k: types[k] for k in ("id", "price", "label", "_file_name")} == {
        "id": "bigint", "price": "double", "label": "text", "_file_name": "text"}

    info = p.run(filesystem(f"{url}/tables", creds, "*.csv") | read_csv(), table_name="amounts")
    assert info.row_counts == {"amounts": 3}
    assert p.default_schema.tables["amounts"]["columns"]["amount"]["data_type"] == "double"
    stored = p.dataset()("SELECT id, amount, note FROM amounts ORDER BY id").arrow().to_pylist()
    assert stored[-1] == {"id": 3, "amount": 7.0, "note": "late"} and stored[0]["note"] is None


def test_incremental_on_s3_and_normalize_in_a_new_process_with_configured_credentials(
    s3_server: S3Server, s3_prefix: tuple[s3fs.S3FileSystem, str], bucket: Path, pipelines_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fs, prefix = s3_prefix
    fs.pipe_file(f"{prefix}/a.jsonl", jsonl([{"id": 1}, {"id": 2}]))
    creds = credentials(s3_server)

    def files() -> lakeload.Resource:
        return filesystem(f"s3://{prefix}", creds, "*.jsonl", incremental=True) | read_jsonl()

    p = make_pipeline(bucket, pipelines_dir)
    assert p.run(files(), table_name="events").row_counts == {"events": 2}
    fs.pipe_file(f"{prefix}/b.jsonl", jsonl([{"id": 3}]))
    fs.pipe_file(f"{prefix}/a.jsonl", jsonl([{"id": 1}, {"id": 2}, {"id": 4}]))  # new etag
    p.extract(files(), table_name="events")

    for field, value in creds.items():  # a fresh pipeline object knows no explicit credentials: config gives them
        monkeypatch.setenv(f"SOURCES__FILESYSTEM__CREDENTIALS__{field.upper()}", value)
    fresh = make_pipeline(bucket, pipelines_dir)
    fresh.normalize()
    fresh.load()
    assert sorted(r["id"] for r in fresh.dataset()("SELECT id FROM events").arrow().to_pylist()) == [1, 1, 2, 2, 3, 4]


def test_wrong_credentials_fail_naming_the_bucket_without_the_secret(
    s3_server: S3Server, s3_prefix: tuple[s3fs.S3FileSystem, str], bucket: Path, pipelines_dir: Path
) -> None:
    fs, prefix = s3_prefix
    fs.pipe_file(f"{prefix}/a.jsonl", jsonl([{"id": 1}]))
    wrong = "wrong-secret-value-1234"
    p = make_pipeline(bucket, pipelines_dir)
    with pytest.raises(PipelineStepFailed) as failed:
        p.run(filesystem(f"s3://{prefix}", credentials(s3_server, wrong), "*.jsonl") | read_jsonl(), table_name="events")
    message = str(failed.value)
    assert f"s3://{prefix}" in message and "check the credentials" in message
    assert wrong not in message and s3_server.secret_key not in message

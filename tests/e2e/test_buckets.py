"""Full pipeline runs into real buckets on loopback servers: S3 (moto), Azure (Azurite), GCS, SFTP.

Per backend: append (jsonl), replace (parquet), merge fallback (csv), state restored into a fresh
working folder, and wrong credentials failing clearly with nothing written.
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from servers.fixtures import fresh_prefix

import lakeload
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.errors import LakeloadError

pytestmark = pytest.mark.usefixtures("spark")
BACKENDS = ["s3", "az", "gs", "sftp"]
USERS = [{"id": i, "name": f"u{i}", "pets": [{"n": j} for j in range(i % 3)]} for i in range(5)]


def destination(backend: str, request: pytest.FixtureRequest, prefix: str, wrong: bool = False) -> Any:
    """A filesystem destination for `backend`, with credentials in lakeload's (dlt's) field names."""
    if backend == "s3":
        s = request.getfixturevalue("s3_server")
        credentials = s.credentials("wrong-secret" if wrong else None)
        return lakeload.destinations.filesystem(bucket_url=f"s3://{s.bucket}/{prefix}", credentials=credentials)
    if backend == "az":
        a = request.getfixturevalue("azure_server")
        connection = a.connection_string.replace(a.account_key, "d3Jvbmc=") if wrong else a.connection_string
        return lakeload.destinations.filesystem(bucket_url=f"az://{a.container}/{prefix}", credentials=connection)
    if backend == "gs":
        g = request.getfixturevalue("gcs_server")
        if wrong:  # the emulator checks no credentials: a broken service-account key is refused by the client
            broken = {"project_id": g.project, "client_email": "svc@test.iam.gserviceaccount.com",
                      "private_key_id": "k1", "private_key": "-----BEGIN PRIVATE KEY-----\nd3Jvbmc=\n-----END PRIVATE KEY-----\n"}
            return lakeload.destinations.filesystem(
                bucket_url=f"gs://{g.bucket}/{prefix}", credentials=broken, kwargs={"endpoint_url": g.endpoint_url}
            )
        return lakeload.destinations.filesystem(
            bucket_url=f"gs://{g.bucket}/{prefix}", kwargs={"endpoint_url": g.endpoint_url, "token": "anon", "project": g.project}
        )
    s = request.getfixturevalue("sftp_server")
    credentials = {
        "sftp_port": s.port,
        "sftp_username": s.username,
        "sftp_password": "wrong-password" if wrong else s.password,
        "sftp_known_hosts": s.known_hosts,
        "sftp_look_for_keys": False,
        "sftp_allow_agent": False,
    }
    return lakeload.destinations.filesystem(bucket_url=f"sftp://{s.host}:{s.port}{s.root}/{prefix}", credentials=credentials)


def table_rows(client: FilesystemClient, table: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in client.find(table):
        if not path.startswith(table + "/"):
            continue
        data = client.read_bytes(path)
        if path.endswith(".parquet"):
            rows += pq.read_table(io.BytesIO(data)).to_pylist()
        elif ".csv" in path:
            raw = gzip.decompress(data) if path.endswith(".gz") else data
            rows += pacsv.read_csv(io.BytesIO(raw)).to_pylist()
        else:
            raw = gzip.decompress(data) if path.endswith(".gz") else data
            rows += [json.loads(line) for line in raw.splitlines() if line.strip()]
    return rows


@pytest.mark.parametrize("backend", BACKENDS)
def test_pipeline_on_bucket(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    prefix = fresh_prefix(backend)
    dest = destination(backend, request, prefix)
    p = lakeload.pipeline(f"bucket_{backend}", destination=dest, dataset_name="ds", pipelines_dir=str(tmp_path / "one"))
    p.run(USERS, table_name="users")
    p.run(USERS, table_name="users")
    client = FilesystemClient(dest.configuration(p.pipeline_name), "ds")
    assert len(table_rows(client, "users")) == 10 and len(table_rows(client, "users__pets")) == 8
    assert client.exists("init") and len(client.list_dir("_dlt_loads")) == 2

    replaced = p.run(USERS[:2], table_name="users", write_disposition="replace", loader_file_format="parquet")
    assert sorted(r["id"] for r in table_rows(client, "users")) == [0, 1]
    assert len(table_rows(client, "users__pets")) == 1
    assert all(f.endswith(".parquet") for f in client.find("users") if f.startswith("users/"))
    assert replaced.packages[0].replaced_tables == ["users", "users__pets"]

    with pytest.warns(UserWarning, match="Falling back to 'append'"):
        p.run(USERS[2:], table_name="users", write_disposition="merge", primary_key="id", loader_file_format="csv")
    assert sorted(r["id"] for r in table_rows(client, "users")) == [0, 1, 2, 3, 4]

    query = ("SELECT u.id, count(p.n) FROM users u LEFT JOIN users__pets p ON p._dlt_parent_id = u._dlt_id "
             "WHERE u.id >= %s GROUP BY u.id ORDER BY u.id")
    with p.sql_client() as sql, sql.execute_query(query, 0) as cursor:  # same rows through DuckDB on every backend
        assert cursor.fetchall() == [(0, 0), (1, 1), (2, 2), (3, 0), (4, 1)]
    assert dict(p.dataset().row_counts()) == {"users": 5, "users__pets": 4}

    fresh = lakeload.pipeline(f"bucket_{backend}", destination=dest, dataset_name="ds", pipelines_dir=str(tmp_path / "two"))
    fresh.sync_destination()
    assert set(fresh.default_schema.tables) >= {"users", "users__pets"}
    assert fresh.state["_state_version"] == p.state["_state_version"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_wrong_credentials_fail_clearly_and_write_nothing(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    prefix = fresh_prefix(backend)
    bad = destination(backend, request, prefix, wrong=True)
    p = lakeload.pipeline(f"bad_{backend}", destination=bad, dataset_name="ds", pipelines_dir=str(tmp_path / "p"))
    with pytest.raises(LakeloadError) as err:
        p.run(USERS, table_name="users")
    message = str(err.value)
    assert "credentials" in message.lower()
    assert "wrong-secret" not in message and "wrong-password" not in message and "d3Jvbmc=" not in message
    good = FilesystemClient(destination(backend, request, prefix).configuration(p.pipeline_name), "ds")
    assert good.find("") == []  # nothing was written
    assert p.storage.list_packages("extracted") == []  # and nothing extracted: the bucket is checked first

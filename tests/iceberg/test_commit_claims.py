"""Exclusive metadata versions under the embedded catalog (`lakeload.iceberg.commit_claims`), on a local folder and
on S3 (moto, whose conditional PUTs refuse a second create): two writers that read the same version cannot both
commit the next one, and a claim left by a writer that died is skipped once stale. No Spark: pyiceberg writes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.exceptions import CommitFailedException
from servers.fixtures import fresh_prefix

from lakeload.config.credentials import Credentials
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.iceberg import commit_claims
from lakeload.iceberg.catalog import DatasetCatalog
from lakeload.iceberg.target import _without_retries

ROWS = pa.table({"id": pa.array([1], pa.int64())})


@pytest.fixture(params=["local", "s3"])
def client(request: pytest.FixtureRequest, tmp_path: Path) -> FilesystemClient:
    if request.param == "local":
        return FilesystemClient(FilesystemConfiguration(bucket_url=str(tmp_path / "bucket")), "ds")
    s3 = request.getfixturevalue("s3_server")
    config = FilesystemConfiguration(bucket_url=s3.url(fresh_prefix("claims")), credentials=Credentials(s3.credentials()))
    return FilesystemClient(config, "ds")


def writer(client: FilesystemClient) -> Any:
    """A table handle of a writer with its own embedded catalog (another process, as far as the catalog knows)."""
    table = DatasetCatalog(client).load("t")
    assert table is not None
    return _without_retries(table)


def make_table(client: FilesystemClient) -> None:
    catalog = DatasetCatalog(client)
    catalog.ensure_namespace()
    table = catalog.catalog.create_table(catalog.identifier("t"), schema=ROWS.schema, location=catalog.location("t"))
    table.append(ROWS)


def rows(client: FilesystemClient) -> list[int]:
    table = DatasetCatalog(client).load("t")
    assert table is not None
    return sorted(table.scan().to_arrow()["id"].to_pylist())


def test_two_writers_on_one_version_one_fails_and_commits_after_reading_again(client: FilesystemClient) -> None:
    make_table(client)
    first, second = writer(client), writer(client)  # both read the same version
    first.append(pa.table({"id": pa.array([2], pa.int64())}))
    with pytest.raises(CommitFailedException):
        second.append(pa.table({"id": pa.array([3], pa.int64())}))
    writer(client).append(pa.table({"id": pa.array([3], pa.int64())}))  # read again: lands on top
    assert rows(client) == [1, 2, 3]


def test_a_claim_whose_writer_died_is_skipped_once_stale(client: FilesystemClient, monkeypatch: pytest.MonkeyPatch) -> None:
    make_table(client)
    table = writer(client)
    version = int(table.metadata_location.rsplit("/", 1)[1].split("-", 1)[0])
    metadata = client.fs._strip_protocol(table.metadata_location)
    dead = {"metadata": f"{version + 1:05d}-never-written.metadata.json", "at": time.time()}
    assert commit_claims.create_exclusive(client.fs, f"{commit_claims.claims_dir(metadata)}/{commit_claims.claim_name(version + 1)}",
                                          json.dumps(dead).encode())
    with pytest.raises(CommitFailedException):  # fresh: its writer may be between its two writes
        writer(client).append(pa.table({"id": pa.array([2], pa.int64())}))
    monkeypatch.setattr(commit_claims, "STALE_SECONDS", 0.0)
    after = writer(client)
    after.append(pa.table({"id": pa.array([2], pa.int64())}))
    assert DatasetCatalog(client).load("t").metadata_location.rsplit("/", 1)[1].startswith(f"{version + 2:05d}-")
    assert rows(client) == [1, 2]

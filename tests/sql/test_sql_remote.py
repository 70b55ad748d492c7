"""The SQL client over an S3 bucket (moto on loopback): DuckDB reads through the registered s3fs filesystem."""

from __future__ import annotations

import logging

import pytest
from conftest import DATASET, bucket_schema
from servers.fixtures import fresh_prefix, s3_storage_options

from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.kernel.filesystem.layout import Layout
from lakeload.sql.client import FilesystemSqlClient
from lakeload.sql.dataset import Dataset


def test_query_s3_bucket(s3_server, dlt_buckets, fmt, caplog: pytest.LogCaptureFixture):
    import fsspec

    options = s3_storage_options(s3_server)
    s3 = fsspec.filesystem("s3", **options)
    prefix = fresh_prefix(f"sql-{fmt}")
    source = dlt_buckets[fmt]
    for path in source.rglob("*"):
        if path.is_file():
            s3.pipe_file(f"{s3_server.bucket}/{prefix}/{path.relative_to(source).as_posix()}", path.read_bytes())
    config = FilesystemConfiguration(bucket_url=s3_server.url(prefix), kwargs=dict(options))
    client = FilesystemSqlClient(FilesystemClient(config, DATASET), bucket_schema(source), Layout.parse())
    caplog.set_level(logging.DEBUG, logger="lakeload.sql")
    with client:
        view = client.view_sql("users")
        assert f"'s3://{s3_server.bucket}/{prefix}/{DATASET}/users/" in view
        assert s3_server.secret_key not in view and s3_server.access_key not in view
        assert client.execute_sql("SELECT count(*) FROM users") == [(8,)]
        joined = client.execute_sql(
            "SELECT count(*) FROM users u JOIN users__pets p ON p._dlt_parent_id = u._dlt_id WHERE u.id < %s", 4
        )
        assert joined == [(6,)]
        assert client.execute_sql("SELECT avatar FROM users WHERE id = 2") == [(b"\x00\x01img\x02",)]
        assert client.execute_sql("SELECT status FROM _dlt_loads") == [(0,)]
    assert Dataset(client).row_counts() == [("users", 8), ("users__pets", 12)]
    assert s3_server.secret_key not in caplog.text

"""End to end with Spark: lakeload writes a bucket, `dataset()` queries it, `.spark()` reads it with Spark."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from conftest import DATASET, bucket_schema, users
from servers.fixtures import fresh_prefix, s3_storage_options

import lakeload
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.kernel.filesystem.layout import Layout
from lakeload.sql.client import FilesystemSqlClient
from lakeload.sql.dataset import Dataset

COMPARED = ["id", "name", "score", "active", "birthday", "balance", "avatar", "meta", "_dlt_id"]


def _spark_rows(frame, columns=COMPARED):
    rows = sorted(frame.select(*columns).collect(), key=lambda r: r["id"])
    return [tuple(r[c] if c != "meta" else json.loads(r[c]) for c in columns) for r in rows]


def _duck_rows(ds, columns=COMPARED):
    rows = ds.users.select(*columns).fetchall()
    index = columns.index("meta")
    return sorted((tuple(json.loads(v) if i == index else v for i, v in enumerate(r)) for r in rows), key=lambda r: r[0])


def test_lakeload_bucket_dataset_and_spark(spark, tmp_path: Path):
    bucket = tmp_path / "bucket"
    pipeline = lakeload.pipeline(
        "sql_e2e", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name=DATASET,
        pipelines_dir=str(tmp_path / "pipelines"), spark=spark,
    )
    for start, fmt in ((0, "jsonl"), (8, "parquet"), (16, "csv")):  # one table in three formats
        pipeline.run(users(start, 8), table_name="users", loader_file_format=fmt, columns={"meta": {"data_type": "json"}})
    ds = pipeline.dataset()
    assert ds.row_counts() == [("users", 24), ("users__pets", 36)]
    assert ds("SELECT count(*) FROM _dlt_loads").fetchall() == [(3,)]
    frame = ds.users.spark()
    types = dict(frame.dtypes)
    assert types["id"] == "bigint" and types["created_at"] == "timestamp" and types["balance"] == "decimal(38,9)"
    assert types["avatar"] == "binary" and types["meta"] == "string" and types["birthday"] == "date"
    assert frame.count() == 24
    assert _spark_rows(frame) == _duck_rows(ds)
    assert _spark_rows(frame)[17][5] == Decimal("27.250000000")
    assert ds.users.select("id", "name").limit(3).spark().count() == 3
    assert ds.users__pets.spark().count() == 36
    assert ds("SELECT id FROM users WHERE id < 2").spark().count() == 2


def test_spark_reads_s3_bucket_on_executors(spark, s3_server, dlt_buckets):
    import fsspec

    options = s3_storage_options(s3_server)
    s3 = fsspec.filesystem("s3", **options)
    prefix = fresh_prefix("sql-spark")
    for fmt, source in dlt_buckets.items():
        for path in source.rglob("*"):
            if path.is_file():
                s3.pipe_file(f"{s3_server.bucket}/{prefix}/{fmt}/{path.relative_to(source).as_posix()}", path.read_bytes())
    for fmt, source in dlt_buckets.items():
        config = FilesystemConfiguration(bucket_url=s3_server.url(prefix, fmt), kwargs=dict(options))
        ds = Dataset(FilesystemSqlClient(FilesystemClient(config, DATASET), bucket_schema(source), Layout.parse()))
        frame = ds.users.spark(spark)
        assert frame.count() == 8, fmt
        assert _spark_rows(frame) == _duck_rows(ds), fmt
        assert ds.users__pets.spark(spark).count() == 12



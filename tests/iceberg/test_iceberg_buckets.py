"""Iceberg tables in a local folder and in an S3 bucket (moto on 127.0.0.1, credentials enforced): the catalog's
FileIO is lakeload's filesystem of the bucket, so its credentials never enter pyiceberg's properties."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.iceberg import get_iceberg_tables

pytestmark = pytest.mark.usefixtures("spark")


def test_merge_with_nested_tables_into_a_bucket_and_read_back(bucket_kind: Any, tmp_path: Path) -> None:
    p = lakeload.pipeline("ib", destination=bucket_kind.destination(), dataset_name="ds", pipelines_dir=str(tmp_path / "p"))

    def users(rows: list[dict[str, Any]]) -> Any:
        return lakeload.resource(rows, name="users", write_disposition="merge", primary_key="id", table_format="iceberg")

    p.run(users([{"id": 1, "pets": ["a", "b"]}, {"id": 2, "pets": ["c"]}]))
    p.run(users([{"id": 2, "pets": ["d"]}, {"id": 3}]))
    with p.sql_client() as client:
        assert client.execute_sql("SELECT id FROM users ORDER BY id") == [(1,), (2,), (3,)]
        assert client.execute_sql("SELECT value FROM users__pets ORDER BY value") == [("a",), ("b",), ("d",)]
    tables = get_iceberg_tables(p)
    location = tables["users"].location()
    assert location.startswith("s3://" if bucket_kind.credentials else "file://") and location.endswith("/ds/users")
    assert sorted(tables["users"].scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    assert p.dataset()["users__pets"].spark().count() == 3
    secret = (bucket_kind.credentials or {}).get("aws_secret_access_key")
    if secret:
        assert secret not in repr(tables["users"].io.properties) and secret not in str(tables["users"].properties)

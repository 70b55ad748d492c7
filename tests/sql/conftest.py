"""Buckets written by dlt 1.31 (in-process, isolated config) for the SQL client tests; no Spark here."""

from __future__ import annotations

import datetime as dt
import decimal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))

from bucket_utils import stored_schema  # noqa: E402
from harness import isolated_dlt_config  # noqa: E402

from lakeload.destinations.impl.filesystem.client import FilesystemClient  # noqa: E402
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration  # noqa: E402
from lakeload.kernel.filesystem.layout import Layout  # noqa: E402
from lakeload.schema.schema import Schema  # noqa: E402
from lakeload.sql.client import FilesystemSqlClient  # noqa: E402

DATASET = "ds"
PIPELINE = "sqlp"
FORMATS = ("jsonl", "parquet", "csv")
PETS_PER_USER = [3, 0, 2, 1, 2, 0, 3, 1]  # 8 users, 12 pets


def users(start: int = 0, count: int = 8) -> list[dict[str, Any]]:
    """Rows with every scalar dlt type and a nested list (-> users__pets)."""
    rows = []
    for i in range(start, start + count):
        rows.append({
            "id": i,
            "name": f"user {i}",
            "score": i / 4,
            "active": i % 2 == 0,
            "created_at": dt.datetime(2024, 1, 1 + i % 28, 12, 30, tzinfo=dt.timezone.utc),
            "birthday": dt.date(1990, 1 + i % 12, 1),
            "wake_up": dt.time(7, i % 60),
            "balance": decimal.Decimal("10.25") + i,
            "avatar": b"\x00\x01img" + bytes([i % 256]),
            "meta": {"level": i, "tags": ["a", "b"]},
            "pets": [{"name": f"pet {i}.{j}", "kind": "cat" if j % 2 else "dog"} for j in range(PETS_PER_USER[i % 8])],
        })
    return rows


def dlt_load(bucket: Path, pipelines: Path, rows: list[dict[str, Any]], fmt: str, *, table: str = "users",
             layout: str | None = None, pipeline_name: str = PIPELINE) -> None:
    """Load `rows` with dlt 1.31 into `bucket/ds` as `fmt` files."""
    import dlt

    with isolated_dlt_config(pipelines / "_dlt_home"):
        kwargs = {"layout": layout} if layout else {}
        pipeline = dlt.pipeline(
            pipeline_name=pipeline_name,
            destination=dlt.destinations.filesystem("file://" + str(bucket.resolve()), **kwargs),
            dataset_name=DATASET,
            pipelines_dir=str(pipelines),
        )
        pipeline.run(rows, table_name=table, loader_file_format=fmt, columns={"meta": {"data_type": "json"}})


def bucket_schema(bucket: Path) -> Schema:
    return Schema.from_dict(stored_schema(bucket, DATASET))


def make_client(bucket: Path, *, always_refresh_views: bool = False, layout: str | None = None,
                schema: Schema | None = None) -> FilesystemSqlClient:
    config = FilesystemConfiguration(bucket_url="file://" + str(bucket.resolve()))
    return FilesystemSqlClient(
        FilesystemClient(config, DATASET),
        schema or bucket_schema(bucket),
        Layout.parse(layout) if layout else Layout.parse(),
        always_refresh_views=always_refresh_views,
    )


@pytest.fixture(scope="module")
def dlt_buckets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One dlt-written bucket per format with 8 users and 12 pets (read only: do not load into them)."""
    root = tmp_path_factory.mktemp("dlt_buckets")
    buckets = {}
    for fmt in FORMATS:
        bucket = root / fmt
        dlt_load(bucket, root / f"pipelines_{fmt}", users(), fmt)
        buckets[fmt] = bucket
    return buckets


@pytest.fixture(params=FORMATS)
def fmt(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def client_for(dlt_buckets: dict[str, Path]) -> Callable[..., FilesystemSqlClient]:
    return lambda fmt, **kw: make_client(dlt_buckets[fmt], **kw)

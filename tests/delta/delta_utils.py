"""Helpers for Delta tests: a schema with Delta and plain tables, and Delta tables written with delta-rs.

Tables are written directly with `deltalake.write_deltalake(table_uri(...), ..., storage_options=...)`, the
URI and options lakeload derives, so that reading them back tests lakeload's read side only (no Spark).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa

from lakeload.delta.storage import storage_options, table_uri
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.kernel.filesystem.layout import Layout
from lakeload.schema.schema import Schema
from lakeload.sql.client import FilesystemSqlClient

DATASET = "ds"
UTC = dt.timezone.utc
AZURITE_MIN = (3, 37, 0)


def require_azurite_with_start_from() -> None:
    """Fail clearly when the installed Azurite ignores List Blobs' `startFrom` (before 3.37.0): delta-rs then
    gets the whole Delta log when it asks for the versions after its own, and every commit after version 1
    fails with "Invalid table version: 1"."""
    import json

    from servers import fixtures

    package = fixtures.AZURITE_BLOB.parents[1] / "azurite" / "package.json"
    version = json.loads(package.read_text())["version"] if package.exists() else "0.0.0"
    if tuple(int(part) for part in version.split(".")[:3]) < AZURITE_MIN:
        import pytest

        pytest.fail(f"Azurite {version} ignores List Blobs' startFrom, which delta-rs needs after version 1; "
                    f"run scripts/setup.sh to install azurite>={'.'.join(map(str, AZURITE_MIN))} into .tools")


def column(name: str, data_type: str, **hints: Any) -> dict[str, Any]:
    return {"name": name, "data_type": data_type, "nullable": True, **hints}


def delta_schema(name: str = "delta_schema") -> Schema:
    """`users` (Delta, partitioned by `region`), its nested `users__pets`, a plain `events` table and a
    Delta table `later` that is in the schema but not written yet."""
    schema = Schema(name)
    seen = {"x-normalizer": {"seen-data": True}}
    schema.update_table({"name": "users", "table_format": "delta", "write_disposition": "append", **seen, "columns": {
        c["name"]: c for c in (
            column("id", "bigint"), column("name", "text"), column("region", "text", partition=True),
            column("created_at", "timestamp"), column("balance", "decimal", precision=10, scale=2),
            column("nickname", "text"), column("_dlt_id", "text"),
        )}})
    schema.update_table({"name": "users__pets", "parent": "users", **seen, "columns": {
        c["name"]: c for c in (column("name", "text"), column("_dlt_parent_id", "text"), column("_dlt_id", "text"))}})
    schema.update_table({"name": "events", "write_disposition": "append", **seen,
                         "columns": {"id": column("id", "bigint")}})
    schema.update_table({"name": "later", "table_format": "delta", "columns": {"id": column("id", "bigint")}})
    return schema


def users(ids: range, region: str | None = None, nickname: bool = False) -> pa.Table:
    """Rows of `users` (without `nickname` unless asked: it is the column a later version adds)."""
    rows: dict[str, Any] = {
        "id": pa.array(list(ids), pa.int64()),
        "name": [f"user {i}" for i in ids],
        "region": [region or ("eu" if i % 2 else "us") for i in ids],
        "created_at": pa.array([dt.datetime(2024, 1, 1 + i % 28, 12, tzinfo=UTC) for i in ids], pa.timestamp("us", "UTC")),
        "balance": pa.array([f"{i}.25" for i in ids], pa.string()).cast(pa.decimal128(10, 2)),
        "_dlt_id": [f"u{i}" for i in ids],
    }
    if nickname:
        rows["nickname"] = [f"nick {i}" for i in ids]
    return pa.table(rows)


def pets(parent_ids: range) -> pa.Table:
    return pa.table({"name": [f"pet of {i}" for i in parent_ids], "_dlt_parent_id": [f"u{i}" for i in parent_ids],
                     "_dlt_id": [f"p{i}" for i in parent_ids]})


def write(config: FilesystemConfiguration, table: str, data: pa.Table, mode: str = "append", **kwargs: Any) -> None:
    """Write `data` as a new version of `<bucket>/ds/<table>` with lakeload's URI and storage options."""
    from deltalake import write_deltalake

    client = FilesystemClient(config, DATASET)
    write_deltalake(table_uri(config, client.dataset_path, table), data, mode=mode,
                    storage_options=storage_options(config), **kwargs)


def write_users_history(config: FilesystemConfiguration) -> None:
    """Version 0: users 0-3 partitioned by region; 1: users 4-5 with the new `nickname` column;
    2: overwrite with users 10-12 (older files stay in the folder); pets for users 10-11."""
    write(config, "users", users(range(4)), mode="overwrite", partition_by=["region"])
    write(config, "users", users(range(4, 6), nickname=True), schema_mode="merge")
    write(config, "users", users(range(10, 13), nickname=True), mode="overwrite")
    write(config, "users__pets", pets(range(10, 12)), mode="overwrite")


def sql_client(config: FilesystemConfiguration, schema: Schema | None = None, **kwargs: Any) -> FilesystemSqlClient:
    return FilesystemSqlClient(FilesystemClient(config, DATASET), schema or delta_schema(), Layout.parse(), **kwargs)

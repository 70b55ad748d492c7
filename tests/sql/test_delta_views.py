"""The SQL client and dataset over Delta tables: views read the current Delta snapshot (not the folder),
with partition columns, columns added in later versions, overwrites, snapshot/refresh semantics and
not-yet-created tables; locally, on moto (S3) and on Azurite. Tables are written with delta-rs, no Spark."""

from __future__ import annotations

import datetime as dt
import decimal
import logging
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "delta"))

from delta_utils import (  # noqa: E402
    DATASET,
    delta_schema,
    pets,
    require_azurite_with_start_from,
    sql_client,
    users,
    write,
    write_users_history,
)
from servers.fixtures import fresh_prefix  # noqa: E402

from lakeload.config.credentials import Credentials  # noqa: E402
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration  # noqa: E402
from lakeload.sql.dataset import Dataset  # noqa: E402

EXPECTED_USERS = [
    (10, "user 10", "us", "nick 10"),
    (11, "user 11", "eu", "nick 11"),
    (12, "user 12", "us", "nick 12"),
]


@pytest.fixture
def local(bucket: Path) -> FilesystemConfiguration:
    return FilesystemConfiguration(bucket_url=f"file://{bucket}")


def check_history_reads(config: FilesystemConfiguration) -> None:
    """The view over `write_users_history` gives version 2 only: what a folder glob cannot."""
    write_users_history(config)
    with sql_client(config) as client:
        assert client.execute_sql("SELECT id, name, region, nickname FROM users ORDER BY id") == EXPECTED_USERS
        assert client.execute_sql(
            "SELECT u.id, p.name FROM users u JOIN users__pets p ON p._dlt_parent_id = u._dlt_id ORDER BY 1"
        ) == [(10, "pet of 10"), (11, "pet of 11")]
        assert len(client.files_for("users")) == 2  # the snapshot's files (one per region), not the 6 in the folder
    assert Dataset(sql_client(config)).row_counts() == [("users", 3), ("users__pets", 2), ("events", 0)]


def test_snapshot_not_folder(local: FilesystemConfiguration, bucket: Path) -> None:
    check_history_reads(local)
    every_file = list((bucket / DATASET / "users").rglob("*.parquet"))
    with duckdb.connect() as con:
        rows = con.execute(f"SELECT count(*) FROM read_parquet({[str(p) for p in every_file]})").fetchone()
    assert len(every_file) == 6 and rows == (9,)  # a file glob would see 9 rows of three versions


def test_partition_and_added_columns(local: FilesystemConfiguration) -> None:
    write(local, "users", users(range(4)), mode="overwrite", partition_by=["region"])
    write(local, "users", users(range(4, 6), nickname=True), schema_mode="merge")
    with sql_client(local) as client:
        rows = client.execute_sql("SELECT id, region, nickname FROM users ORDER BY id")
        assert rows == [(0, "us", None), (1, "eu", None), (2, "us", None), (3, "eu", None),
                        (4, "us", "nick 4"), (5, "eu", "nick 5")]
        assert client.execute_sql("SELECT count(*) FROM users WHERE region = %s", "eu") == [(3,)]
        described = {row[0]: row[1] for row in client.execute_sql("DESCRIBE users")}
        row = client.execute_sql("SELECT created_at, balance FROM users WHERE id = 5")[0]
    assert described == {"id": "BIGINT", "name": "VARCHAR", "region": "VARCHAR",
                         "created_at": "TIMESTAMP WITH TIME ZONE", "balance": "DECIMAL(10,2)",
                         "nickname": "VARCHAR", "_dlt_id": "VARCHAR"}
    assert row == (dt.datetime(2024, 1, 6, 12, tzinfo=dt.timezone.utc), decimal.Decimal("5.25"))


def test_view_sql_names_no_path(local: FilesystemConfiguration, bucket: Path) -> None:
    write(local, "users", users(range(2)))
    sql = sql_client(local).view_sql("users")
    assert sql.startswith('SELECT "id", "name"') and 'FROM "_lakeload_delta__users__' in sql
    assert str(bucket) not in sql and "read_parquet" not in sql


def test_snapshot_vs_always_refresh(local: FilesystemConfiguration) -> None:
    write(local, "users", users(range(2)))
    with sql_client(local) as snapshot, sql_client(local, always_refresh_views=True) as fresh:
        assert snapshot.execute_sql("SELECT count(*) FROM users") == [(2,)]
        assert fresh.execute_sql("SELECT count(*) FROM users") == [(2,)]
        write(local, "users", users(range(2, 5)))
        assert snapshot.execute_sql("SELECT count(*) FROM users") == [(2,)]  # version taken at view creation
        assert snapshot.delta_snapshot("users").version == 0  # type: ignore[union-attr]
        assert fresh.execute_sql("SELECT count(*) FROM users") == [(5,)]
        write(local, "users", users(range(7, 8)), mode="overwrite")
        assert fresh.execute_sql("SELECT id FROM users") == [(7,)]
        assert fresh.delta_snapshot("users").version == 2  # type: ignore[union-attr]
        assert snapshot.execute_sql("SELECT count(*) FROM users") == [(2,)]
    with sql_client(local) as reopened:
        assert reopened.execute_sql("SELECT id FROM users") == [(7,)]


def test_table_not_created_yet_is_an_empty_view(local: FilesystemConfiguration) -> None:
    with sql_client(local) as snapshot, sql_client(local, always_refresh_views=True) as fresh:
        assert snapshot.execute_sql("SELECT * FROM later") == []
        assert fresh.execute_sql("SELECT * FROM later") == []
        assert snapshot.execute_sql("DESCRIBE later")[0][:2] == ("id", "BIGINT")
        assert snapshot.table_files("later") == [] and snapshot.delta_snapshot("later") is None
        write(local, "later", users(range(3)).select(["id"]))
        assert snapshot.execute_sql("SELECT count(*) FROM later") == [(0,)]  # same rule as a table without files
        assert fresh.execute_sql("SELECT count(*) FROM later") == [(3,)]


def test_dataset_relations(local: FilesystemConfiguration) -> None:
    write(local, "users", users(range(4)), partition_by=["region"])
    write(local, "users__pets", pets(range(2)))
    with Dataset(sql_client(local)) as ds:
        assert ds.users.row_count() == 4 and ds.users__pets.arrow().num_rows == 2  # type: ignore[union-attr]
        assert sorted(ds.users.select("id", "region").fetchall()) == [(0, "us"), (1, "eu"), (2, "us"), (3, "eu")]
        assert ds("SELECT count(*) FROM users WHERE region = %s", "us").fetchall() == [(2,)]
        assert [len(rows) for rows in ds.users.iter_fetch(3)] == [3, 1]
        assert ds.row_counts(table_names=["users", "users__pets", "later"]) == [
            ("users", 4), ("users__pets", 2), ("later", 0)]


def test_plain_tables_are_still_listed(local: FilesystemConfiguration, bucket: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = bucket / DATASET / "events"
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"id": [1, 2]}), folder / "1.a.parquet")
    with sql_client(local) as client:
        assert not client.is_delta("events") and client.is_delta("users__pets")
        assert client.execute_sql("SELECT count(*) FROM events") == [(2,)]


def test_memory_bucket_refuses_delta_tables_only() -> None:
    from lakeload.errors import DestinationError

    with sql_client(FilesystemConfiguration(bucket_url="memory://lake")) as client:
        assert client.execute_sql("SELECT count(*) FROM events") == [(0,)]  # plain tables still work
        with pytest.raises(DestinationError, match=r"\(memory://\) cannot hold Delta tables"):
            client.execute_sql("SELECT count(*) FROM users")


# -- buckets --------------------------------------------------------------------------------------------


def test_s3_bucket(s3_server: Any, caplog: pytest.LogCaptureFixture) -> None:
    creds = Credentials(s3_server.credentials())
    config = FilesystemConfiguration(bucket_url=s3_server.url(fresh_prefix("delta-sql")), credentials=creds)
    caplog.set_level(logging.DEBUG)
    check_history_reads(config)
    with sql_client(config) as client:
        sql = client.view_sql("users")
        assert all(s not in sql for s in (s3_server.secret_key, s3_server.access_key, s3_server.endpoint_url))
        assert all(f.startswith(f"s3://{s3_server.bucket}/") for f in client.files_for("users"))
    assert s3_server.secret_key not in caplog.text


def test_azure_bucket(azure_server: Any, caplog: pytest.LogCaptureFixture) -> None:
    require_azurite_with_start_from()
    config = FilesystemConfiguration(bucket_url=azure_server.url(fresh_prefix("delta-sql")),
                                     credentials=Credentials(native=azure_server.connection_string))
    caplog.set_level(logging.DEBUG)
    check_history_reads(config)
    with sql_client(config, schema=delta_schema(), always_refresh_views=True) as client:
        write(config, "users", users(range(20, 21), nickname=True))
        assert client.execute_sql("SELECT count(*) FROM users") == [(4,)]
        assert azure_server.account_key not in client.view_sql("users")
    assert azure_server.account_key not in caplog.text

"""FilesystemSqlClient over dlt-written buckets (jsonl, parquet, csv): views, types, refresh, cursors, errors."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import DATASET, PETS_PER_USER, dlt_load, make_client, users

from lakeload.sql.client_base import to_duckdb_placeholders
from lakeload.sql.errors import SqlClientError, SqlQueryError, TableNotFoundError

EXPECTED_TYPES = {
    "id": "BIGINT",
    "name": "VARCHAR",
    "score": "DOUBLE",
    "active": "BOOLEAN",
    "created_at": "TIMESTAMP WITH TIME ZONE",
    "birthday": "DATE",
    "wake_up": "TIME",
    "balance": "DECIMAL(38,9)",
    "avatar": "BLOB",
    "meta": "JSON",
    "_dlt_load_id": "VARCHAR",
    "_dlt_id": "VARCHAR",
}


def test_view_columns_and_types(client_for, fmt):
    with client_for(fmt) as client:
        described = {row[0]: row[1] for row in client.execute_sql("DESCRIBE users")}
        assert described == EXPECTED_TYPES
        row = client.execute_sql(
            "SELECT id, name, score, active, created_at, birthday, wake_up, balance, avatar, meta FROM users WHERE id = 3"
        )[0]
    assert row[:4] == (3, "user 3", 0.75, False)
    assert row[4] == dt.datetime(2024, 1, 4, 12, 30, tzinfo=dt.timezone.utc)
    assert row[5:8] == (dt.date(1990, 4, 1), dt.time(7, 3), decimal.Decimal("13.25"))
    assert row[8] == b"\x00\x01img\x03"
    assert json.loads(row[9]) == {"level": 3, "tags": ["a", "b"]}


def test_view_sql_per_format(client_for, fmt):
    client = client_for(fmt)
    sql = client.view_sql("users")
    reader = {"jsonl": "read_json(", "parquet": "read_parquet(", "csv": "read_csv("}[fmt]
    assert sql.count(reader) == 1 and "*" not in sql  # the listed files, never a glob
    assert sql.count(f"/{DATASET}/users/") == 1 and "users__pets" not in sql
    if fmt == "jsonl":
        assert "format='newline_delimited'" in sql and "from_base64(\"avatar\")" in sql and "'created_at': 'TIMESTAMP WITH TIME ZONE'" in sql
    elif fmt == "csv":
        assert "union_by_name=true" in sql and "header=true" in sql and "'balance': 'DECIMAL(38,9)'" in sql
    else:
        assert "union_by_name=true" in sql and 'CAST("meta" AS JSON)' in sql


def test_views_are_lazy(client_for):
    with client_for("parquet") as client:
        assert client.execute_sql("SELECT table_schema, table_name FROM information_schema.tables") == []
        assert client.execute_sql("SELECT count(*) FROM users") == [(8,)]
        assert client.execute_sql("SELECT table_schema, table_name FROM information_schema.tables") == [(DATASET, "users")]
        client.execute_sql(f"SELECT count(*) FROM {DATASET}.users__pets")
        tables = client.execute_sql("SELECT table_name FROM information_schema.tables ORDER BY 1")
        assert tables == [("users",), ("users__pets",)]


def test_qualified_quoted_and_case_insensitive_names(client_for):
    with client_for("jsonl") as client:
        assert client.execute_sql(f'SELECT count(*) FROM "{DATASET}"."users"') == [(8,)]
        assert client.execute_sql("SELECT count(*) FROM USERS") == [(8,)]
        assert client.execute_sql("WITH u AS (SELECT * FROM users) SELECT count(*) FROM u") == [(8,)]
        assert client.execute_sql("SELECT count(*) FROM (SELECT id FROM users WHERE id IN (SELECT 1))") == [(1,)]


def test_join_parent_and_child(client_for, fmt):
    sql = (
        "SELECT u.id, count(p._dlt_id) FROM users u LEFT JOIN users__pets p ON p._dlt_parent_id = u._dlt_id "
        "GROUP BY u.id ORDER BY u.id"
    )
    with client_for(fmt) as client:
        assert client.execute_sql(sql) == list(enumerate(PETS_PER_USER))
        pets = client.execute_sql("SELECT name, kind, _dlt_list_idx FROM users__pets ORDER BY name")
    assert len(pets) == 12 and pets[0] == ("pet 0.0", "dog", 0)


def test_dlt_tables(client_for, fmt):
    with client_for(fmt) as client:
        loads = client.execute_sql("SELECT load_id, schema_name, status, inserted_at FROM _dlt_loads")
        assert len(loads) == 1
        load_id, schema_name, status, inserted_at = loads[0]
        assert (schema_name, status) == ("sqlp", 0) and isinstance(inserted_at, dt.datetime)
        assert client.execute_sql("SELECT DISTINCT _dlt_load_id FROM users") == [(load_id,)]
        version = client.execute_sql("SELECT schema_name, version, schema FROM _dlt_version")
        assert version[0][0] == "sqlp" and "users__pets" in json.loads(version[0][2])["tables"]
        assert client.execute_sql("SELECT pipeline_name FROM _dlt_pipeline_state") == [("sqlp",)]


def test_placeholders(client_for):
    assert to_duckdb_placeholders("a = %s AND b LIKE '%s%%' AND c LIKE 'x%%' AND d = %s") == (
        "a = ? AND b LIKE '%s%%' AND c LIKE 'x%%' AND d = ?"
    )
    with client_for("jsonl") as client:
        rows = client.execute_sql("SELECT id FROM users WHERE id >= %s AND name <> %s ORDER BY id", 5, "user 6")
        assert rows == [(5,), (7,)]
        assert client.execute_sql("SELECT '%s' AS lit, %s AS v", 1) == [("%s", 1)]
        assert client.execute_sql("SELECT count(*) FROM users WHERE name LIKE 'user %'") == [(8,)]


def test_cursor_methods(client_for):
    sql = "SELECT id, name FROM users ORDER BY id"
    with client_for("parquet") as client:
        with client.execute_query(sql) as cursor:
            assert [d[0] for d in cursor.description] == ["id", "name"]
            assert cursor.fetchone() == (0, "user 0")
            assert cursor.fetchmany(2) == [(1, "user 1"), (2, "user 2")]
            assert cursor.fetchall() == [(i, f"user {i}") for i in range(3, 8)]
            assert cursor.fetchone() is None and cursor.fetchall() == []
        with client.execute_query(sql) as cursor:
            assert len(cursor.fetchmany()) == 8
        with client.execute_query(sql) as cursor:
            frame = cursor.df()
            assert list(frame.columns) == ["id", "name"] and frame["id"].tolist() == list(range(8))
        with client.execute_query(sql) as cursor:
            table = cursor.arrow()
            assert isinstance(table, pa.Table) and table.num_rows == 8 and table.schema.field("id").type == pa.int64()
        with client.execute_query(sql) as cursor:
            assert cursor.df(chunk_size=3)["id"].tolist() == [0, 1, 2]
            assert cursor.arrow(chunk_size=3).column("id").to_pylist() == [3, 4, 5]
            assert cursor.arrow(chunk_size=3).num_rows == 2
            assert cursor.arrow(chunk_size=3) is None and cursor.df(chunk_size=3) is None
        with client.execute_query(sql) as cursor:
            chunks = list(cursor.iter_fetch(3))
            assert [len(c) for c in chunks] == [3, 3, 2] and chunks[2] == [(6, "user 6"), (7, "user 7")]
        with client.execute_query(sql) as cursor:
            assert [len(f) for f in cursor.iter_df(5)] == [5, 3]
        with client.execute_query(sql) as cursor:
            assert cursor.fetchone() == (0, "user 0")
            tables = list(cursor.iter_arrow(4))  # the rest of the same stream
            assert [t.num_rows for t in tables] == [4, 3]
        with client.execute_query("SELECT * FROM users WHERE false") as cursor:
            assert cursor.fetchall() == [] and cursor.arrow().num_rows == 0
        with client.execute_query("SELECT * FROM users WHERE false") as cursor:
            assert list(cursor.iter_arrow(2)) == [] and cursor.df().empty


def test_iter_arrow_streams_in_batches(tmp_path: Path):
    bucket, pipelines = tmp_path / "b", tmp_path / "p"
    dlt_load(bucket, pipelines, [{"n": i} for i in range(5000)], "parquet", table="numbers")
    with make_client(bucket) as client, client.execute_query("SELECT n FROM numbers") as cursor:
        sizes = []
        for table in cursor.iter_arrow(1000):
            sizes.append(table.num_rows)
            assert table.num_rows <= 1000
        assert sum(sizes) == 5000 and len(sizes) == math.ceil(5000 / 1000)


def test_snapshot_vs_always_refresh(tmp_path: Path, fmt: str):
    bucket, pipelines = tmp_path / "b", tmp_path / "p"
    dlt_load(bucket, pipelines, users(0, 8), fmt)
    with make_client(bucket) as snapshot, make_client(bucket, always_refresh_views=True) as fresh:
        assert snapshot.execute_sql("SELECT count(*) FROM users") == [(8,)]
        assert fresh.execute_sql("SELECT count(*) FROM users") == [(8,)]
        dlt_load(bucket, pipelines, users(8, 4), fmt)
        assert snapshot.execute_sql("SELECT count(*) FROM users") == [(8,)]  # file list taken at view creation
        assert fresh.execute_sql("SELECT count(*) FROM users") == [(12,)]
        assert fresh.execute_sql("SELECT count(*) FROM _dlt_loads") == [(2,)]
        # a view created after the second load sees it, even in the snapshot client
        assert snapshot.execute_sql("SELECT count(*) FROM _dlt_loads") == [(2,)]
    with make_client(bucket) as reopened:
        assert reopened.execute_sql("SELECT count(*) FROM users") == [(12,)]


def test_mixed_formats_in_one_table(tmp_path: Path):
    bucket, pipelines = tmp_path / "b", tmp_path / "p"
    dlt_load(bucket, pipelines, users(0, 4), "jsonl")
    dlt_load(bucket, pipelines, users(4, 4), "parquet")
    dlt_load(bucket, pipelines, users(8, 2), "csv")
    with make_client(bucket) as client:
        assert " UNION ALL " in client.view_sql("users")
        rows = client.execute_sql("SELECT id, balance, avatar FROM users ORDER BY id")
    assert [r[0] for r in rows] == list(range(10))
    assert rows[9] == (9, decimal.Decimal("19.25"), b"\x00\x01img\x09")


def test_evolving_columns_csv_and_parquet(tmp_path: Path, fmt: str):
    bucket, pipelines = tmp_path / "b", tmp_path / "p"
    dlt_load(bucket, pipelines, [{"id": 1}], fmt, table="t")
    dlt_load(bucket, pipelines, [{"id": 2, "extra": "x"}], fmt, table="t")
    with make_client(bucket) as client:
        assert client.execute_sql("SELECT id, extra FROM t ORDER BY id") == [(1, None), (2, "x")]


def test_layout_prefix_listing(tmp_path: Path):
    layout = "{table_name}.{load_id}.{file_id}.{ext}"  # all tables in the dataset folder: filtered by prefix
    bucket, pipelines = tmp_path / "b", tmp_path / "p"
    dlt_load(bucket, pipelines, users(), "jsonl", layout=layout)
    with make_client(bucket, layout=layout) as client:
        assert client.execute_sql("SELECT count(*) FROM users") == [(8,)]
        assert client.execute_sql("SELECT count(*) FROM users__pets") == [(12,)]
        assert all("users__pets" not in f for f in client.table_files("users"))


def test_table_without_files_is_an_empty_view(dlt_buckets):
    from conftest import bucket_schema

    schema = bucket_schema(dlt_buckets["jsonl"])
    schema.update_table({"name": "later", "columns": {
        "id": {"name": "id", "data_type": "bigint", "nullable": True},
        "at": {"name": "at", "data_type": "timestamp", "nullable": True},
        "price": {"name": "price", "data_type": "decimal", "precision": 10, "scale": 2, "nullable": True},
    }})
    with make_client(dlt_buckets["jsonl"], schema=schema) as client:
        assert client.execute_sql("SELECT * FROM later") == []
        described = [(r[0], r[1]) for r in client.execute_sql("DESCRIBE later")]
    assert described == [("id", "BIGINT"), ("at", "TIMESTAMP WITH TIME ZONE"), ("price", "DECIMAL(10,2)")]


def test_errors(client_for):
    with client_for("jsonl") as client:
        with pytest.raises(TableNotFoundError, match="'nope' is not in dataset 'ds'.*users"):
            client.execute_sql(f"SELECT * FROM {DATASET}.nope")
        with pytest.raises(TableNotFoundError, match="nope"):
            client.execute_sql("SELECT * FROM nope")
        with pytest.raises(SqlQueryError, match="SELEC id FROM users") as info:
            client.execute_sql("SELEC id FROM users")
        assert info.value.sql == "SELEC id FROM users"
        with pytest.raises(SqlQueryError, match="no_such_column"):
            client.execute_sql("SELECT no_such_column FROM users")
        with pytest.raises(SqlClientError):
            client.view_sql("nope")
        client.execute_sql("CREATE TABLE scratch AS SELECT 1 AS a")  # in memory only, never in the bucket
        assert client.execute_sql("SELECT a FROM scratch") == [(1,)]


def test_binary_roundtrip_matches_files(client_for):
    with client_for("jsonl") as client:
        rows = client.execute_sql("SELECT id, avatar FROM users ORDER BY id")
    assert rows == [(i, b"\x00\x01img" + bytes([i])) for i in range(8)]
    assert base64.b64encode(rows[0][1]) == b"AAFpbWcA"


def test_memory_bucket_through_registered_fsspec(dlt_buckets):
    """A non-local bucket: DuckDB reads through the registered fsspec filesystem (no secrets in SQL)."""
    import fsspec
    from conftest import bucket_schema

    from lakeload.destinations.impl.filesystem.client import FilesystemClient
    from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
    from lakeload.kernel.filesystem.layout import Layout
    from lakeload.sql.client import FilesystemSqlClient

    memory = fsspec.filesystem("memory")
    source = dlt_buckets["parquet"]
    for path in source.rglob("*"):
        if path.is_file():
            memory.pipe_file(f"/sqlbucket/{path.relative_to(source).as_posix()}", path.read_bytes())
    config = FilesystemConfiguration(bucket_url="memory://sqlbucket")
    client = FilesystemSqlClient(FilesystemClient(config, DATASET), bucket_schema(source), Layout.parse())
    with client:
        assert client.view_sql("users").count("'memory:///sqlbucket/ds/users/") == 1
        assert client.execute_sql("SELECT count(*) FROM users") == [(8,)]
        assert client.execute_sql("SELECT count(*) FROM users__pets") == [(12,)]
    memory.rm("/sqlbucket", recursive=True)

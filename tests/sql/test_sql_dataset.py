"""Dataset and Relation over dlt-written buckets, and the Pipeline wiring (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from conftest import DATASET, PIPELINE, dlt_load, make_client, users

import lakeload
from lakeload.errors import LakeloadError
from lakeload.sql.dataset import Dataset, RowCounts
from lakeload.sql.errors import ColumnNotFoundError, TableNotFoundError


@pytest.fixture
def ds(dlt_buckets, fmt):
    dataset = Dataset(make_client(dlt_buckets[fmt]))
    yield dataset
    dataset.close()


def test_tables(ds):
    assert ds.tables == ["users", "users__pets", "_dlt_version", "_dlt_loads", "_dlt_pipeline_state"]


def test_table_relations(ds):
    frame = ds.users.df()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 8
    assert list(frame.columns)[:3] == ["meta", "id", "name"]  # dlt puts hinted columns first
    table = ds["users__pets"].arrow()
    assert isinstance(table, pa.Table) and table.num_rows == 12
    assert ds.users.select("id", "name").limit(2).query == f'SELECT "id", "name" FROM "{DATASET}"."users" LIMIT 2'
    assert sorted(ds.users.select("id", "name").fetchall())[:2] == [(0, "user 0"), (1, "user 1")]
    assert len(ds.users.limit(3).fetchall()) == 3
    assert ds.users.row_count() == 8 and ds.users.limit(5).row_count() == 5
    assert ds.users.select("id").columns == ["id"]
    assert [len(c) for c in ds.users.iter_fetch(5)] == [5, 3]
    assert sum(t.num_rows for t in ds.users__pets.iter_arrow(5)) == 12
    assert ds._dlt_loads.row_count() == 1


def test_row_counts(ds):
    counts = ds.row_counts()
    assert isinstance(counts, RowCounts)
    assert counts == [("users", 8), ("users__pets", 12)]
    assert counts.df().to_dict("list") == {"table_name": ["users", "users__pets"], "row_count": [8, 12]}
    with_dlt = dict(ds.row_counts(dlt_tables=True))
    assert with_dlt["_dlt_loads"] == 1 and with_dlt["_dlt_version"] == 1
    load_id = ds("SELECT load_id FROM _dlt_loads").fetchone()[0]
    assert ds.row_counts(load_id=load_id) == [("users", 8)]  # only tables with _dlt_load_id
    assert ds.row_counts(table_names=["users__pets"]) == [("users__pets", 12)]


def test_sql_relation(ds):
    rel = ds(
        "SELECT u.name, count(*) AS pets FROM users u JOIN users__pets p ON p._dlt_parent_id = u._dlt_id "
        "WHERE u.id < %s GROUP BY u.name ORDER BY u.name", 3
    )
    assert rel.fetchall() == [("user 0", 3), ("user 2", 2)]
    assert rel.columns == ["name", "pets"]
    assert rel.df()["pets"].tolist() == [3, 2]
    assert rel.limit(1).fetchall() == [("user 0", 3)]
    assert rel.select("pets").fetchall() == [(3,), (2,)]
    assert rel.row_count() == 2


def test_unknown_tables(ds):
    with pytest.raises(TableNotFoundError, match="Available tables"):
        ds["nope"]
    with pytest.raises(TableNotFoundError):
        ds.nope  # noqa: B018
    with pytest.raises(ColumnNotFoundError, match=r"Columns \['no_such_column'\] are not in table 'users'") as missing:
        ds.users.select("no_such_column")
    assert isinstance(missing.value, KeyError) and isinstance(missing.value, LakeloadError)
    with pytest.raises(TableNotFoundError):
        ds.row_counts(table_names=["nope"])


def test_dataset_is_a_snapshot(tmp_path: Path):
    bucket, pipelines = tmp_path / "b", tmp_path / "p"
    dlt_load(bucket, pipelines, users(0, 8), "parquet")
    ds = Dataset(make_client(bucket))
    assert ds.users.row_count() == 8
    dlt_load(bucket, pipelines, users(8, 8), "parquet")
    assert ds.users.row_count() == 8
    assert Dataset(make_client(bucket)).users.row_count() == 16
    assert Dataset(make_client(bucket, always_refresh_views=True)).users.row_count() == 16


def test_pipeline_sql_client_and_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A lakeload pipeline attached to a dlt-written bucket restores the schema from it and queries it."""
    bucket, pipelines = tmp_path / "b", tmp_path / "p"
    dlt_load(bucket, pipelines, users(), "jsonl")
    pipeline = lakeload.pipeline(
        PIPELINE, destination=lakeload.destinations.filesystem(str(bucket)), dataset_name=DATASET,
        pipelines_dir=str(tmp_path / "lakeload_pipelines"),
    )
    with pipeline.sql_client() as client, client.execute_query("SELECT count(*) FROM users WHERE id > %s", 3) as cursor:
        assert cursor.fetchall() == [(4,)]
    ds = pipeline.dataset()
    assert ds.row_counts() == [("users", 8), ("users__pets", 12)]
    assert pipeline.dataset(schema=PIPELINE).users.row_count() == 8
    monkeypatch.setenv("DESTINATION__FILESYSTEM__ALWAYS_REFRESH_VIEWS", "true")
    assert pipeline.sql_client().always_refresh_views is True

"""A dataset named as its database file (`pipeline_name="bench"`, `dataset_name="bench"`: `bench.duckdb` holding the
schema `bench`) loads and reads: DuckDB cannot tell the schema from the file's catalog there ("Ambiguous reference to
catalog or schema"), which stops dlt 1.31's own DuckDB destination; lakeload attaches the file under another
catalog name (`lakeload.destinations.impl.duckdb.connect`)."""

from __future__ import annotations

from pathlib import Path

import dlt
import duckdb
import pytest

import lakeload
from lakeload.destinations.impl.duckdb.connect import connect

pytestmark = [pytest.mark.usefixtures("spark")]
EVENTS = [{"id": 1, "name": "a", "tags": ["x", "y"]}, {"id": 2, "name": "b", "tags": ["z"]}]



def test_a_dataset_named_as_its_database_file_loads(in_tmp: Path) -> None:
    pipeline = lakeload.pipeline("bench", destination="duckdb", dataset_name="bench", pipelines_dir=str(in_tmp / "p"))
    pipeline.run(lakeload.resource(EVENTS, name="events", primary_key="id", write_disposition="merge"))
    pipeline.run(lakeload.resource([{"id": 2, "name": "b2", "tags": []}], name="events", primary_key="id",
                                   write_disposition="merge"))
    with duckdb.connect(str(in_tmp / "bench.duckdb"), read_only=True) as db:  # (the file as any reader opens it)
        assert db.execute("SELECT id, name FROM bench.bench.events ORDER BY id").fetchall() == [(1, "a"), (2, "b2")]
        assert db.execute("SELECT count(*) FROM bench.bench.events__tags").fetchone() == (2,)
        assert db.execute("SELECT count(*) FROM bench.bench._dlt_loads").fetchone() == (2,)
    assert pipeline.dataset().events.order_by("id").select("name").fetchall() == [("a",), ("b2",)]
    with pipeline.sql_client() as client:
        assert client.execute_sql("SELECT count(*) FROM events") == [(2,)]


def test_dlt_stops_there(in_tmp: Path) -> None:
    """The limitation removed: dlt 1.31 fails the same load with DuckDB's ambiguity."""
    pipeline = dlt.pipeline("bench", destination="duckdb", dataset_name="bench", pipelines_dir=str(in_tmp / "p"))
    with pytest.raises(Exception, match="Ambiguous reference to catalog or schema"):
        pipeline.run(EVENTS, table_name="events")


def test_other_names_open_the_file_as_duckdb_names_it(tmp_path: Path) -> None:
    path = str(tmp_path / "warehouse.duckdb")
    with connect(path, schemas=("mydata",)) as db:
        assert db.execute("SELECT current_database()").fetchone() == ("warehouse",)
    with connect(path, schemas=("Warehouse",)) as db:
        assert db.execute("SELECT current_database()").fetchone() == ("warehouse_db",)
    with connect(path, read_only=True, schemas=("warehouse",)) as db, pytest.raises(duckdb.Error, match="read-only"):
        db.execute("CREATE TABLE t (x INT)")

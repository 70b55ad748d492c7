"""Loading into a DuckDB table not created by lakeload (seed 003's "existing tables not created by dlt"): a column
whose type cannot take the loaded values is refused with a `ColumnTypeConflictError` naming the table, the column,
both types and the fix; nothing lands and the package loads once the table is fixed. Types DuckDB can cast into
load as they are, and the table's own columns stay."""

from __future__ import annotations

from pathlib import Path

import dlt
import duckdb
import pytest

import lakeload
from lakeload.errors import ColumnTypeConflictError, LakeloadError

pytestmark = [pytest.mark.usefixtures("spark")]



def _existing_table(path: Path, id_type: str) -> None:
    with duckdb.connect(str(path)) as db:
        db.execute(f"CREATE SCHEMA mydata; CREATE TABLE mydata.users (id {id_type}, name VARCHAR, legacy VARCHAR DEFAULT 'x')")
        db.execute("INSERT INTO mydata.users (id, name) VALUES (0, 'old')")


def _rows(path: Path) -> list[tuple[object, ...]]:
    with duckdb.connect(str(path), read_only=True) as db:
        return sorted(db.execute("SELECT id, name, legacy FROM mydata.users").fetchall(), key=repr)


def test_a_conflicting_column_is_named_and_nothing_is_lost(in_tmp: Path) -> None:
    _existing_table(in_tmp / "conflict.duckdb", "BIGINT")
    pipeline = lakeload.pipeline("conflict", destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / "p"))
    with pytest.raises(ColumnTypeConflictError) as failed:
        pipeline.run([{"id": "u-1", "name": "Alice"}], table_name="users")
    error = failed.value
    assert isinstance(error, LakeloadError) and not isinstance(error, duckdb.Error)
    assert (error.table, error.conflicts) == ("users", [("id", "BIGINT", "VARCHAR")])
    assert "Cannot load table 'users': 'id' is BIGINT in the table, the load has VARCHAR" in str(error)
    assert "Fix: change the column's type" in str(error)
    assert _rows(in_tmp / "conflict.duckdb") == [(0, "old", "x")]  # the package's transaction left nothing
    assert pipeline.list_normalized_load_packages()  # the package waits
    with duckdb.connect(str(in_tmp / "conflict.duckdb")) as db:
        db.execute("ALTER TABLE mydata.users ALTER COLUMN id TYPE VARCHAR")
    pipeline.load()
    assert _rows(in_tmp / "conflict.duckdb") == [("0", "old", "x"), ("u-1", "Alice", "x")]
    assert not pipeline.list_normalized_load_packages()


def test_dlt_refuses_it_too(in_tmp: Path) -> None:
    _existing_table(in_tmp / "conflict_dlt.duckdb", "BIGINT")
    pipeline = dlt.pipeline("conflict_dlt", destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / "p"))
    with pytest.raises(Exception, match="NOT NULL constraint failed: users._dlt_load_id"):  # (its columns, NOT NULL)
        pipeline.run([{"id": "u-1", "name": "Alice"}], table_name="users")
    assert _rows(in_tmp / "conflict_dlt.duckdb") == [(0, "old", "x")]


def test_a_type_duckdb_casts_into_loads(in_tmp: Path) -> None:
    _existing_table(in_tmp / "castable.duckdb", "VARCHAR")
    pipeline = lakeload.pipeline("castable", destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / "p"))
    pipeline.run([{"id": 7, "name": "Bob"}], table_name="users")
    assert _rows(in_tmp / "castable.duckdb") == [("0", "old", "x"), ("7", "Bob", "x")]

"""`replace` strategies and the staging dataset of the DuckDB destination beside dlt 1.31's: `truncate-and-insert`
(the default) and `insert-from-staging` (`[destination] replace_strategy`), merges loading through
`<dataset>_staging`, and `[load] truncate_staging_dataset`: the same rows and the same tables left in both files
(the staging schema with its `_dlt_version` and tables, emptied or holding the last load's rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dlt
import duckdb
import pytest

import lakeload
from lakeload.errors import ConfigurationError

pytestmark = [pytest.mark.usefixtures("spark")]


def loads(lib: Any) -> list[Any]:
    snapshots = ([{"k": 1, "xs": [1, 2]}, {"k": 2}], [{"k": 3, "xs": [3]}])
    merges = ([{"id": 1, "v": 1, "ys": [1]}], [{"id": 1, "v": 2, "ys": [2]}, {"id": 2, "v": 1}])
    return [lib.resource(rows, name="snap", write_disposition="replace") for rows in snapshots] + [
        lib.resource(rows, name="m", primary_key="id", write_disposition="merge") for rows in merges]


def tables(path: Path) -> list[tuple[Any, ...]]:
    """(schema, table, rows, columns) of every table of the database but `_dlt_loads`' and `_dlt_version`'s rows."""
    with duckdb.connect(str(path), read_only=True) as db:
        found = db.execute("SELECT table_schema, table_name, list(column_name ORDER BY ordinal_position) FROM "
                           "information_schema.columns WHERE table_schema LIKE 'mydata%' GROUP BY 1, 2 ORDER BY 1, 2").fetchall()
        return [(s, t, db.execute(f'SELECT count(*) FROM "{s}"."{t}"').fetchone()[0] if t != "_dlt_version" else None,  # type: ignore[index]
                 tuple(c)) for s, t, c in found]


def data(path: Path) -> list[list[tuple[Any, ...]]]:
    with duckdb.connect(str(path), read_only=True) as db:
        return [sorted(db.execute(sql).fetchall()) for sql in (
            "SELECT k FROM mydata.snap", "SELECT value FROM mydata.snap__xs", "SELECT id, v FROM mydata.m",
            "SELECT m.id, y.value FROM mydata.m__ys y JOIN mydata.m ON y._dlt_parent_id = m._dlt_id")]


@pytest.mark.parametrize(("strategy", "truncate"), [
    ("truncate-and-insert", "false"),
    ("insert-from-staging", "false"),
    ("insert-from-staging", "true"),
])
def test_replace_strategies_and_the_staging_dataset_as_dlt(strategy: str, truncate: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__REPLACE_STRATEGY", strategy)
    monkeypatch.setenv("LOAD__TRUNCATE_STAGING_DATASET", truncate)
    for lib, name in ((lakeload, "ours"), (dlt, "theirs")):
        p = lib.pipeline(pipeline_name=name, destination=lib.destinations.duckdb(str(tmp_path / f"{name}.duckdb")),
                         dataset_name="mydata", pipelines_dir=str(tmp_path / f"p_{name}"))
        for resource in loads(lib):
            p.run(resource)
    ours, theirs = tables(tmp_path / "ours.duckdb"), tables(tmp_path / "theirs.duckdb")
    assert ours == theirs
    assert any(t[0] == "mydata_staging" for t in ours)  # (the merges load through it whatever the replace strategy)
    assert data(tmp_path / "ours.duckdb") == data(tmp_path / "theirs.duckdb") == [
        [(3,)], [(3,)], [(1, 2), (2, 1)], [(1, 2)]]


def test_a_replace_strategy_duckdb_lacks_fails_the_load_naming_the_ones_it_has(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """dlt fails the load too (an AssertionError); lakeload names the strategies, the package stays pending and
    loads once the setting is fixed. A factory argument takes the strategy as dlt's factory does."""
    monkeypatch.setenv("DESTINATION__DUCKDB__REPLACE_STRATEGY", "staging-optimized")
    p = lakeload.pipeline("so", destination=lakeload.destinations.duckdb(str(tmp_path / "so.duckdb")), dataset_name="mydata",
                          pipelines_dir=str(tmp_path / "p"))
    with pytest.raises(ConfigurationError, match="'staging-optimized'.*truncate-and-insert, insert-from-staging"):
        p.run(lakeload.resource([{"k": 1}], name="snap", write_disposition="replace"))
    assert p.list_normalized_load_packages()
    p = lakeload.pipeline("so", destination=lakeload.destinations.duckdb(str(tmp_path / "so.duckdb"),
                                                                         replace_strategy="insert-from-staging"),
                          dataset_name="mydata", pipelines_dir=str(tmp_path / "p"))
    p.load()
    with duckdb.connect(str(tmp_path / "so.duckdb"), read_only=True) as db:
        assert db.execute("SELECT k FROM mydata.snap").fetchall() == [(1,)]
        assert db.execute("SELECT k FROM mydata_staging.snap").fetchall() == [(1,)]

"""dlt 1.31's relation API on `pipeline.dataset()`: where/filter, order_by, limit/head, column selection, max/min,
join, from_loads, on a filesystem bucket (Parquet files, Delta and Iceberg tables, read by DuckDB views) and on the
DuckDB destination. The data is loaded once per module by dlt (no Spark); lakeload pipelines of the same names
attach to it. Every chain of `relation_cases.CHAINS` has its result written out below (as dlt 1.31 gives it:
`test_matches_dlt` runs the chains with dlt itself, in a process with the older sqlglot and DuckDB it needs)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlglot
from harness import isolated_dlt_config
from relation_cases import DATASET, KINDS, load, run_chains
from sqlglot import exp

import lakeload
from lakeload.errors import LakeloadError, MissingDependencyError
from lakeload.sql.dataset import Dataset
from lakeload.sql.errors import ColumnNotFoundError, InvalidArgumentError, TableNotFoundError

EXPECTED: dict[str, Any] = {
    "where_in": [[1, "Alice"], [3, "O'Hara"]],
    "where_not_in": [[2], [4]],
    "where_ops": [[[2]], [[1], [3], [4]], [[3], [4]], [[1]], [[2], [3], [4]], [[1], [2]]],
    "filter": [["Alice"], ["Dana"]],
    "where_sql": [["Alice"], ["Bob"]],
    "where_sqlglot": [["Dana"]],
    "where_quote": [[3]],
    "where_timestamp": [[2], [3], [4]],
    "order_two_keys": [[2], [1], [4], [3]],
    "limit_then_select": [[1, "Alice"], [2, "Bob"]],
    "select_then_limit": [[1, "Alice"], [2, "Bob"]],
    "head": 4,
    "brackets": [[1, "Alice"], [2, "Bob"], [3, "O'Hara"], [4, "Dana"]],
    "bracket_one": [["Alice"], ["Bob"], ["Dana"], ["O'Hara"]],
    "limit_then_where": [[2], [3]],
    "select_columns": ["name", "id"],
    "max": 4,
    "min": 0.5,
    "max_where": 1.5,
    "join_child": [["Alice", 101, 42], ["Alice", 102, 14], ["Bob", 103, 20], ["Dana", 104, 7]],
    "join_columns": ["id", "name", "city", "score", "joined", "_dlt_load_id", "_dlt_id", "orders__order_id",
                     "orders__total", "orders___dlt_parent_id", "orders___dlt_list_idx", "orders___dlt_id"],
    "join_left": [[1, 101], [1, 102], [2, 103], [3, None], [4, 104]],
    "join_parent": [[101, "Alice"], [102, "Alice"], [103, "Bob"], [104, "Dana"]],
    "join_grandparent": [["a", "Alice"], ["b", "Alice"], ["c", "Bob"]],
    "join_grandchild": [["Alice", "a"], ["Alice", "b"], ["Bob", "c"]],
    "join_references": [[1, "Alice"], [2, "Bob"], [3, "Alice"]],
    "join_on": [["Bob", 1], ["Alice", 2], ["Alice", 5]],
    "join_on_relation": [["Alice", 2], ["Alice", 5]],
    "join_then_where": [["Bob", 20], ["Alice", 42]],
    "where_then_join": [[101], [102]],
    "two_joins": [[101, 1], [101, 3], [102, 1], [102, 3], [103, 2]],
    "sql_join_on": [[1, "Alice"], [2, "Bob"], [3, "Alice"]],
    "join_max": 42,
    "sql_then_where": [[3, "O'Hara"], [4, "Dana"]],
    "from_loads": [[101], [102], [103], [104]],
    "table_load_ids": 4,
    "iter_arrow": [2, 1],
    "fetchmany": [[1], [2]],
    "fetchone": [4],
    "df": {"id": [1, 2, 3, 4], "name": ["Alice", "Bob", "O'Hara", "Dana"]},
    "ibis_join": [["Alice", 2], ["Alice", 5]],
    "ibis_isin": [["Alice"], ["Bob"], ["Dana"]],
    "ibis_limit_offset": [[2], [3]],
    "ibis_mutate": [[10], [20], [30], [40]],
    "ibis_timestamp": [[3], [4]],
    "ibis_of_relation": [[3], [4]],
    "ibis_aggregate": [[42]],
}
# sqlglot and DuckDB as dlt 1.31's typed relations need them (dlt's own bug with sqlglot 30 and DuckDB 2)
# (the pins and the cached folder of tests/compat's dlt overlay: one copy serves both)
ORACLE_PINS = ("sqlglot==27.29.0", "duckdb==1.4.2")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each kind loaded once by dlt 1.31: the lakeload destination that reads it, by kind."""
    import dlt

    root = tmp_path_factory.mktemp("relations")
    destinations: dict[str, Any] = {}
    with isolated_dlt_config(root / "_dlt_home"):
        for kind in KINDS:
            target: Any
            if kind == "duckdb":
                target = dlt.destinations.duckdb(str(root / "relations.duckdb"))
                destinations[kind] = lakeload.destinations.duckdb(str(root / "relations.duckdb"))
            else:
                target = dlt.destinations.filesystem("file://" + str(root / kind))
                destinations[kind] = lakeload.destinations.filesystem(str(root / kind))
            load(dlt, target, kind, root / "dlt_pipelines")
    return destinations


@pytest.fixture(params=KINDS)
def ds(request: pytest.FixtureRequest, loaded: dict[str, Any], tmp_path: Path) -> Iterator[Dataset]:
    kind = request.param
    pipeline = lakeload.pipeline(f"rel_{kind}", destination=loaded[kind], dataset_name=DATASET,
                                 pipelines_dir=str(tmp_path / "pipelines"))
    dataset = pipeline.dataset()
    yield dataset
    dataset.close()


def test_chains(ds: Dataset) -> None:
    assert run_chains(ds) == EXPECTED


def test_nothing_runs_until_rows_are_fetched(ds: Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    statements: list[str] = []
    run = ds.sql_client.execute_query

    def counted(sql: str, *args: Any) -> Any:
        statements.append(sql)
        return run(sql, *args)

    monkeypatch.setattr(ds.sql_client, "execute_query", counted)
    rel = (ds.users.join("users__orders", alias="o").where("o__total", "gt", 10).where("name", "ne", "O'Hara")
           .order_by("o__total", "desc").select("name", "o__total").limit(2))
    assert rel.columns == ["name", "o__total"] and rel.columns_schema["o__total"]["data_type"] == "bigint"
    assert statements == []  # building, columns and their types: no query
    assert rel.fetchall() == [("Alice", 42), ("Bob", 20)]
    assert len(statements) == 1  # one query does the join, filters, sort and limit in DuckDB
    sql = statements[0]
    assert "JOIN" in sql and "WHERE" in sql and "LIMIT 2" in sql and "'O''Hara'" in sql  # a sqlglot literal
    assert ds.users.where("name", "eq", "x' OR '1'='1").fetchall() == []  # a value is never SQL


def test_column_validation(ds: Dataset) -> None:
    with pytest.raises(ColumnNotFoundError) as missing:
        ds.table("users").select("id", "nmae")
    message = str(missing.value)
    assert "['nmae']" in message and "'users'" in message and "'name'" in message and "Fix" in message
    assert isinstance(missing.value, LakeloadError) and isinstance(missing.value, KeyError)
    for bad in (lambda: ds.users[["nope"]], lambda: ds.users["nope"], lambda: ds.users.where("nope", "eq", 1),
                lambda: ds.users.order_by("nope"), lambda: ds.users.join("users__orders").select("orders__total")):
        with pytest.raises(ColumnNotFoundError):
            bad()
    with pytest.raises(TableNotFoundError):
        ds.users.join("nope")


def test_argument_errors(ds: Dataset) -> None:
    users = ds.users
    cases = [
        (lambda: users.order_by("id", "up"), "sort order"),
        (lambda: users.where("id", "like", 1), "Unknown filter operator"),
        (lambda: users.join("users__orders", kind="cross"), "Unknown join kind"),
        (lambda: users.join("users"), "itself"),
        (lambda: ds.purchases.join("users__orders"), "no reference"),
        (lambda: users.select("id", "name").max(), "exactly one column"),
        (lambda: users.select("id").fetchscalar(), "one row"),
        (lambda: ds("SELECT 1 AS x").join("users"), "pass `on=`"),
        (lambda: users.where("id >"), "Cannot parse"),
    ]
    for action, text in cases:
        with pytest.raises(InvalidArgumentError, match=text) as error:
            action()
        assert isinstance(error.value, ValueError) and isinstance(error.value, LakeloadError)


def test_null_filters_and_typed_values(ds: Dataset) -> None:
    """`eq`/`ne` with None are IS (NOT) NULL (dlt compares `= CAST(NULL ...)`, which matches no row)."""
    assert ds.users.where("city", "eq", None).select("id").fetchall() == [(3,)]
    assert ds.users.where("city", "ne", None).select("id").order_by("id").fetchall() == [(1,), (2,), (4,)]
    assert ds.users.where("score", "gte", 1.5).select("id").order_by("id").fetchall() == [(1,), (2,)]
    assert ds.users.where("id", "in", (4,)).where("city", "eq", "berlin").select("name").fetchall() == [("Dana",)]
    assert ds.users.where("id", "in", 2).select("name").fetchall() == [("Bob",)]


def test_schema_sql_and_loads(ds: Dataset) -> None:
    joined = ds.users.join("users__orders", alias="o")
    assert joined.schema == {"columns": joined.columns_schema}
    assert joined.columns_schema["o__order_id"] == {**ds.schema.get_table_columns("users__orders")["order_id"],
                                                    "name": "o__order_id"}
    assert ds.users.select("id").max().columns == ["max(id)"]  # (as DuckDB names it)
    assert ds.users.select("id").max().columns_schema["max(id)"]["data_type"] == "bigint"
    assert isinstance(ds.users.where("id", "gt", 1).sqlglot_expression, exp.Select)
    assert ds.users.select("id").where("id", "gt", 1).to_sql() == \
        f'SELECT "id" FROM "{DATASET}"."users" WHERE "id" > CAST(1 AS BIGINT)'
    assert "\n" in joined.to_sql(pretty=True)
    load_ids = ds.load_ids()
    assert len(load_ids) == 1 and ds.latest_load_id() == load_ids[0]
    assert ds.loads_table().row_count() == 1
    assert ds.table("users", load_ids=["0.0"]).fetchall() == []
    assert ds.users__orders.from_loads(load_ids, add_load_id_column=True).columns[-1] == "_dlt_load_id"
    assert ds.users.with_load_id_col().columns == ds.users.columns


def test_sql_relations(ds: Dataset) -> None:
    rel = ds("SELECT id, name FROM users WHERE id > %s", 1)
    assert rel.where("id", "lt", 4).order_by("id").fetchall() == [(2, "Bob"), (3, "O'Hara")]
    assert rel.order_by("id").limit(1).select("name").fetchall() == [("Bob",)]
    assert rel.select("id").max().fetchscalar() == 4 and rel.row_count() == 3
    assert "%s" in rel.where("id", "lt", 4).to_sql()
    assert rel["name"].columns == ["name"]
    assert rel.join("purchases", on="users.id = purchases.user_id").select("purchases__quantity").fetchall() == [(1,)]
    assert sorted(ds(sqlglot.select("purchase_id").from_("purchases").where("quantity > 1")).fetchall()) == [(1,), (3,)]
    assert ds("SELECT user_id FROM purchases").order_by("user_id", "desc").fetchone() == (2,)
    assert ds(sqlglot.select("user_id").from_("purchases")).where("user_id", "eq", 2).fetchall() == [(2,)]
    # dlt's second argument: the query's dialect
    assert ds("SELECT `id` FROM users WHERE `name` = 'Bob'", "bigquery").fetchall() == [(2,)]
    assert ds.query("SELECT MAX(id) FROM users", query_dialect="duckdb").fetchscalar() == 4


def test_ibis_errors(ds: Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relation with query values cannot become an Ibis table; without Ibis, the error says how to install it."""
    with pytest.raises(InvalidArgumentError, match="without query parameters"):
        ds("SELECT id FROM users WHERE id > %s", 1).to_ibis()
    assert "Relation query:" in str(ds.users.select("id")) and "  id bigint" in str(ds.users.select("id"))
    monkeypatch.setitem(sys.modules, "ibis", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "lakeload\[ibis\]"'):
        ds.users.to_ibis()


# -- dlt 1.31 as the oracle -----------------------------------------------------------------------------
def dlt_overlay() -> Path:
    """A folder with the sqlglot and DuckDB that dlt 1.31's relations need, built once into the user's cache
    (skips the test when pip cannot install them)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lakeload-tests"
    folder = cache / ("dlt-overlay-" + "-".join(pin.replace("==", "") for pin in ORACLE_PINS))
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "dlt-overlay.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".complete").exists():
            building = folder.with_name(folder.name + ".building")
            shutil.rmtree(building, ignore_errors=True)
            done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check",
                                   "--target", str(building), *ORACLE_PINS], capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                pytest.skip(f"cannot install {ORACLE_PINS} for dlt 1.31's relations: {done.stderr[-500:]}")
            shutil.rmtree(folder, ignore_errors=True)
            building.rename(folder)
            (folder / ".complete").touch()
    return folder


@pytest.fixture(scope="module")
def dlt_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The chains run by dlt 1.31 on its own DuckDB destination, in a process of its own."""
    overlay = dlt_overlay()
    folder = tmp_path_factory.mktemp("dlt_oracle")
    out = folder / "results.json"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(folder), "PYTHONPATH": str(overlay)}
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("relation_cases.py")), str(out), str(folder)],
                          env=env, cwd=folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(out.read_text()))


def test_matches_dlt(ds: Dataset, dlt_results: dict[str, Any]) -> None:
    assert dlt_results == EXPECTED
    assert run_chains(ds) == dlt_results

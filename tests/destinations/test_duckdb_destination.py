"""The DuckDB destination (`destination="duckdb"`, `lakeload.destinations.duckdb(...)`) beside dlt 1.31's own, from
the same loads: the same tables and column types, the same rows (data columns; nested rows by their root's key) for
append, replace and merge (`delete-insert` with nested tables, `dedup_sort`, `hard_delete`, `merge_key`; `upsert`;
`insert-only`), dlt's system tables, and the state shared both ways: dlt continues a database lakeload wrote and
lakeload one dlt wrote (incremental cursors restored from `_dlt_pipeline_state`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import dlt
import duckdb
import pytest

import lakeload
from lakeload.errors import DatabaseUnavailableError, PipelineStepFailed

pytestmark = [pytest.mark.usefixtures("spark")]
SYSTEM = ("_dlt_loads", "_dlt_version", "_dlt_pipeline_state")



def columns(path: Path, dataset: str = "mydata") -> dict[str, list[tuple[str, str, str]]]:
    with duckdb.connect(str(path), read_only=True) as db:
        rows = db.execute("SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
                          "WHERE table_schema = ? ORDER BY table_name, ordinal_position", [dataset]).fetchall()
    found: dict[str, list[tuple[str, str, str]]] = {}
    for table, column, kind, nullable in rows:
        found.setdefault(table, []).append((column, kind, nullable))
    return found


def rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(path), read_only=True) as db:
        db.execute("SET search_path = 'mydata'")
        return sorted(db.execute(sql).fetchall(), key=repr)


EVENTS = [
    {"id": 1, "name": "a", "at": "2026-01-01T00:00:00Z", "price": "1.50", "tags": ["x", "y"], "meta": {"k": 1}},
    {"id": 2, "name": "b", "at": "2026-01-02T00:00:00Z", "price": "2.25", "tags": [], "meta": {"k": 2}},
]


def test_a_run_builds_the_tables_dlt_builds(in_tmp: Path) -> None:
    """Seed 003's quick start as written (`destination='duckdb'`), with lakeload and with dlt: the same tables, column
    types and nullability, and the same rows."""
    for lib, name in ((lakeload, "ours"), (dlt, "theirs")):
        p = lib.pipeline(pipeline_name=name, destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / f"p_{name}"))
        p.run(EVENTS, table_name="events")
        p.run([{"id": 3, "name": "c", "extra": True}], table_name="events")
    ours, theirs = columns(in_tmp / "ours.duckdb"), columns(in_tmp / "theirs.duckdb")
    assert ours == theirs
    assert set(SYSTEM) <= set(ours)
    data = 'SELECT id, name, "at", price, meta__k, extra FROM events'
    assert rows(in_tmp / "ours.duckdb", data) == rows(in_tmp / "theirs.duckdb", data)
    nested = "SELECT e.id, t.value, t._dlt_list_idx FROM events__tags t JOIN events e ON t._dlt_parent_id = e._dlt_id"
    assert rows(in_tmp / "ours.duckdb", nested) == rows(in_tmp / "theirs.duckdb", nested)
    loads = "SELECT schema_name, status FROM _dlt_loads"
    assert [r[1] for r in rows(in_tmp / "ours.duckdb", loads)] == [0, 0]
    versions = "SELECT version, engine_version, schema_name, version_hash FROM _dlt_version"
    assert len(rows(in_tmp / "ours.duckdb", versions)) == len(rows(in_tmp / "theirs.duckdb", versions))
    p = lakeload.pipeline("ours", destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / "p_ours"))
    with p.sql_client() as client:
        assert client.execute_sql("SELECT count(*) FROM events WHERE id > %s", 1) == [(2,)]
    assert p.dataset().events.df()["id"].tolist() == [1, 2, 3] or sorted(p.dataset().events.df()["id"].tolist()) == [1, 2, 3]


def merge_loads() -> list[list[dict[str, Any]]]:
    first = [{"id": i, "region": "eu" if i % 2 else "us", "v": 1, "ts": 1, "pets": [f"p{i}.{k}" for k in range(i % 3)]}
             for i in range(6)]
    second = [{"id": 1, "region": "eu", "v": 2, "ts": 5, "pets": ["new"]}, {"id": 1, "region": "eu", "v": 3, "ts": 2},
              {"id": 2, "region": "us", "v": 2, "ts": 1, "deleted": True}, {"id": 9, "region": "eu", "v": 2, "ts": 1}]
    third = [{"id": 4, "region": "us", "v": 3, "ts": 9, "pets": ["a", "b"]}]
    return [first, second, third]


@pytest.mark.parametrize("strategy", ["delete-insert", "upsert", "insert-only"])
def test_merges_leave_the_rows_dlt_leaves(strategy: str, in_tmp: Path) -> None:
    for lib, name in ((lakeload, "ours"), (dlt, "theirs")):
        p = lib.pipeline(pipeline_name=name, destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / f"p_{name}"))
        for load in merge_loads():
            resource = lib.resource(load, name="users", primary_key="id",
                                    write_disposition={"disposition": "merge", "strategy": strategy},
                                    columns={"ts": {"dedup_sort": "desc"}, "deleted": {"hard_delete": True, "data_type": "bool"}})
            p.run(resource)
    roots = "SELECT id, region, v, ts FROM users"
    assert rows(in_tmp / "ours.duckdb", roots) == rows(in_tmp / "theirs.duckdb", roots)
    # dlt's ids: `_dlt_root_id` in the nested table, a key hash as the root's row id where dlt gives one
    assert columns(in_tmp / "ours.duckdb")["users__pets"] == columns(in_tmp / "theirs.duckdb")["users__pets"]
    if strategy != "delete-insert":
        ids = "SELECT id, _dlt_id FROM users"
        assert rows(in_tmp / "ours.duckdb", ids) == rows(in_tmp / "theirs.duckdb", ids)
    by_root = "SELECT u.id, p.value FROM users__pets p JOIN users u ON p._dlt_root_id = u._dlt_id"
    if strategy != "insert-only":
        assert rows(in_tmp / "ours.duckdb", by_root) == rows(in_tmp / "theirs.duckdb", by_root)
    nested = "SELECT u.id, p.value FROM users__pets p LEFT JOIN users u ON p._dlt_parent_id = u._dlt_id"
    ours, theirs = rows(in_tmp / "ours.duckdb", nested), rows(in_tmp / "theirs.duckdb", nested)
    if strategy != "insert-only":
        assert ours == theirs
    else:  # deliberate: dlt also adds the nested rows of a record it did not insert below the stored record
        assert set(ours) <= set(theirs) and {v for _, v in set(theirs) - set(ours)} <= {"a", "b", "new"}
        assert (4, "p4.0") in ours and (4, "a") not in ours


def test_a_merge_key_and_replace_as_dlt(in_tmp: Path) -> None:
    for lib, name in ((lakeload, "ours"), (dlt, "theirs")):
        p = lib.pipeline(pipeline_name=name, destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / f"p_{name}"))
        for day_rows in ([{"day": d, "n": n, "items": [n, n + 1]} for d in ("a", "b") for n in range(3)],
                         [{"day": "b", "n": 7, "items": [7]}]):
            p.run(lib.resource(day_rows, name="daily", merge_key="day", write_disposition="merge"))
        for snap_rows in ([{"k": 1, "xs": [1, 2]}, {"k": 2}], [{"k": 3, "xs": [3]}]):
            p.run(lib.resource(snap_rows, name="snap", write_disposition="replace"))
    for sql in ("SELECT day, n FROM daily", "SELECT d.day, i.value FROM daily__items i JOIN daily d ON i._dlt_parent_id = d._dlt_id",
                "SELECT k FROM snap", "SELECT value FROM snap__xs"):
        assert rows(in_tmp / "ours.duckdb", sql) == rows(in_tmp / "theirs.duckdb", sql), sql


def incremental(lib: Any, start: int, stop: int) -> Any:
    @lib.resource(name="numbers", primary_key="n", write_disposition="append")
    def numbers(n: Any = lib.sources.incremental("n")) -> Any:  # noqa: B008 - the API, as in dlt
        yield from ({"n": i} for i in range(start, stop))

    return numbers


@pytest.mark.parametrize("first", ["lakeload", "dlt"])
def test_each_tool_continues_a_database_the_other_wrote(first: str, in_tmp: Path) -> None:
    """Fresh working folders: the second tool restores the state from `_dlt_pipeline_state` and loads only new rows."""
    libs = (lakeload, dlt) if first == "lakeload" else (dlt, lakeload)
    credentials = str(in_tmp / "shared.duckdb")
    for step, lib in enumerate(libs):
        p = lib.pipeline(pipeline_name="shared", destination=lib.destinations.duckdb(credentials), dataset_name="mydata",
                         pipelines_dir=str(in_tmp / f"p{step}"))
        p.run(incremental(lib, 0, 5 + 5 * step))
    assert rows(in_tmp / "shared.duckdb", "SELECT n FROM numbers") == [(i,) for i in range(10)]
    states = rows(in_tmp / "shared.duckdb", "SELECT pipeline_name, version FROM _dlt_pipeline_state")
    assert len(states) == 2 and {s[0] for s in states} == {"shared"}


def test_a_database_another_process_holds_fails_the_load_and_loses_nothing(in_tmp: Path) -> None:
    path = in_tmp / "locked.duckdb"
    duckdb.connect(str(path)).close()
    p = lakeload.pipeline("locked", destination=lakeload.destinations.duckdb(str(path)), dataset_name="mydata",
                          pipelines_dir=str(in_tmp / "p"))
    p.extract([{"id": 1}], table_name="t")
    p.normalize()
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(60)", str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(DatabaseUnavailableError, match="locked.duckdb: another process .PID \\d+. holds it.*one process.*Fix:"):
            p.load()
        assert p.list_normalized_load_packages()  # the package stays, whole
    finally:
        holder.kill()
        holder.wait()
    p.run([{"id": 2}], table_name="t")  # the pending package first, then the new one
    assert rows(path, "SELECT id FROM t") == [(1,), (2,)]


def test_credentials_as_dlt_takes_them(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lakeload.pipeline("p1", destination=lakeload.destinations.duckdb(f"duckdb:///{in_tmp}/url.duckdb"), dataset_name="d",
                      pipelines_dir=str(in_tmp / "a")).run([{"x": 1}], table_name="t")
    assert (in_tmp / "url.duckdb").exists()
    connection = duckdb.connect(":memory:")
    lakeload.pipeline("p2", destination=lakeload.destinations.duckdb(connection), dataset_name="d",
                      pipelines_dir=str(in_tmp / "b")).run([{"x": 2}], table_name="t")
    assert connection.execute("SELECT x FROM d.t").fetchall() == [(2,)]
    monkeypatch.setenv("DESTINATION__WAREHOUSE__DESTINATION_TYPE", "duckdb")
    monkeypatch.setenv("DESTINATION__WAREHOUSE__CREDENTIALS", str(in_tmp / "named.duckdb"))
    lakeload.pipeline("p3", destination="warehouse", dataset_name="d", pipelines_dir=str(in_tmp / "c")).run([{"x": 3}], table_name="t")
    with duckdb.connect(str(in_tmp / "named.duckdb"), read_only=True) as db:
        assert db.execute("SELECT x FROM d.t").fetchall() == [(3,)]


def test_seed_003s_snippets_as_written(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The DuckDB snippets of the destinations page (seed 003) with `import lakeload as dlt`: capabilities overridden
    by the factory (a `duck_case` naming that keeps names as given), a named destination whose type is configured,
    the SQL client's cursor, and loading into a table that was not created by dlt (its own columns stay)."""
    duck_ = lakeload.destinations.duckdb(naming_convention="duck_case", recommended_file_size=120000)
    capabilities = dict(duck_.capabilities())
    assert capabilities["naming_convention"] == "duck_case" and capabilities["recommended_file_size"] == 120000
    p = lakeload.pipeline(pipeline_name="nc", destination=duck_, dataset_name="mydata")
    p.run([{"UserId": 1, "Full Name": "A"}], table_name="Users")
    assert columns(in_tmp / "nc.duckdb")["Users"][:2] == [("UserId", "BIGINT", "YES"), ("Full Name", "VARCHAR", "YES")]

    monkeypatch.setenv("DESTINATION__MY_DESTINATION__DESTINATION_TYPE", "duckdb")
    named = lakeload.pipeline(pipeline_name="my_pipeline", destination="my_destination", dataset_name="dataset_name")
    named.run([{"reactions": {"hooray": 3, "laugh": 1}}], table_name="issues")
    with named.sql_client() as client, client.execute_query("SELECT reactions__hooray, reactions__laugh FROM issues") as cursor:
        assert cursor.df().sum(0).tolist() == [3, 1]

    with duckdb.connect(str(in_tmp / "quick_start.duckdb")) as db:
        db.execute("CREATE SCHEMA mydata; CREATE TABLE mydata.users (id BIGINT, name VARCHAR, legacy VARCHAR DEFAULT 'x')")
        db.execute("INSERT INTO mydata.users (id, name) VALUES (0, 'old')")

    @lakeload.resource
    def users() -> Any:
        yield [{"id": 1, "name": "Alice"}, {"id": 2, "name": "Bob"}]

    pipeline = lakeload.pipeline(pipeline_name="quick_start", destination="duckdb", dataset_name="mydata")
    pipeline.run(users)
    assert rows(in_tmp / "quick_start.duckdb", "SELECT id, name, legacy, _dlt_load_id IS NULL FROM users") == [
        (0, "old", "x", True), (1, "Alice", "x", False), (2, "Bob", "x", False)]


@pytest.mark.parametrize("bucket_kind", ["local", pytest.param("s3", marks=pytest.mark.slow)], indirect=True)
def test_staging_filesystem_loads_from_the_bucket(in_tmp: Path, bucket_kind: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`staging="filesystem"` (the bucket from configuration, as in dlt) or a filesystem destination: the Parquet files
    go to `<dataset>/<table>/<load_id>.<n>.parquet` in the bucket and DuckDB loads them from there (a remote bucket
    through lakeload's fsspec filesystem of it)."""
    import fsspec

    for name, value in bucket_kind.env.items():
        monkeypatch.setenv(name, value)
    p = lakeload.pipeline("staged", destination="duckdb", staging="filesystem", dataset_name="mydata",
                          pipelines_dir=str(in_tmp / "p"))
    info = p.run([{"id": 1, "tags": ["a", "b"]}, {"id": 2}], table_name="items")
    load_id = info.loads_ids[0]
    assert rows(in_tmp / "staged.duckdb", "SELECT id FROM items") == [(1,), (2,)]
    assert rows(in_tmp / "staged.duckdb", "SELECT value FROM items__tags") == [("a",), ("b",)]
    fs, root = fsspec.core.url_to_fs(bucket_kind.url, **({"key": bucket_kind.credentials["aws_access_key_id"],
                                                           "secret": bucket_kind.credentials["aws_secret_access_key"],
                                                           "client_kwargs": {"endpoint_url": bucket_kind.credentials["endpoint_url"]}}
                                                          if bucket_kind.credentials else {}))
    staged = sorted(path.rsplit("/", 2)[-2] + "/" + path.rsplit("/", 1)[-1] for path in fs.find(f"{root}/mydata"))
    assert [s.split("/")[0] for s in staged] == ["items", "items__tags"]
    assert all(s.split("/")[1].startswith(f"{load_id}.") and s.endswith(".parquet") for s in staged)
    with pytest.raises(lakeload.errors.ConfigurationError, match="staging= is for a database destination"):
        lakeload.pipeline("bad", destination=bucket_kind.destination(), staging="filesystem")


def test_the_dashboard_and_the_cli_read_the_database(in_tmp: Path) -> None:
    """The dashboard's data layer and `lakeload pipeline ... info` find the database the pipeline last loaded to."""
    from lakeload.dashboard.data import PipelineView

    p = lakeload.pipeline("dash", destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / "p"))
    p.run([{"id": 1, "tags": ["a", "b"]}], table_name="users")
    view = PipelineView.open("dash", str(in_tmp / "p"))
    assert view.bucket_url() == str(in_tmp / "dash.duckdb")
    assert view.query("SELECT count(*) FROM users__tags")[1] == [(2,)]
    assert [r["rows"] for r in view.rows_per_load()] == [1] and len(view.load_history()) == 1
    shown = subprocess.run([sys.executable, "-m", "lakeload.cli", "pipeline", "dash", "info", "--pipelines-dir", str(in_tmp / "p")],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and f"duckdb 'duckdb' at {in_tmp / 'dash.duckdb'}" in shown.stdout, shown.stdout + shown.stderr


def test_a_merge_strategy_duckdb_lacks_is_refused_at_extract(in_tmp: Path) -> None:
    """As dlt refuses it: at `run()`'s extract, before any package is made, so nothing stays pending. (The DuckDB
    destination has every strategy of dlt's: one without scd2 is made with the factory's capability override.)"""
    without_scd2 = lakeload.destinations.duckdb(supported_merge_strategies=("delete-insert", "upsert", "insert-only"))
    p = lakeload.pipeline("scd", destination=without_scd2, dataset_name="mydata", pipelines_dir=str(in_tmp / "p"))
    history = lakeload.resource([{"id": 1}], name="history", write_disposition={"disposition": "merge", "strategy": "scd2"})
    with pytest.raises(PipelineStepFailed, match="'scd2' merge strategy is not supported by this destination.*'delete-insert'"):
        p.run(history)
    assert not p.list_extracted_load_packages() and not p.list_normalized_load_packages()
    p.run([{"id": 2}], table_name="other")  # the next run is not blocked
    assert rows(in_tmp / "scd.duckdb", "SELECT id FROM other") == [(2,)]


def test_a_big_package_is_loaded_by_a_child_process(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above `CHILD_BYTES` of files a package is loaded by a child process (DuckDB's buffers out of the driver): the
    same transaction, the same rows; a failure there (a database another process holds) is a named error, the
    package stays pending and loads next time."""
    import lakeload.load.duckdb_loader as loader

    monkeypatch.setattr(loader, "CHILD_BYTES", 0)
    started: list[list[str]] = []
    real_run = subprocess.run

    def spy(args: Any, *rest: Any, **kwargs: Any) -> Any:
        if "lakeload.load.duckdb_loader" in list(args):
            started.append(list(args))
        return real_run(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "run", spy)
    p = lakeload.pipeline("child", destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / "p"))
    for load in merge_loads():
        p.run(lakeload.resource(load, name="users", primary_key="id", write_disposition="merge",
                                columns={"ts": {"dedup_sort": "desc"}, "deleted": {"hard_delete": True, "data_type": "bool"}}))
    assert len(started) == 3
    assert rows(in_tmp / "child.duckdb", "SELECT id, v FROM users") == [(0, 1), (1, 2), (3, 1), (4, 3), (5, 1), (9, 2)]
    p.extract([{"id": 7}], table_name="later")
    p.normalize()
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(60)", str(in_tmp / "child.duckdb")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(DatabaseUnavailableError, match="child.duckdb.*one process"):
            p.load()
    finally:
        holder.kill()
        holder.wait()
    p.load()
    assert rows(in_tmp / "child.duckdb", "SELECT id FROM later") == [(7,)]


def test_a_replace_table_is_emptied_only_by_a_run_of_its_own_resource(in_tmp: Path) -> None:
    """A run of another resource leaves a `replace` table as it is; its own resource yielding nothing does what dlt
    does to it."""
    for lib, name in ((lakeload, "ours"), (dlt, "theirs")):
        p = lib.pipeline(pipeline_name=name, destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / f"p_{name}"))

        def snapshot(items: list[dict[str, Any]], lib: Any = lib) -> Any:
            return lib.resource(items, name="snapshot", write_disposition="replace")

        def events(items: list[dict[str, Any]], lib: Any = lib) -> Any:
            return lib.resource(items, name="events", write_disposition="append")

        p.run([snapshot([{"k": 1, "xs": [1]}]), events([{"e": 1}])])
        p.run(events([{"e": 2}]))
        assert rows(in_tmp / f"{name}.duckdb", "SELECT k FROM snapshot") == [(1,)], name
        p.run(snapshot([]))
    for sql in ("SELECT k FROM snapshot", "SELECT value FROM snapshot__xs", "SELECT e FROM events"):
        assert rows(in_tmp / "ours.duckdb", sql) == rows(in_tmp / "theirs.duckdb", sql), sql


def test_a_merge_into_a_table_whose_name_needs_quoting(in_tmp: Path) -> None:
    """`duck_case` keeps names as given: a merge into "My Users" (its temporary tables named safely)."""
    p = lakeload.pipeline("quoted", destination=lakeload.destinations.duckdb(naming_convention="duck_case"),
                          dataset_name="mydata", pipelines_dir=str(in_tmp / "p"))
    for rows_in in ([{"User Id": 1, "v": 1, "Pets": ["a"]}], [{"User Id": 1, "v": 2, "Pets": ["b", "c"]}]):
        p.run(lakeload.resource(rows_in, name="My Users", primary_key="User Id", write_disposition="merge"))
    assert rows(in_tmp / "quoted.duckdb", 'SELECT "User Id", v FROM "My Users"') == [(1, 2)]
    assert rows(in_tmp / "quoted.duckdb", 'SELECT value FROM "My Users__Pets"') == [("b",), ("c",)]

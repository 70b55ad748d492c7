"""The `scd2` and `cdc` merge strategies of the DuckDB destination beside dlt 1.31's own DuckDB destination, from the
same loads in the same test: every table of the dataset and of its staging dataset with the same columns (names,
types, nullability from `information_schema`) and the same rows. Row hashes (`_dlt_id` of scd2 roots, the nested
ids derived from them, cdc's key hashes) must be equal; load ids are compared by their order, and so are validity
timestamps when no `boundary_timestamp` fixes them.

scd2: records retired by absence and changed, a record coming back (its nested rows kept), nested lists,
`merge_key`-scoped retirement, `boundary_timestamp`, custom `validity_column_names` with an
`active_record_timestamp`, `row_version_column_name`, a `source_filter`. cdc: inserts, updates, `hard_delete` and
deletions by absence across loads, scoped by a `merge_key` or a `destination_scope`, with a `source_filter`; a
`source_filter` of `delete-insert` and `upsert`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import dlt
import duckdb
import pytest

import lakeload

pytestmark = [pytest.mark.usefixtures("spark")]
DATASETS = ("mydata", "mydata_staging")


def run_both(tmp_path: Path, resources: Callable[[Any], list[Any]]) -> tuple[Path, Path]:
    """The same resources (`resources(lib)`, one run each) loaded by lakeload and by dlt into their own files."""
    for lib, name in ((lakeload, "ours"), (dlt, "theirs")):
        p = lib.pipeline(pipeline_name=name, destination=lib.destinations.duckdb(str(tmp_path / f"{name}.duckdb")),
                         dataset_name="mydata", pipelines_dir=str(tmp_path / f"p_{name}"))
        for resource in resources(lib):
            p.run(resource)
    return tmp_path / "ours.duckdb", tmp_path / "theirs.duckdb"


def columns(path: Path) -> dict[tuple[str, str], list[tuple[str, str, str]]]:
    with duckdb.connect(str(path), read_only=True) as db:
        found = db.execute(
            "SELECT table_schema, table_name, column_name, data_type, is_nullable FROM information_schema.columns "
            "WHERE table_schema IN (?, ?) ORDER BY table_schema, table_name, ordinal_position", list(DATASETS)).fetchall()
    tables: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for schema, table, column, kind, nullable in found:
        tables.setdefault((schema, table), []).append((column, kind, nullable))
    return tables


def ranked(values: list[Any]) -> dict[Any, int]:
    """Each distinct value's place in order (None first): values that differ between the tools, compared by order."""
    ordered = sorted({v for v in values if v is not None})
    return {None: -1, **{v: i for i, v in enumerate(ordered)}}


def table_rows(path: Path, table: str, by_order: tuple[str, ...] = (), skip: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
    """The rows of `mydata.<table>`, sorted, without the `skip` columns; `_dlt_load_id` and the `by_order` columns
    as their values' order."""
    with duckdb.connect(str(path), read_only=True) as db:
        cursor = db.execute(f'SELECT * FROM mydata."{table}"')
        names = [d[0] for d in cursor.description]
        found = cursor.fetchall()
    keep = [i for i, n in enumerate(names) if n not in skip]
    ranks = {i: ranked([r[i] for r in found]) for i, n in enumerate(names) if n == "_dlt_load_id" or n in by_order}
    return sorted((tuple(ranks[i][r[i]] if i in ranks else r[i] for i in keep) for r in found), key=repr)


def assert_same(ours: Path, theirs: Path, by_order: tuple[str, ...] = (), skip: tuple[str, ...] = ()) -> dict[str, list[Any]]:
    """Every table's columns and rows equal in both files; returns lakeload's rows by table."""
    assert columns(ours) == columns(theirs)
    found = {}
    for schema, table in columns(ours):
        if schema != "mydata" or table.startswith("_dlt_"):
            continue
        mine = table_rows(ours, table, by_order, skip)
        assert mine == table_rows(theirs, table, by_order, skip), table
        found[table] = mine
    return found


def scd2(lib: Any, rows: list[dict[str, Any]], **options: Any) -> Any:
    return lib.resource(rows, name="users", write_disposition={"disposition": "merge", "strategy": "scd2", **options})


LOADS: list[list[dict[str, Any]]] = [
    [{"id": 1, "name": "a", "tags": ["x", "y"]}, {"id": 2, "name": "b", "tags": []}, {"id": 3, "name": "c", "tags": ["z"]}],
    [{"id": 1, "name": "a2", "tags": ["x"]}, {"id": 2, "name": "b"}],  # 1 changes, 2 loses its list, 3 is absent
    [{"id": 1, "name": "a2", "tags": ["x"]}, {"id": 2, "name": "b"}, {"id": 3, "name": "c", "tags": ["z"]}],  # 3 is back
    [{"id": 1, "name": "a", "tags": ["x", "y"]}],  # 1 back to its first version; 2 and 3 retired
]


def test_scd2_across_loads_with_nested_lists_as_dlt(tmp_path: Path) -> None:
    """Retired by change and by absence, records coming back (new active rows, same row hash, the nested rows
    kept, not inserted twice), at the boundary each load gives."""
    ours, theirs = run_both(tmp_path, lambda lib: [
        scd2(lib, rows, boundary_timestamp=f"2024-01-0{n + 1}T00:00:00+00:00") for n, rows in enumerate(LOADS)])
    found = assert_same(ours, theirs)
    users = table_rows(ours, "users", skip=("_dlt_load_id", "_dlt_id"))
    assert len(users) == 7 and sum(1 for u in users if u[1] is None) == 1  # (from, to, id, name): only 1 active
    assert len(found["users__tags"]) == 4  # x, y (a), x (a2), z: the returning versions added none


def test_scd2_at_the_packages_creation_time_as_dlt(tmp_path: Path) -> None:
    """Without `boundary_timestamp` the boundary is the package's creation time (compared by order)."""
    ours, theirs = run_both(tmp_path, lambda lib: [scd2(lib, rows) for rows in LOADS[:3]])
    assert_same(ours, theirs, by_order=("_dlt_valid_from", "_dlt_valid_to"))
    with duckdb.connect(str(ours), read_only=True) as db:
        created = db.execute("SELECT min(_dlt_valid_from), max(_dlt_valid_from) FROM mydata.users").fetchone()
        loads = db.execute("SELECT count(DISTINCT inserted_at) FROM mydata._dlt_loads").fetchone()
    assert created is not None and created[0] < created[1] and loads == (3,)


def test_scd2_retires_only_within_the_loaded_merge_keys_as_dlt(tmp_path: Path) -> None:
    first: list[dict[str, Any]] = [{"day": d, "n": n, "items": [n, n + 1]} for d in ("a", "b") for n in range(3)]
    second = [{"day": "b", "n": 0, "items": [0, 1]}, {"day": "b", "n": 7, "items": [7]}]  # day a is not loaded
    ours, theirs = run_both(tmp_path, lambda lib: [
        scd2(lib, rows, boundary_timestamp=f"2024-02-0{n + 1}").apply_hints(merge_key="day")
        for n, rows in enumerate((first, second))])
    found = assert_same(ours, theirs)
    retired = [r for r in found["users"] if r[1] is not None]  # (from, to, day, n, ...)
    assert sorted((r[2], r[3]) for r in retired) == [("b", 1), ("b", 2)]


def test_scd2_custom_validity_columns_and_active_record_timestamp_as_dlt(tmp_path: Path) -> None:
    options = {"validity_column_names": ["valid_from", "valid_until"], "active_record_timestamp": "9999-12-31"}
    ours, theirs = run_both(tmp_path, lambda lib: [
        scd2(lib, rows, boundary_timestamp=f"2024-03-0{n + 1}", **options) for n, rows in enumerate(LOADS)])
    assert_same(ours, theirs)
    with duckdb.connect(str(ours), read_only=True) as db:
        active = db.execute("SELECT id, name FROM mydata.users WHERE valid_until = TIMESTAMPTZ '9999-12-31 00:00:00+00'").fetchall()
    assert active == [(1, "a")]


def test_scd2_with_a_row_version_column_as_dlt(tmp_path: Path) -> None:
    """The user's version column identifies versions; `_dlt_id` (random, as dlt's) and the nested ids below it are
    left out of the comparison, the nested rows compared by their values."""
    loads = [[{**r, "version": f"{r['id']}-{r['name']}"} for r in rows] for rows in LOADS]
    ours, theirs = run_both(tmp_path, lambda lib: [
        scd2(lib, rows, boundary_timestamp=f"2024-04-0{n + 1}", row_version_column_name="version")
        for n, rows in enumerate(loads)])
    found = assert_same(ours, theirs, skip=("_dlt_id", "_dlt_parent_id"))
    assert sum(1 for r in found["users"] if r[1] is None) == 1


def test_scd2_with_a_source_filter_as_dlt(tmp_path: Path) -> None:
    """Only the loaded records the filter selects are versioned; the others count as absent."""
    ours, theirs = run_both(tmp_path, lambda lib: [
        scd2(lib, rows, boundary_timestamp=f"2024-05-0{n + 1}", source_filter="id <> 3") for n, rows in enumerate(LOADS)])
    found = assert_same(ours, theirs)
    assert all(r[2] != 3 for r in found["users"])


def cdc(lib: Any, rows: list[dict[str, Any]], merge_key: str | None, **options: Any) -> Any:
    return lib.resource(rows, name="users", primary_key="id", merge_key=merge_key,
                        write_disposition={"disposition": "merge", "strategy": "cdc", **options},
                        columns={"deleted": {"hard_delete": True, "data_type": "bool"}})


CDC_LOADS: list[list[dict[str, Any]]] = [  # regions: eu 1, 3, 5; us 2, 4, 6
    [{"id": i, "region": "eu" if i % 2 else "us", "v": 1, "pets": [f"p{i}.{k}" for k in range(i % 3)]} for i in range(1, 7)],
    [{"id": 1, "region": "eu", "v": 2, "pets": ["new"]}, {"id": 3, "region": "eu", "v": 1, "pets": ["p3.0"]},
     {"id": 5, "region": "eu", "v": 2, "deleted": True}, {"id": 9, "region": "eu", "v": 1, "pets": ["n"]}],
    [{"id": 9, "region": "eu", "v": 2}, {"id": 11, "region": "eu", "v": 1, "deleted": True}],
]


@pytest.mark.parametrize(("options", "left"), [
    ({}, [9]),
    ({"merge_key": "region"}, [2, 4, 6, 9]),
    ({"destination_scope": "{table}.region = 'eu'"}, [2, 4, 6, 9]),
    ({"source_filter": "v < 2"}, []),  # (a record the filter leaves out is absent)
], ids=["whole-table", "merge-key", "destination-scope", "source-filter"])
def test_cdc_inserts_updates_and_deletes_as_dlt(options: dict[str, Any], left: list[int], tmp_path: Path) -> None:
    """Updates, `hard_delete` (a deleted record arriving new is not inserted), and the stored records the load lacks
    deleted with their nested rows: every one, or those of the loaded merge keys, or those in the destination scope."""
    merge_key = options.get("merge_key")
    scope = {k: v for k, v in options.items() if k != "merge_key"}
    ours, theirs = run_both(tmp_path, lambda lib: [cdc(lib, rows, merge_key, **scope) for rows in CDC_LOADS])
    assert_same(ours, theirs)
    with duckdb.connect(str(ours), read_only=True) as db:
        assert [r[0] for r in db.execute("SELECT id FROM mydata.users ORDER BY id").fetchall()] == left
        orphans = db.execute("SELECT count(*) FROM mydata.users__pets WHERE _dlt_root_id NOT IN (SELECT _dlt_id FROM mydata.users)")
        assert orphans.fetchone() == (0,)


@pytest.mark.parametrize("strategy", ["delete-insert", "upsert"])
def test_a_source_filter_selects_the_merged_records_as_dlt(strategy: str, tmp_path: Path) -> None:
    ours, theirs = run_both(tmp_path, lambda lib: [
        lib.resource(rows, name="users", primary_key="id",
                     write_disposition={"disposition": "merge", "strategy": strategy, "source_filter": "region = 'eu'"})
        for rows in CDC_LOADS[:2]])
    random_ids = ("_dlt_id", "_dlt_parent_id", "_dlt_root_id") if strategy == "delete-insert" else ()  # (as dlt's)
    found = assert_same(ours, theirs, skip=random_ids)
    assert sorted(r[0] for r in found["users"]) == [1, 3, 5, 9]  # the us records never merged


def test_scd2_through_the_child_loader_takes_the_packages_creation_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A package loaded by the child process (`CHILD_BYTES`) has the same boundary: the package's creation time."""
    import lakeload.load.duckdb_loader as loader

    monkeypatch.setattr(loader, "CHILD_BYTES", 0)
    before = datetime.now(timezone.utc)
    p = lakeload.pipeline("child", destination=lakeload.destinations.duckdb(str(tmp_path / "c.duckdb")), dataset_name="mydata",
                          pipelines_dir=str(tmp_path / "p"))
    for rows in LOADS[:2]:
        p.run(scd2(lakeload, rows))
    with duckdb.connect(str(tmp_path / "c.duckdb"), read_only=True) as db:
        found = db.execute("SELECT DISTINCT _dlt_valid_from FROM mydata.users ORDER BY 1").fetchall()
        retired = db.execute("SELECT id FROM mydata.users WHERE _dlt_valid_to = ? ORDER BY id", [found[1][0]]).fetchall()
    assert len(found) == 2 and before - timedelta(seconds=1) < found[0][0] < found[1][0] <= datetime.now(timezone.utc)
    assert retired == [(1,), (2,), (3,)]

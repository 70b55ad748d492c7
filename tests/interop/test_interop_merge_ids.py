"""dlt 1.31 and lakeload give the rows of Delta `merge` tables the same `_dlt_id`s, so they can upsert one table in turn.

dlt upserts Delta tables of the filesystem destination: a root row's `_dlt_id` is a digest of its primary key,
a nested row's a digest of (parent id, table, list index). lakeload computes the same digests on every input
path: records through the Python normalizer (records with typed values such as datetimes), records through the
Arrow fast path (plain JSON), Arrow tables as items and Spark DataFrames (an Arrow UDF on the executors).
"""

from __future__ import annotations

import datetime as dt
import decimal
import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

pytestmark = pytest.mark.usefixtures("spark")
pytest.importorskip("deltalake")

DATASET = "shop"
ID_COLUMNS = ("_dlt_id", "_dlt_parent_id", "_dlt_root_id", "_dlt_list_idx")
FRAME_DDL = ("id bigint, name string, tags array<struct<t:string, notes:array<string>>>, scores array<bigint>, "
             "seen timestamp, price decimal(10,2)")


def _records(ids: range, version: int = 0) -> list[dict[str, Any]]:
    """Users with nested lists (the lengths depend on the id only, so later versions never shrink them)."""
    return [
        {"id": i, "name": f"nä{i}", "tags": [{"t": f"t{i}.{k}.v{version}", "notes": [f"n{version}"] * (1 + i % 2)} for k in range(1 + i % 3)],
         "scores": [i * 10 + version, version]}
        for i in ids
    ]


def _typed(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records with typed values (datetime, Decimal): lakeload normalizes them with the Python path."""
    seen = dt.datetime(2026, 3, 4, 5, 6, 7, 8000, tzinfo=dt.timezone.utc)
    return [{**r, "seen": seen + dt.timedelta(days=r["id"]), "price": decimal.Decimal(f"{r['id']}.50")} for r in records]


def _flat(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": r["id"], "name": r["name"], "score": r["scores"][0]} for r in records]


def _pipeline(lib: Any, root: Path, bucket: Path, name: str) -> Any:
    return lib.pipeline(name, destination=lib.destinations.filesystem(str(bucket)), pipelines_dir=str(root / name),
                        dataset_name=DATASET)


def _merge(lib: Any, data: Any, name: str, primary_key: Any) -> Any:
    return lib.resource(data, name=name, write_disposition="merge", primary_key=primary_key, table_format="delta")


def _tables(bucket: Path) -> dict[str, list[dict[str, Any]]]:
    """Every Delta table of the dataset, rows sorted, `_dlt_load_id` left out (each load has its own)."""
    from deltalake import DeltaTable

    out = {}
    for path in sorted(p for p in (bucket / DATASET).iterdir() if (p / "_delta_log").is_dir()):
        rows = pa.table(DeltaTable(str(path)).to_pyarrow_table()).to_pylist()
        out[path.name] = sorted(({k: v for k, v in r.items() if k != "_dlt_load_id"} for r in rows), key=repr)
    return out


def _jsonl_rows(bucket: Path, table: str) -> list[dict[str, Any]]:
    return [json.loads(line) for f in sorted((bucket / DATASET / table).glob("*.jsonl*"))
            for line in gzip.decompress(f.read_bytes()).splitlines() if line.strip()]


def _ids(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(({k: r[k] for k in ID_COLUMNS if k in r} for r in rows), key=repr)


def test_merge_ids_equal_dlts_for_records_arrow_items_and_frames(spark: Any, tmp_path: Path) -> None:
    import dlt

    import lakeload

    records = _records(range(8))
    typed, flat = _typed(records), _flat(records)
    _pipeline(dlt, tmp_path, tmp_path / "dlt", "ids").run([
        _merge(dlt, records, "plain", "id"),
        _merge(dlt, typed, "typed", ["id", "seen"]),
        _merge(dlt, flat, "flat", ["name", "id"]),  # dlt gives Arrow items no `_dlt_id`: the same rows as records
        _merge(dlt, typed, "framed", ["id", "seen", "price"]),
    ])
    ours = _pipeline(lakeload, tmp_path, tmp_path / "lakeload", "ids")
    ours.run([
        _merge(lakeload, records, "plain", "id"),  # plain JSON: the Arrow fast path
        _merge(lakeload, typed, "typed", ["id", "seen"]),  # typed values: the Python path
        _merge(lakeload, pa.Table.from_pylist(flat), "flat", ["name", "id"]),
        _merge(lakeload, spark.createDataFrame(typed, FRAME_DDL), "framed", ["id", "seen", "price"]),
    ])
    theirs, mine = _tables(tmp_path / "dlt"), _tables(tmp_path / "lakeload")
    expected = {"plain", "plain__tags", "plain__tags__notes", "plain__scores", "typed", "typed__tags",
                "typed__tags__notes", "typed__scores", "flat", "framed", "framed__tags", "framed__tags__notes", "framed__scores"}
    assert set(theirs) == set(mine) == expected
    for table in sorted(expected):
        assert len(mine[table]) == len(theirs[table]) > 0, table
        assert _ids(mine[table]) == _ids(theirs[table]), table
    assert len({r["_dlt_id"] for r in mine["plain__tags__notes"]}) == len(mine["plain__tags__notes"])
    for table in ("plain", "typed", "framed"):  # the data too, not only the ids
        assert [{k: v for k, v in r.items() if k != "price"} for r in mine[table]] == [
            {k: v for k, v in r.items() if k != "price"} for r in theirs[table]], table


def _check_tree(tables: dict[str, list[dict[str, Any]]], root: str) -> None:
    """No orphaned nested row: every parent and root id names a stored row."""
    ids = {name: {r["_dlt_id"] for r in rows} for name, rows in tables.items()}
    for name, rows in tables.items():
        if name == root:
            continue
        parent = name.rsplit("__", 1)[0]
        for row in rows:
            assert row["_dlt_parent_id"] in ids[parent], (name, row)
            assert row["_dlt_root_id"] in ids[root], (name, row)


@pytest.mark.slow
def test_alternating_dlt_and_lakeload_upserts_leave_the_latest_versions(spark: Any, tmp_path: Path) -> None:
    import dlt

    import lakeload

    loads = [_records(range(0, 6), 1), _records(range(2, 8), 2), _records(range(4, 10), 3), _records([1, 3, 5, 9], 4)]
    latest = {r["id"]: r for batch in loads for r in batch}

    def upserts(tools: list[Any], bucket: Path) -> dict[str, list[dict[str, Any]]]:
        for n, (lib, batch) in enumerate(zip(tools, loads, strict=True)):
            # each tool its own pipeline (and working folder): they share only the bucket, the dataset and the tables
            _pipeline(lib, tmp_path / f"{bucket.name}{n}", bucket, f"users_{lib.__name__}").run(_merge(lib, batch, "users", "id"))
        return _tables(bucket)

    mixed = upserts([dlt, lakeload, dlt, lakeload], tmp_path / "mixed")
    only_dlt = upserts([dlt, dlt, dlt, dlt], tmp_path / "only_dlt")
    assert mixed == only_dlt  # the same rows, the same ids: nothing orphaned, nothing missing
    assert sorted(r["id"] for r in mixed["users"]) == sorted(latest)
    assert {r["id"]: r["name"] for r in mixed["users"]} == {i: r["name"] for i, r in latest.items()}
    assert sorted(r["t"] for r in mixed["users__tags"]) == sorted(t["t"] for r in latest.values() for t in r["tags"])
    assert len(mixed["users__tags__notes"]) == sum(len(t["notes"]) for r in latest.values() for t in r["tags"])
    assert sorted(r["value"] for r in mixed["users__scores"]) == sorted(s for r in latest.values() for s in r["scores"])
    _check_tree(mixed, "users")


@pytest.mark.filterwarnings("ignore:Falling back to 'append'")
def test_other_tables_get_random_ids_and_a_root_key_only_where_dlt_gives_one(tmp_path: Path) -> None:
    """`append`, `replace` and a `merge` outside Delta (loaded as an append): random ids, as dlt's; only dlt's
    Delta merge tables (and `root_key=True` sources) get `_dlt_root_id`."""
    import dlt

    import lakeload

    records = _records(range(3))

    def load_twice(lib: Any) -> dict[str, Any]:
        bucket = tmp_path / lib.__name__ / "bucket"
        p = _pipeline(lib, tmp_path / lib.__name__, bucket, "random_ids")
        resources = [lib.resource(records, name=f"r_{d}", write_disposition=d, primary_key="id") for d in ("append", "replace", "merge")]
        p.run(resources)
        first = {r["_dlt_id"] for r in _jsonl_rows(bucket, "r_append")}
        p.run(resources)
        second = {r["_dlt_id"] for r in _jsonl_rows(bucket, "r_append")} - first
        nested = ("r_append__tags", "r_replace__tags", "r_merge__tags")
        return {
            "fresh_ids": len(second) == len(first) == len(records),  # the same records got new (random) ids
            "rows": {t: len(_jsonl_rows(bucket, t)) for t in ("r_append", "r_replace", "r_merge", *nested)},
            "root_key": {t: "_dlt_root_id" in p.default_schema.tables[t]["columns"] for t in nested},
        }

    theirs, ours = load_twice(dlt), load_twice(lakeload)
    assert ours == theirs
    assert ours["fresh_ids"] and not any(ours["root_key"].values())

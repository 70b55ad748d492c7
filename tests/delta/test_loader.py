"""Delta tables end to end on a real local Spark session: append, replace, merge (upsert), partitions."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

import lakeload
import lakeload.delta.merge as merge_module
import lakeload.delta.merge_files as merge_files_module
import lakeload.delta.merge_winners as winners_module
from lakeload.delta import get_delta_tables
from lakeload.errors import PipelineStepFailed

pytestmark = pytest.mark.usefixtures("spark")


def make_pipeline(bucket: Path, pipelines_dir: Path, name: str = "dp") -> lakeload.Pipeline:
    return lakeload.pipeline(
        name, destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds", pipelines_dir=str(pipelines_dir)
    )


def table(bucket: Path, name: str) -> DeltaTable:
    return DeltaTable(str(bucket / "ds" / name))


def rows(bucket: Path, name: str, *columns: str) -> list[tuple[Any, ...]]:
    data = table(bucket, name).to_pyarrow_table().to_pylist()
    return sorted(tuple(r[c] for c in columns) for r in data)


def upsert(name: str = "users", **hints: Any) -> Any:
    @lakeload.resource(
        name=name, write_disposition={"disposition": "merge", "strategy": hints.pop("strategy", "upsert")},
        table_format="delta", **hints,
    )
    def resource(data: list[dict[str, Any]]) -> Any:
        yield from data

    return resource


def test_append_adds_versions_and_evolves_schema(bucket: Path, pipelines_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    with caplog.at_level(logging.INFO, logger="lakeload.normalize"):
        p.run([{"id": 1, "tags": ["a", "b"]}], table_name="ev", table_format="delta", loader_file_format="jsonl")
    assert any("written as parquet" in r.getMessage() for r in caplog.records)
    p.run([{"id": 2, "score": 1.5, "tags": ["c"]}], table_name="ev", table_format="delta")
    ev = table(bucket, "ev")
    assert rows(bucket, "ev", "id", "score") == [(1, None), (2, 1.5)]
    assert rows(bucket, "ev__tags", "value") == [("a",), ("b",), ("c",)]
    assert [h["operation"] for h in reversed(ev.history())] == ["CREATE TABLE", "ADD COLUMN", "WRITE"]
    assert all(f.endswith(".parquet") for f in ev.file_uris())
    assert not list((bucket / "ds" / "ev").glob("*.jsonl*"))
    tables = get_delta_tables(p)
    assert set(tables) == {"ev", "ev__tags"} and tables["ev"].version() == ev.version()
    assert dict(p.dataset().row_counts()) ["ev"] == 2


def test_replace_is_one_version_per_load_and_empties_nested_tables(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    p.run([{"id": 1, "tags": ["a"]}, {"id": 2}], table_name="ev", table_format="delta", write_disposition="replace")
    p.run([{"id": 3}], table_name="ev", table_format="delta", write_disposition="replace")
    ev, tags = table(bucket, "ev"), table(bucket, "ev__tags")
    assert rows(bucket, "ev", "id") == [(3,)] and rows(bucket, "ev__tags", "value") == []
    assert ev.version() == 1 and tags.version() == 1  # replaced in one commit each: never empty in between
    ev.load_as_version(0)
    assert sorted(r["id"] for r in ev.to_pyarrow_table().to_pylist()) == [1, 2]  # history kept
    with p.sql_client() as client:
        assert client.execute_sql("SELECT id FROM ev") == [(3,)]
    p.run([], table_name="ev", table_format="delta", write_disposition="replace")  # no rows: the table is emptied
    assert rows(bucket, "ev", "id") == [] and table(bucket, "ev").version() == 2


def spark_removals(monkeypatch: pytest.MonkeyPatch) -> None:
    """Merges find their removals with the Spark plan (key join, broadcast ids), as for big packages, instead of
    in pyarrow tasks (`lakeload.kernel.delta.drops`)."""
    monkeypatch.setattr(merge_module, "DROP_TASK_ROWS", 0)


@pytest.mark.parametrize("removals", ["tasks", "spark"])
def test_upsert_removes_nested_rows_of_updated_records(
    bucket: Path, pipelines_dir: Path, monkeypatch: pytest.MonkeyPatch, removals: str
) -> None:
    """The seed's known limitation, removed: {"key": 1, "nested": [1, 2]} then [1] leaves one nested row."""
    if removals == "spark":
        spark_removals(monkeypatch)
    p = make_pipeline(bucket, pipelines_dir)
    users = upsert(primary_key="key")
    p.run(users([{"key": 1, "nested": [1, 2]}, {"key": 2, "nested": [5, 6]}]))
    p.run(users([{"key": 1, "nested": [1]}, {"key": 3, "nested": [7]}]))
    assert rows(bucket, "users", "key") == [(1,), (2,), (3,)]
    assert rows(bucket, "users__nested", "value") == [(1,), (5,), (6,), (7,)]
    roots = {r["key"]: r["_dlt_id"] for r in table(bucket, "users").to_pyarrow_table().to_pylist()}
    nested = table(bucket, "users__nested").to_pyarrow_table().to_pylist()
    assert {(r["value"], r["_dlt_root_id"]) for r in nested} == {(1, roots[1]), (5, roots[2]), (6, roots[2]), (7, roots[3])}
    assert all(r["_dlt_parent_id"] == r["_dlt_root_id"] for r in nested)
    # untouched record 2 kept its files' rows; record 1 now has no nested rows at all
    p.run(users([{"key": 1, "nested": []}]))
    assert rows(bucket, "users__nested", "value") == [(5,), (6,), (7,)]


@pytest.mark.parametrize("summary", ["task", "spark"])
def test_duplicates_in_a_load_keep_the_last_record_and_its_nested_rows(
    bucket: Path, pipelines_dir: Path, monkeypatch: pytest.MonkeyPatch, summary: str
) -> None:
    """Duplicates found by the one-task key summary of small packages, or by Spark's aggregation (big ones; their
    removals by the Spark plan too)."""
    monkeypatch.setenv("EXTRACT__FILE_MAX_BYTES", "200")  # many extracted files: duplicates cross Spark tasks
    if summary == "spark":
        monkeypatch.setattr(winners_module, "TASK_ROWS", 0)
        spark_removals(monkeypatch)
    p = make_pipeline(bucket, pipelines_dir)
    users = upsert(primary_key="key")
    data = [{"key": k % 4, "version": k, "nested": list(range(k % 3 + 1)), "pad": "x" * 50} for k in range(20)]
    p.run(users(data))
    more = [{"key": k, "version": 100 + i, "nested": [i], "pad": ""} for i, k in enumerate((3, 3, 7))]
    p.run(users(more))  # into the stored table: a key matching a stored row arrives twice
    expected = {d["key"]: d for d in data + more}  # the last record of each key
    assert rows(bucket, "users", "key", "version") == sorted((k, d["version"]) for k, d in expected.items())
    ids = {r["key"]: r["_dlt_id"] for r in table(bucket, "users").to_pyarrow_table().to_pylist()}
    got = sorted((r["_dlt_root_id"], r["value"]) for r in table(bucket, "users__nested").to_pyarrow_table().to_pylist())
    assert got == sorted((ids[k], v) for k, d in expected.items() for v in d["nested"])
    assert "_lakeload_seq" not in table(bucket, "users").schema().to_arrow().names  # type: ignore[union-attr]
    assert "_lakeload_seq" not in p.default_schema.tables["users__nested"]["columns"]


def test_dedup_sort_decides_between_duplicates(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    desc = upsert(primary_key="key", columns={"ts": {"dedup_sort": "desc"}})
    p.run(desc([{"key": 1, "ts": 3, "v": "newest"}, {"key": 1, "ts": 1, "v": "old"}, {"key": 1, "ts": 2, "v": "mid"}]))
    assert rows(bucket, "users", "key", "v") == [(1, "newest")]
    asc = upsert(name="items", primary_key="key", columns={"ts": {"dedup_sort": "asc"}})
    p.run(asc([{"key": 1, "ts": 3, "v": "newest"}, {"key": 1, "ts": 1, "v": "old"}]))
    assert rows(bucket, "items", "key", "v") == [(1, "old")]


@pytest.mark.parametrize(("flag", "removals"), [("bool", "tasks"), ("bool", "spark"), ("timestamp", "tasks")])
def test_hard_delete_removes_rows_and_their_nested_rows(
    bucket: Path, pipelines_dir: Path, monkeypatch: pytest.MonkeyPatch, flag: str, removals: str
) -> None:
    if removals == "spark":
        spark_removals(monkeypatch)
    p = make_pipeline(bucket, pipelines_dir)
    users = upsert(primary_key="id", columns={"deleted": {"hard_delete": True, "data_type": flag}})
    live = False if flag == "bool" else None
    gone = True if flag == "bool" else "2024-01-01T00:00:00Z"
    p.run(users([{"id": i, "deleted": live, "pets": [i, i + 10]} for i in range(1, 4)]))
    p.run(users([{"id": 2, "deleted": gone, "pets": [99]}, {"id": 4, "deleted": gone}, {"id": 3, "deleted": live, "pets": [3]}]))
    assert rows(bucket, "users", "id") == [(1,), (3,)]  # 2 deleted, 4 (deleted on arrival) never inserted
    assert rows(bucket, "users__pets", "value") == [(1,), (3,), (11,)]


def test_merge_key_replaces_stored_rows_with_the_same_merge_key(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    days = upsert(name="days", merge_key="day")
    p.run(days([{"day": 1, "n": 1}, {"day": 1, "n": 2}, {"day": 2, "n": 3}]))
    p.run(days([{"day": 1, "n": 9}]))
    assert rows(bucket, "days", "day", "n") == [(1, 9), (2, 3)]


def test_insert_only_keeps_stored_rows(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    users = upsert(primary_key="id", strategy="insert-only")
    p.run(users([{"id": 1, "v": "a", "tags": ["x"]}]))
    p.run(users([{"id": 1, "v": "b", "tags": ["y"]}, {"id": 2, "v": "c", "tags": ["z"]}]))
    assert rows(bucket, "users", "id", "v") == [(1, "a"), (2, "c")]
    assert rows(bucket, "users__tags", "value") == [("x",), ("z",)]


def test_merge_with_new_columns_evolves_the_table(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    users = upsert(primary_key="id")
    p.run(users([{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]))
    p.run(users([{"id": 2, "v": "B", "email": "b@x"}]))
    assert rows(bucket, "users", "id", "v", "email") == [(1, "a", None), (2, "B", "b@x")]


def test_every_dlt_strategy_is_taken_and_a_missing_key_is_refused(bucket: Path, pipelines_dir: Path) -> None:
    """Delta has every merge strategy dlt names (a format lacking one refuses it at extract:
    tests/compat/test_compat_merge_strategies.py); a strategy that matches keys needs one."""
    from lakeload.delta.table_format import DeltaFormat

    assert DeltaFormat.capabilities.merge_strategies == ("upsert", "delete-insert", "insert-only", "scd2", "cdc")
    p = make_pipeline(bucket, pipelines_dir)
    for strategy in ("upsert", "delete-insert", "insert-only", "cdc"):
        with pytest.raises(PipelineStepFailed, match="Delta merge needs a key"):
            p.run(upsert(strategy=strategy)([{"id": 1}]))
    assert p.list_extracted_load_packages() == []


def partitioned(name: str = "events") -> Any:
    @lakeload.resource(name=name, table_format="delta", primary_key="id", write_disposition="merge",
                       columns={"day": {"partition": True}})
    def resource(data: list[dict[str, Any]]) -> Any:
        yield from data

    return resource


def test_partitioned_merge_rewrites_only_touched_partitions(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    events = partitioned()
    p.run(events([{"id": i, "day": f"2024-01-0{i % 3 + 1}", "v": "a"} for i in range(9)]))
    folders = sorted(x.name for x in (bucket / "ds" / "events").iterdir() if x.name != "_delta_log")
    assert folders == ["day=2024-01-01", "day=2024-01-02", "day=2024-01-03"]
    before = {f for f in table(bucket, "events").file_uris()}
    p.run(events([{"id": 3, "day": "2024-01-01", "v": "b"}, {"id": 100, "day": "2024-01-01", "v": "new"}]))
    after = set(table(bucket, "events").file_uris())
    assert {f for f in before if "2024-01-01" not in f} <= after  # other partitions' files untouched
    assert rows(bucket, "events", "id", "v")[:2] == [(0, "a"), (1, "a")]
    assert (3, "b") in rows(bucket, "events", "id", "v") and (100, "new") in rows(bucket, "events", "id", "v")
    assert len(rows(bucket, "events", "id")) == 10
    assert table(bucket, "events").metadata().partition_columns == ["day"]


def test_changing_partition_columns_is_refused_before_writing(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    p.run([{"id": 1, "day": "d1"}], table_name="events", table_format="delta", columns={"day": {"partition": True}})
    files = sorted(str(x) for x in (bucket / "ds" / "events").rglob("*"))
    with pytest.raises(PipelineStepFailed, match=r"Partition columns of Delta table 'events' cannot change.*\['day'\].*\['id'\]"):
        p.run([{"id": 2, "day": "d2"}], table_name="events", table_format="delta",
              columns={"day": {"partition": False}, "id": {"partition": True}})
    assert sorted(str(x) for x in (bucket / "ds" / "events").rglob("*")) == files
    assert table(bucket, "events").version() == 0


def test_dataset_reads_delta_snapshots_with_spark(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    users = upsert(primary_key="id", columns={"day": {"partition": True}})
    p.run(users([{"id": 1, "day": "a", "v": 1}, {"id": 2, "day": "b", "v": 2}]))
    p.run(users([{"id": 1, "day": "a", "v": 10}]))
    frame = p.dataset().users.spark()
    assert sorted((r["id"], r["day"], r["v"]) for r in frame.collect()) == [(1, "a", 10), (2, "b", 2)]
    assert dict(p.dataset().row_counts())["users"] == 2


def test_merge_reads_back_partition_values_of_every_kind(bucket: Path, pipelines_dir: Path) -> None:
    """Partition values with URL-special characters and timestamps survive the merge's read-modify-write."""
    p = make_pipeline(bucket, pipelines_dir)
    hot = {"region": {"partition": True}, "at": {"partition": True, "data_type": "timestamp"}}
    events = upsert(name="events", primary_key="id", columns=hot)
    first = [{"id": i, "region": region, "at": "2024-01-01T10:00:00.123456+00:00", "v": 0}
             for i, region in enumerate(["a b", "x/y", "é%", None])]
    p.run(events(first))
    p.run(events([{"id": 1, "region": "x/y", "at": "2024-01-01T10:00:00.123456+00:00", "v": 1},
                  {"id": 3, "region": None, "at": "2024-01-01T10:00:00.123456+00:00", "v": 1}]))
    got = rows(bucket, "events", "id", "region", "v")
    assert sorted(got, key=lambda r: r[0]) == [(0, "a b", 0), (1, "x/y", 1), (2, "é%", 0), (3, None, 1)]
    stamps = {r["at"].isoformat() for r in table(bucket, "events").to_pyarrow_table().to_pylist()}
    assert stamps == {"2024-01-01T10:00:00.123456+00:00"}
    frame = p.dataset().events.spark()
    assert sorted((r["id"], r["region"]) for r in frame.collect()) == [(0, "a b"), (1, "x/y"), (2, "é%"), (3, None)]


def test_merge_rewrites_only_files_with_matches_keeping_their_other_rows(bucket: Path, pipelines_dir: Path) -> None:
    """Multi-column key: files whose key ranges miss the incoming keys stay; a touched file is rewritten without
    exactly the matched rows (dropped by position) and its other rows keep their nested rows."""
    p = make_pipeline(bucket, pipelines_dir)
    items = upsert("items", primary_key=["shop", "sku"])
    p.run(items([{"shop": "a", "sku": i, "v": "old", "tags": [f"a{i}"]} for i in range(4)]))
    p.run(items([{"shop": "b", "sku": i, "v": "old", "tags": [f"b{i}", "x"]} for i in range(4)]))
    before = set(table(bucket, "items").file_uris())
    nested_before = set(table(bucket, "items__tags").file_uris())
    p.run(items([{"shop": "b", "sku": 1, "v": "new", "tags": ["n"]}, {"shop": "b", "sku": 3, "v": "new", "tags": []}]))
    after = set(table(bucket, "items").file_uris())
    assert len(before - after) == 1 and len(before & after) == 1  # shop "a"'s file untouched, shop "b"'s rewritten
    assert rows(bucket, "items", "shop", "sku", "v") == [
        ("a", 0, "old"), ("a", 1, "old"), ("a", 2, "old"), ("a", 3, "old"),
        ("b", 0, "old"), ("b", 1, "new"), ("b", 2, "old"), ("b", 3, "new"),
    ]
    assert rows(bucket, "items__tags", "value") == sorted(
        [(f"a{i}",) for i in range(4)] + [("b0",), ("x",), ("b2",), ("x",), ("n",)]
    )
    assert len(nested_before & set(table(bucket, "items__tags").file_uris())) == 1  # shop "a"'s nested file too
    ids = {r["_dlt_id"] for r in table(bucket, "items").to_pyarrow_table().to_pylist()}
    assert {r["_dlt_root_id"] for r in table(bucket, "items__tags").to_pyarrow_table().to_pylist()} <= ids


def test_removals_in_tasks_rewrite_only_files_with_matches(bucket: Path, pipelines_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The usual upsert (one key column) of a small package: no Spark rewrite plan at all; a file whose rows
    match no incoming key stays (root and nested), a touched one loses exactly the matched rows and their
    nested rows, across two nested levels."""

    def no_spark_plan(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the Spark rewrite plan ran")

    monkeypatch.setattr(merge_files_module, "rewrite_files", no_spark_plan)
    p = make_pipeline(bucket, pipelines_dir)
    items = upsert("items", primary_key="sku")
    p.run(items([{"sku": i, "v": "old", "tags": [{"t": f"a{i}", "marks": [i]}]} for i in range(4)]))
    p.run(items([{"sku": i, "v": "old", "tags": [{"t": f"b{i}", "marks": [i, 0]}, {"t": "x"}]} for i in range(10, 14)]))
    before = {n: set(table(bucket, n).file_uris()) for n in ("items", "items__tags", "items__tags__marks")}
    p.run(items([{"sku": 11, "v": "new", "tags": [{"t": "n", "marks": [7]}]}, {"sku": 13, "v": "new", "tags": []}, {"sku": 20, "v": "new"}]))
    for name, files in before.items():  # the first load's file untouched, the second's rewritten
        assert len(files - set(table(bucket, name).file_uris())) == 1 and len(files & set(table(bucket, name).file_uris())) == 1
    assert rows(bucket, "items", "sku", "v") == sorted([(i, "old") for i in (0, 1, 2, 3, 10, 12)] + [(11, "new"), (13, "new"), (20, "new")])
    assert rows(bucket, "items__tags", "t") == sorted([(f"a{i}",) for i in range(4)] + [("b10",), ("x",), ("b12",), ("x",), ("n",)])
    assert rows(bucket, "items__tags__marks", "value") == sorted([(i,) for i in range(4)] + [(10,), (0,), (12,), (0,), (7,)])
    ids = {r["_dlt_id"] for r in table(bucket, "items").to_pyarrow_table().to_pylist()}
    for name in ("items__tags", "items__tags__marks"):
        assert {r["_dlt_root_id"] for r in table(bucket, name).to_pyarrow_table().to_pylist()} <= ids

"""Iceberg tables end to end on a real local Spark session and the embedded catalog: append, replace, merge
(upsert, insert-only, hard deletes, nested tables), refresh, reruns; read back by pyiceberg, DuckDB and Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table

import lakeload
from lakeload.errors import IcebergTableNotFoundError, PipelineStepFailed
from lakeload.iceberg import get_iceberg_tables
from lakeload.iceberg.target import MARK, IcebergTarget

pytestmark = pytest.mark.usefixtures("spark")


def make_pipeline(bucket: Path, pipelines_dir: Path, name: str = "ip") -> lakeload.Pipeline:
    return lakeload.pipeline(
        name, destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds", pipelines_dir=str(pipelines_dir)
    )


def table(bucket: Path, name: str) -> Table:
    """The table as a fresh pyiceberg catalog sees it: its newest metadata file in the bucket."""
    folder = bucket / "ds" / name / "metadata"
    newest = max(folder.glob("*.metadata.json"), key=lambda p: int(p.name.split("-", 1)[0]))
    catalog = SqlCatalog("check", uri="sqlite:///:memory:", warehouse=f"file://{bucket}")
    catalog.create_namespace("ds")
    return catalog.register_table(("ds", name), f"file://{newest}")


def rows(bucket: Path, name: str, *columns: str, snapshot_id: int | None = None) -> list[tuple[Any, ...]]:
    data = table(bucket, name).scan(snapshot_id=snapshot_id).to_arrow().to_pylist()
    return sorted(tuple(r[c] for c in columns) for r in data)


def marks(bucket: Path, name: str) -> list[str | None]:
    return [s.summary.additional_properties.get(MARK) if s.summary else None for s in table(bucket, name).snapshots()]


def merge(name: str = "users", strategy: str = "upsert", fmt: str = "iceberg", **hints: Any) -> Any:
    @lakeload.resource(name=name, write_disposition={"disposition": "merge", "strategy": strategy}, table_format=fmt, **hints)
    def resource(data: list[dict[str, Any]]) -> Any:
        yield from data

    return resource


def test_append_evolves_schema_writes_field_ids_and_reads_back_everywhere(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    p.run([{"id": 1, "at": "2026-01-02T03:04:05.123456+00:00", "tags": ["a", "b"]}], table_name="ev", table_format="iceberg",
          loader_file_format="jsonl")
    p.run([{"id": 2, "score": 1.5, "tags": ["c"]}], table_name="ev", table_format="iceberg")
    ev = table(bucket, "ev")
    assert rows(bucket, "ev", "id", "score") == [(1, None), (2, 1.5)]
    assert rows(bucket, "ev__tags", "value") == [("a",), ("b",), ("c",)]
    assert [f.name for f in ev.schema().fields][:2] == ["id", "at"] and ev.schema().find_field("score").field_id > 1
    assert len([m for m in marks(bucket, "ev") if m]) == 2  # one snapshot per load
    data_files = [t.file.file_path for t in ev.scan().plan_files()]
    assert all(f.startswith(f"file://{bucket}/ds/ev/data/") and f.endswith(".parquet") for f in data_files)
    footer = pq.read_schema(data_files[0].removeprefix("file://"))
    assert footer.field("id").metadata[b"PARQUET:field_id"] == str(ev.schema().find_field("id").field_id).encode()
    assert str(footer.field("at").type) in ("timestamp[us, tz=UTC]", "timestamp[us, tz=+00:00]")
    assert not list((bucket / "ds" / "ev").glob("*.jsonl*"))  # iceberg tables are written as parquet
    with p.sql_client() as client:
        assert client.execute_sql("SELECT id, score FROM ev ORDER BY id") == [(1, None), (2, 1.5)]
        assert client.execute_sql("SELECT count(*) FROM ev__tags") == [(3,)]
    assert sorted(p.dataset().ev.df()["id"].tolist()) == [1, 2]
    assert p.dataset()["ev__tags"].spark().count() == 3
    tables = get_iceberg_tables(p)
    assert set(tables) == {"ev", "ev__tags"} and tables["ev"].current_snapshot().snapshot_id == ev.current_snapshot().snapshot_id
    with pytest.raises(IcebergTableNotFoundError, match="no Iceberg table 'nope'"):
        get_iceberg_tables(p, "nope")


def test_replace_is_one_overwrite_per_load_and_keeps_history(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    p.run([{"id": 1, "tags": ["a"]}, {"id": 2}], table_name="ev", table_format="iceberg", write_disposition="replace")
    first = table(bucket, "ev").current_snapshot().snapshot_id
    p.run([{"id": 3}], table_name="ev", table_format="iceberg", write_disposition="replace")
    assert rows(bucket, "ev", "id") == [(3,)] and rows(bucket, "ev__tags", "value") == []
    operations = [s.summary.operation.value for s in table(bucket, "ev").snapshots()]
    assert operations == ["append", "overwrite"]  # never empty in between
    assert rows(bucket, "ev", "id", snapshot_id=first) == [(1,), (2,)]  # time travel
    with p.sql_client() as client:
        assert client.execute_sql("SELECT id FROM ev") == [(3,)]


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_upsert_with_nested_rows_and_hard_deletes(bucket: Path, pipelines_dir: Path, fmt: str) -> None:
    """The same loads give the same rows on both formats, and the rows written out by hand."""
    p = make_pipeline(bucket, pipelines_dir)
    users = merge(primary_key="id", fmt=fmt, columns={"deleted": {"hard_delete": True, "data_type": "bool"}})
    p.run(users([{"id": 1, "name": "a", "pets": ["cat", "dog"]}, {"id": 2, "name": "b", "pets": ["eel"]}]))
    p.run(users([{"id": 2, "name": "B", "pets": ["fox"]}, {"id": 1, "deleted": True}, {"id": 3, "name": "c", "pets": []},
                 {"id": 3, "name": "C", "pets": ["owl"]}]))
    with p.sql_client() as client:
        assert client.execute_sql("SELECT id, name FROM users ORDER BY id") == [(2, "B"), (3, "C")]
        assert client.execute_sql("SELECT value FROM users__pets ORDER BY value") == [("fox",), ("owl",)]
        orphans = "SELECT count(*) FROM users__pets p LEFT JOIN users u ON p._dlt_root_id = u._dlt_id WHERE u._dlt_id IS NULL"
        assert client.execute_sql(orphans) == [(0,)]


def test_insert_only_keeps_stored_rows_and_merge_key(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    users = merge(strategy="insert-only", primary_key="id")
    p.run(users([{"id": 1, "name": "a"}]))
    p.run(users([{"id": 1, "name": "changed"}, {"id": 2, "name": "b"}]))
    assert rows(bucket, "users", "id", "name") == [(1, "a"), (2, "b")]
    days = merge("days", merge_key="day")
    p.run(days([{"day": 1, "v": "x"}, {"day": 1, "v": "y"}, {"day": 2, "v": "z"}]))
    p.run(days([{"day": 1, "v": "new"}]))
    assert rows(bucket, "days", "day", "v") == [(1, "new"), (2, "z")]


def test_every_dlt_strategy_is_offered_and_a_missing_key_is_refused(bucket: Path, pipelines_dir: Path) -> None:
    from lakeload.iceberg.table_format import IcebergFormat

    assert IcebergFormat.capabilities.merge_strategies == ("upsert", "delete-insert", "insert-only", "scd2", "cdc")
    p = make_pipeline(bucket, pipelines_dir)
    with pytest.raises(PipelineStepFailed, match="Iceberg merge needs a key"):
        p.run(merge(strategy="upsert")([{"id": 1}]))


def test_a_crash_between_commits_resumes_without_a_second_snapshot(
    bucket: Path, pipelines_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    users = merge(primary_key="id")
    p.run(users([{"id": 1, "pets": ["a"]}]))
    real = IcebergTarget.commit

    def crash_on_nested(self: IcebergTarget, *args: Any, **kwargs: Any) -> None:
        mark = args[3] if len(args) > 3 else kwargs.get("mark")
        if self.name == "users__pets" and mark is not None and not mark.step:  # the nested rows, after the root's
            raise OSError("killed")
        real(self, *args, **kwargs)

    monkeypatch.setattr(IcebergTarget, "commit", crash_on_nested)
    with pytest.raises(PipelineStepFailed):
        p.run(users([{"id": 1, "pets": ["b", "c"]}, {"id": 2, "pets": ["d"]}]))
    monkeypatch.setattr(IcebergTarget, "commit", real)
    load_id = p.list_normalized_load_packages()[0]
    root_marks = marks(bucket, "users")
    assert root_marks[-1] == f"lakeload-ip/{load_id}"  # the root committed before the crash
    p.load()
    assert marks(bucket, "users") == root_marks  # the root's commit of the load is not made again
    assert sum(1 for m in marks(bucket, "users") if m and m.endswith(load_id)) == 1
    assert rows(bucket, "users", "id") == [(1,), (2,)]
    assert rows(bucket, "users__pets", "value") == [("b",), ("c",), ("d",)]


def test_refresh_drop_data_empties_in_a_snapshot_and_drop_sources_removes_the_table(bucket: Path, pipelines_dir: Path) -> None:
    @lakeload.source
    def crm(data: list[dict[str, Any]]) -> Any:
        return merge(primary_key="id")(data)

    p = make_pipeline(bucket, pipelines_dir)
    p.run(crm([{"id": 1, "pets": ["a"]}]))
    p.run(crm([{"id": 2}]), refresh="drop_data")
    assert rows(bucket, "users", "id") == [(2,)] and rows(bucket, "users__pets", "value") == []
    assert len(table(bucket, "users").snapshots()) >= 3  # loaded, emptied, loaded: the history stays
    p.run(crm([{"id": 3}]), refresh="drop_sources")
    assert rows(bucket, "users", "id") == [(3,)]
    assert len(table(bucket, "users").snapshots()) == 1  # made anew


def test_two_working_folders_of_one_pipeline_name_both_land(bucket: Path, tmp_path: Path) -> None:
    first, second = make_pipeline(bucket, tmp_path / "a"), make_pipeline(bucket, tmp_path / "b")
    first.run([{"id": 1}], table_name="ev", table_format="iceberg")
    second.run([{"id": 2}], table_name="ev", table_format="iceberg")
    first.run([{"id": 3}], table_name="ev", table_format="iceberg")
    assert rows(bucket, "ev", "id") == [(1,), (2,), (3,)]


def test_partitioned_tables_by_column_hints_and_transforms_take_appends_and_merges(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    rows_in = [{"id": i, "kind": "ab"[i % 2], "at": f"2026-0{1 + i % 3}-0{1 + i % 2}T10:00:00Z"} for i in range(12)]
    p.run(rows_in, table_name="ev", table_format="iceberg", columns={"kind": {"partition": True}})
    ev = table(bucket, "ev")
    assert [(f.name, str(f.transform)) for f in ev.spec().fields] == [("kind", "identity")]
    assert len(list(ev.scan(row_filter="kind == 'a'").plan_files())) == 1  # one file per partition: pruned
    days = merge("days", primary_key="id", additional_table_hints={
        "x-iceberg-partition": [{"transform": "month", "source_column": "at"}, {"transform": "truncate", "source_column": "id", "param_value": 4}]})
    p.run(days(rows_in))
    p.run(days([{"id": 1, "kind": "z", "at": "2026-02-02T10:00:00Z"}, {"id": 20, "kind": "n", "at": "2026-03-01T00:00:00Z"}]))
    stored = table(bucket, "days")
    assert [str(f.transform) for f in stored.spec().fields] == ["month", "truncate[4]"]
    assert rows(bucket, "days", "id", "kind")[:3] == [(0, "a"), (1, "z"), (2, "a")] and len(rows(bucket, "days", "id")) == 13
    partitions = {tuple(t.file.partition) for t in stored.scan().plan_files()}
    assert len(partitions) == len({(r["at"][:7], r["id"] // 4) for r in [*rows_in, {"id": 20, "at": "2026-03"}]})
    with pytest.raises(PipelineStepFailed, match="partition spec of Iceberg table 'ev' cannot change"):
        p.run([{"id": 99, "kind": "a"}], table_name="ev", table_format="iceberg", columns={"id": {"partition": True}})


def test_readers_see_the_snapshot_of_the_last_completed_load(bucket: Path, pipelines_dir: Path) -> None:
    """A commit made outside a load (or by a load still running) stays invisible to dataset() and sql_client() until
    the next load completes; pyiceberg itself reads the latest snapshot."""
    p = make_pipeline(bucket, pipelines_dir)
    p.run([{"id": 1}], table_name="ev", table_format="iceberg")
    assert (bucket / "ds" / "_lakeload_iceberg_versions").is_dir()
    import pyarrow as pa

    table(bucket, "ev").append(pa.table({"id": pa.array([99], pa.int64()), "_dlt_load_id": ["x"], "_dlt_id": ["y"]}))
    with p.sql_client() as client:
        assert client.execute_sql("SELECT id FROM ev") == [(1,)]
    assert rows(bucket, "ev", "id") == [(1,), (99,)]
    p.run([{"id": 2}], table_name="ev", table_format="iceberg")
    with p.sql_client() as client:
        assert client.execute_sql("SELECT id FROM ev ORDER BY id") == [(1,), (2,), (99,)]


def test_iceberg_adapter_sets_partitions_names_and_table_properties_as_dlts(bucket: Path, pipelines_dir: Path) -> None:
    from lakeload.destinations.adapters import iceberg_adapter, iceberg_partition

    p = make_pipeline(bucket, pipelines_dir)
    events = iceberg_adapter(
        lakeload.resource([{"id": 1, "at": "2026-01-05T00:00:00Z", "kind": "a"}, {"id": 2, "at": "2026-02-05T00:00:00Z", "kind": "b"}],
                          name="events", table_format="iceberg"),
        partition=[iceberg_partition.month("at", "at_month"), "kind"], table_properties={"owner": "lake-team"},
    )
    p.run(events)
    stored = table(bucket, "events")
    assert [(f.name, str(f.transform)) for f in stored.spec().fields] == [("at_month", "month"), ("kind", "identity")]
    assert stored.properties["owner"] == "lake-team"
    assert len(list(stored.scan().plan_files())) == 2
    with pytest.raises(lakeload.errors.ExtractError, match="Unknown Iceberg partition transform"):
        iceberg_adapter([{"id": 1}], partition=[iceberg_partition.identity("id").__class__("id", "zorder")])


def test_bucket_partitions_take_appends_and_merges_with_each_files_partition_icebergs(bucket: Path, pipelines_dir: Path) -> None:
    """`bucket` partitions (dlt's `iceberg_partition.bucket`): each data file holds one bucket, its partition value the
    one pyiceberg's transform gives every row in it, and a scan for one key reads only that key's bucket."""
    from pyiceberg.transforms import BucketTransform
    from pyiceberg.types import LongType, StringType

    from lakeload.destinations.adapters import iceberg_adapter, iceberg_partition

    p = make_pipeline(bucket, pipelines_dir)
    users = iceberg_adapter(merge("users", primary_key="id"), partition=[iceberg_partition.bucket(4, "id"), iceberg_partition.bucket(3, "name")])
    p.run(users([{"id": i, "name": f"n{i % 5}"} for i in range(40)]))
    p.run(users([{"id": 3, "name": "renamed"}, {"id": 100, "name": "n1"}]))
    stored = table(bucket, "users")
    assert [str(f.transform) for f in stored.spec().fields] == ["bucket[4]", "bucket[3]"]
    assert rows(bucket, "users", "id", "name")[:4] == [(0, "n0"), (1, "n1"), (2, "n2"), (3, "renamed")]
    assert len(rows(bucket, "users", "id")) == 41
    by_id, by_name = BucketTransform(4).transform(LongType()), BucketTransform(3).transform(StringType())
    tasks = list(stored.scan().plan_files())
    for task in tasks:
        data = pq.read_table(task.file.file_path.removeprefix("file://"), columns=["id", "name"]).to_pylist()
        assert {(by_id(r["id"]), by_name(r["name"])) for r in data} == {tuple(task.file.partition)}
    assert len({tuple(t.file.partition) for t in tasks}) > 4  # (a merge may add a file beside a kept one)
    assert len(list(stored.scan(row_filter="id == 3").plan_files())) < len(tasks)
    with p.sql_client() as client:
        assert client.execute_sql("SELECT count(*), count(DISTINCT id) FROM users") == [(41, 41)]

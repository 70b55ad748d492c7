"""`replace` of only the partitions a load has rows in (`write_disposition={"disposition": "replace", "strategy":
"partitions"}`, table hint `x-replace-strategy`), on Delta and Iceberg (transform partitions too), flat and nested: the other partitions keep
their rows (and files), the replaced ones hold exactly the load's rows, nested rows below replaced root rows go,
each load is one commit of the root table with the earlier versions readable, a load without rows replaces
nothing, and `refresh="drop_data"` still empties the whole table first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.errors import ExtractError, PipelineStepFailed

pytestmark = [pytest.mark.usefixtures("spark"), pytest.mark.slow]
pytest.importorskip("pyiceberg")
FORMATS = ["delta", "iceberg"]
PARTITIONS = {"disposition": "replace", "strategy": "partitions"}


@pytest.fixture
def read_files(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of files each `MergeFiles.read` of a merge was given, in order (a merge's stored-row reads)."""
    from lakeload.delta.merge_files import MergeFiles

    counts: list[int] = []
    original = MergeFiles.read

    def counted(self: MergeFiles, target: Any, files: list[Any], *args: Any, **kwargs: Any) -> Any:
        counts.append(len(files))
        return original(self, target, files, *args, **kwargs)

    monkeypatch.setattr(MergeFiles, "read", counted)
    return counts


def make_pipeline(bucket: Path, pipelines_dir: Path) -> lakeload.Pipeline:
    return lakeload.pipeline("rp", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                             pipelines_dir=str(pipelines_dir))


def events(fmt: str, rows: list[dict[str, Any]], **hints: Any) -> Any:
    return lakeload.resource(rows, name="events", table_format=fmt, columns={"day": {"partition": True}},
                             write_disposition=hints.pop("write_disposition", PARTITIONS), **hints)


def day_rows(day: str, count: int, version: int, nested: bool = False) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [{"day": day, "n": i, "v": version} for i in range(count)]
    if nested:
        for row in rows:
            row["tags"] = [f"{day}.{row['n']}.{k}.v{version}" for k in range(1 + row["n"] % 2)]
    return rows


def stored(p: lakeload.Pipeline, nested: bool = False) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    with p.sql_client() as client:
        roots = [tuple(r) for r in client.execute_sql("SELECT day, n, v FROM events ORDER BY day, n")]
        tags = [tuple(r) for r in client.execute_sql(
            "SELECT e.day, t.value FROM events__tags t LEFT JOIN events e ON t._dlt_root_id = e._dlt_id ORDER BY 1, 2"
        )] if nested else []
    return roots, tags


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_only_the_loaded_partitions_are_replaced(fmt: str, nested: bool, bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    p.run(events(fmt, day_rows("a", 2, 1, nested) + day_rows("b", 3, 1, nested) + day_rows("c", 2, 1, nested)))
    first_roots, first_tags = stored(p, nested)
    files_before = set(_data_files(bucket, fmt))
    p.run(events(fmt, day_rows("b", 2, 2, nested) + day_rows("d", 1, 2, nested)))
    roots, tags = stored(p, nested)
    expected = [r for r in first_roots if r[0] in ("a", "c")] + [(d, n, 2) for d, n in (("b", 0), ("b", 1), ("d", 0))]
    assert roots == sorted(expected)
    if nested:
        kept = [t for t in first_tags if t[0] in ("a", "c")]
        new = [(row["day"], tag) for row in day_rows("b", 2, 2, True) + day_rows("d", 1, 2, True) for tag in row["tags"]]
        assert tags == sorted(kept + new)
        assert all(t[0] is not None for t in tags)  # no nested row lost its root row
    assert _untouched_partitions(bucket, fmt, files_before) == {"a", "c"}  # their files neither removed nor rewritten
    p.run(events(fmt, []))  # no rows: no partition replaced
    assert stored(p, nested)[0] == sorted(expected)
    history = _history(bucket, fmt)
    assert _rows_at(bucket, fmt, history[-1]) == len(expected)
    assert _rows_at(bucket, fmt, history[-2]) == len(first_roots)  # the first load's version stays readable


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_strategy_by_table_hint_and_apply_hints_and_refresh_drop_data(fmt: str, bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    p.run(events(fmt, day_rows("a", 2, 1) + day_rows("b", 2, 1)))
    hinted = events(fmt, day_rows("b", 1, 2), write_disposition="replace", additional_table_hints={"x-replace-strategy": "partitions"})
    p.run(hinted)
    assert stored(p)[0] == [("a", 0, 1), ("a", 1, 1), ("b", 0, 2)]
    applied = events(fmt, day_rows("a", 1, 3), write_disposition="append")
    applied.apply_hints(write_disposition=PARTITIONS)
    p.run(applied)
    assert stored(p)[0] == [("a", 0, 3), ("b", 0, 2)]
    p.run(events(fmt, day_rows("c", 1, 4)), refresh="drop_data")  # the refresh empties the table, then c is loaded
    assert stored(p)[0] == [("c", 0, 4)]
    # dlt's replace again: the whole table (a hint stays in the stored schema until a new value replaces it, as in dlt)
    p.run(events(fmt, day_rows("d", 1, 5), write_disposition={"disposition": "replace", "strategy": "truncate-and-insert"}))
    assert stored(p)[0] == [("d", 0, 5)]


@pytest.mark.parametrize("keys", [{"merge_key": "day"}, {"primary_key": "n"}], ids=["delete-insert-by-day", "upsert-by-id"])
def test_merges_read_only_the_partitions_they_load(
    keys: dict[str, str], bucket: Path, pipelines_dir: Path, read_files: list[int]
) -> None:
    """A merge matches rows by the identity partition columns beside its keys (Delta's rule, on Iceberg too), so it
    reads the files of the partitions it loads only (Iceberg: each file's partition from its statistics; Delta:
    from its partition values); a record loaded into another partition is a new row."""
    p = make_pipeline(bucket, pipelines_dir)
    strategy = "delete-insert" if "merge_key" in keys else "upsert"
    for fmt in FORMATS:
        def load(rows: list[dict[str, Any]], fmt: str = fmt) -> None:
            p.run(lakeload.resource(rows, name=f"ev_{fmt}", table_format=fmt, columns={"day": {"partition": True}},
                                    write_disposition={"disposition": "merge", "strategy": strategy}, **keys))

        load([{"day": d, "n": 10 * i + j} for i, d in enumerate("abcd") for j in range(3)])
        read_files.clear()
        load([{"day": "b", "n": 11}, {"day": "b", "n": 99}])
        assert read_files == [1], fmt  # of 4 partitions' files, b's only
        with p.sql_client() as client:
            counts = client.execute_sql(f"SELECT day, count(*) FROM ev_{fmt} GROUP BY day ORDER BY day")
        assert counts == [("a", 3), ("b", 2 if strategy == "delete-insert" else 4), ("c", 3), ("d", 3)], fmt
        if strategy == "upsert":
            load([{"day": "c", "n": 0}])  # key 0 was loaded into a: a new row of c, as on Delta
            with p.sql_client() as client:
                assert client.execute_sql(f"SELECT day FROM ev_{fmt} WHERE n = 0 ORDER BY day") == [("a",), ("c",)], fmt


def test_iceberg_transform_partitions_are_replaced_by_their_values(
    bucket: Path, pipelines_dir: Path, read_files: list[int]
) -> None:
    """`month(at)` and `bucket(4, kind)`: a stored row goes when its month and bucket are those of a loaded row (computed
    on the executors), and only the files of those partitions are read."""
    from lakeload.destinations.adapters import iceberg_adapter, iceberg_partition

    p = make_pipeline(bucket, pipelines_dir)

    def monthly(rows: list[dict[str, Any]]) -> Any:
        resource = lakeload.resource(rows, name="monthly", table_format="iceberg", write_disposition=PARTITIONS)
        return iceberg_adapter(resource, partition=[iceberg_partition.month("at"), iceberg_partition.bucket(4, "kind")])

    first = [{"at": f"2026-0{m}-{d:02d}T10:00:00Z", "kind": k, "v": 1} for m in (1, 2, 3) for d in (1, 15) for k in "ab"]
    p.run(monthly(first))
    files = len(list(_iceberg(bucket, "monthly").scan().plan_files()))
    read_files.clear()
    p.run(monthly([{"at": "2026-02-20T00:00:00Z", "kind": "a", "v": 2}]))
    with p.sql_client() as client:
        stored = client.execute_sql("SELECT strftime(\"at\", '%m'), kind, v FROM monthly ORDER BY 1, 2, 3")
    kept = sorted((r["at"][5:7], r["kind"], 1) for r in first if not (r["at"][5:7] == "02" and r["kind"] == "a"))
    assert stored == sorted([*kept, ("02", "a", 2)])
    assert read_files == [1] and files > 1  # the file of (February, bucket of "a") only


def test_an_iceberg_upsert_whose_key_holds_a_transformed_column_reads_only_its_partitions(
    bucket: Path, pipelines_dir: Path, read_files: list[int]
) -> None:
    """A primary key (id, at) on a table partitioned by day(at): a stored row matching a loaded one has its `at`, so
    its day; the merge reads the files of the loaded days only (the days computed on the executors)."""
    from lakeload.destinations.adapters import iceberg_adapter, iceberg_partition

    p = make_pipeline(bucket, pipelines_dir)

    def readings(rows: list[dict[str, Any]]) -> Any:
        resource = lakeload.resource(rows, name="readings", table_format="iceberg", primary_key=["id", "at"],
                                     write_disposition={"disposition": "merge", "strategy": "upsert"})
        return iceberg_adapter(resource, partition=[iceberg_partition.day("at")])

    p.run(readings([{"id": i, "at": f"2026-03-0{d}T0{i}:00:00Z", "v": 1} for d in range(1, 5) for i in range(3)]))
    read_files.clear()
    p.run(readings([{"id": 1, "at": "2026-03-02T01:00:00Z", "v": 2}, {"id": 7, "at": "2026-03-02T07:00:00Z", "v": 2}]))
    assert read_files == [1]  # of 4 days' files, March 2nd's only
    with p.sql_client() as client:
        assert client.execute_sql("SELECT count(*), CAST(sum(v) AS BIGINT) FROM readings") == [(13, 15)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_table_it_cannot_replace_by_partitions_is_refused_at_run(fmt: str, bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    unpartitioned = lakeload.resource([{"n": 1}], name="flat", table_format=fmt, write_disposition=PARTITIONS)
    with pytest.raises(PipelineStepFailed, match="'partitions' replace strategy needs partition columns"):
        p.run(unpartitioned)
    with pytest.raises(PipelineStepFailed, match="needs table_format='delta' or 'iceberg'"):
        p.run(lakeload.resource([{"n": 1, "day": "a"}], name="plain", columns={"day": {"partition": True}}, write_disposition=PARTITIONS))
    with pytest.raises(ExtractError, match="Unknown replace strategy 'rows'"):
        lakeload.resource([{"n": 1}], name="x", write_disposition={"disposition": "replace", "strategy": "rows"})


def _data_files(bucket: Path, fmt: str) -> list[str]:
    folder = bucket / "ds" / "events"
    files = (folder / "data").rglob("*.parquet") if fmt == "iceberg" else folder.rglob("*.parquet")
    return sorted(str(f.relative_to(folder)) for f in files)


def _untouched_partitions(bucket: Path, fmt: str, before: set[str]) -> set[str]:
    """The partitions all of whose files of the first load are still current after the second."""
    import pyarrow.parquet as pq

    def day_of(path: str) -> str:
        if fmt == "delta":
            return path.split("day=", 1)[1].split("/", 1)[0]
        return str(pq.read_table(bucket / "ds" / "events" / path, columns=["day"])["day"][0])

    current = _current_files(bucket, fmt)
    days = {day_of(f) for f in before}
    return {d for d in days if all(f in current for f in before if day_of(f) == d)} - {day_of(f) for f in current - before}


def _current_files(bucket: Path, fmt: str) -> set[str]:
    if fmt == "delta":
        import pyarrow as pa
        from deltalake import DeltaTable

        actions = pa.table(DeltaTable(str(bucket / "ds" / "events")).get_add_actions(flatten=True))
        return set(actions.column("path").to_pylist())
    table = _iceberg(bucket)
    prefix = f"file://{bucket}/ds/events/"
    return {t.file.file_path.removeprefix(prefix) for t in table.scan().plan_files()}


def _iceberg(bucket: Path, name: str = "events") -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    folder = bucket / "ds" / name / "metadata"
    newest = max(folder.glob("*.metadata.json"), key=lambda p: int(p.name.split("-", 1)[0]))
    catalog = SqlCatalog("check", uri="sqlite:///:memory:", warehouse=f"file://{bucket}")
    catalog.create_namespace("ds")
    return catalog.register_table(("ds", name), f"file://{newest}")


def _history(bucket: Path, fmt: str) -> list[Any]:
    if fmt == "delta":
        from deltalake import DeltaTable

        return list(range(DeltaTable(str(bucket / "ds" / "events")).version() + 1))
    return [s.snapshot_id for s in _iceberg(bucket).snapshots()]


def _rows_at(bucket: Path, fmt: str, version: Any) -> int:
    if fmt == "delta":
        from deltalake import DeltaTable

        return int(DeltaTable(str(bucket / "ds" / "events"), version=version).to_pyarrow_table().num_rows)
    return int(_iceberg(bucket).scan(snapshot_id=version).to_arrow().num_rows)

"""Files sources on a real local Spark session: JSONL read in place by normalize, Parquet/CSV by Spark, incremental."""

from __future__ import annotations

import datetime
import gzip
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakeload
from lakeload.errors import PipelineStepFailed, SourceError
from lakeload.extract import split_shapes
from lakeload.sources.filesystem import FileReader, filesystem, read_csv, read_jsonl, read_parquet
from lakeload.spark.session_kind import default_parallelism
from lakeload.storage.packages import EXTRACTED, read_json

pytestmark = pytest.mark.usefixtures("spark")
RANDOM_COLUMNS = ("_dlt_id", "_dlt_parent_id", "_dlt_load_id")


def make_pipeline(bucket: Path, pipelines_dir: Path, name: str = "files", dataset: str = "ds") -> lakeload.Pipeline:
    destination = lakeload.destinations.filesystem(bucket_url=str(bucket))
    return lakeload.pipeline(name, destination=destination, dataset_name=dataset, pipelines_dir=str(pipelines_dir))


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)


def events(start: int, n: int) -> list[dict[str, Any]]:
    """Nested records; `value` is an int from id 40 on, text before (a variant column when 40+ come first)."""
    return [
        {"id": i, "name": f"e{i}", "at": f"2024-05-{1 + i % 28:02d}T10:00:00+00:00", "meta": {"score": i / 4},
         "value": i if i >= 40 else f"v{i}", "tags": [{"t": f"t{j}"} for j in range(i % 3)]}
        for i in range(start, start + n)
    ]


def table_rows(p: lakeload.Pipeline, table: str) -> list[dict[str, Any]]:
    rows = [{k: v for k, v in r.items() if k not in RANDOM_COLUMNS} for r in p.dataset()(f"SELECT * FROM {table}").arrow().to_pylist()]
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def columns(p: lakeload.Pipeline, table: str) -> list[tuple[str, str | None]]:
    return [(name, c.get("data_type")) for name, c in p.default_schema.tables[table]["columns"].items()]


def test_jsonl_plain_gzip_and_byte_ranges_load_like_a_python_list(
    bucket: Path, pipelines_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    write_jsonl(data / "a.jsonl", events(0, 30))  # ~3.5 kB, cut into byte ranges
    write_jsonl(data / "2024" / "b.jsonl.gz", events(30, 10))
    write_jsonl(data / "2024" / "05" / "c.ndjson", events(40, 5))
    (data / "2024" / "skip.txt").write_text("not matched")
    monkeypatch.setenv("EXTRACT__FILE_MAX_BYTES", "1000")

    p = make_pipeline(bucket, pipelines_dir)
    load_id = p.extract(filesystem(str(data), file_glob="**/*.*json*") | read_jsonl(), table_name="events").loads_ids[0]
    splits = read_json(os.path.join(p.storage.package_dir(EXTRACTED, load_id), "manifest.json"))["splits"]
    per_file = [(s["path"].rsplit("/", 1)[-1], s["source"]["start"]) for s in splits]
    size = (data / "a.jsonl").stat().st_size  # 4 near-equal ranges of at most 1000 bytes
    assert 3000 < size <= 4000
    assert per_file == [("c.ndjson", 0), ("b.jsonl.gz", 0)] + [("a.jsonl", size * i // 4) for i in range(4)]
    assert all(s["source"]["size"] > 0 and s["source"]["version"] for s in splits)
    assert "credentials" not in json.dumps(splits)
    p.normalize()
    info = p.load()
    assert info.row_counts == {"events": 45, "events__tags": 45}

    q = make_pipeline(bucket, pipelines_dir, name="from_list", dataset="ds_list")
    q.run(events(40, 5) + events(30, 10) + events(0, 30), table_name="events")  # in the files' (path) order
    for table in ("events", "events__tags"):
        assert columns(p, table) == columns(q, table)
        assert table_rows(p, table) == table_rows(q, table)
    assert ("value__v_text", "text") in columns(p, "events")


def test_jsonl_splits_are_cut_for_the_sessions_parallelism(
    bucket: Path, pipelines_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spark: Any
) -> None:
    """The sizes that make a cut worth it here are scaled down: a 3.5 kB file stands for a 140 MB one."""
    monkeypatch.setattr(split_shapes, "MIN_PIECE_BYTES", 256)
    monkeypatch.setattr(split_shapes, "TASK_COST_BYTES", 16)
    write_jsonl(tmp_path / "data" / "a.jsonl", events(0, 30))
    size = (tmp_path / "data" / "a.jsonl").stat().st_size
    monkeypatch.setenv("EXTRACT__FILE_MAX_BYTES", str(2 * size))  # the plain cut: one split
    parallelism = default_parallelism(spark)
    assert parallelism == 2

    p = make_pipeline(bucket, pipelines_dir)
    load_id = p.extract(filesystem(str(tmp_path / "data"), file_glob="*.jsonl") | read_jsonl(), table_name="events").loads_ids[0]
    splits = read_json(os.path.join(p.storage.package_dir(EXTRACTED, load_id), "manifest.json"))["splits"]
    assert [(s["source"]["start"], s["source"]["end"]) for s in splits] == [(0, size // 2), (size // 2, None)]
    p.normalize()
    assert p.load().row_counts == {"events": 30, "events__tags": 30}
    assert sorted(r["id"] for r in table_rows(p, "events")) == list(range(30))


def test_parquet_and_csv_are_read_by_spark_with_their_types(bucket: Path, pipelines_dir: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    at = pa.array([datetime.datetime(2024, 5, 1, tzinfo=datetime.timezone.utc)] * 3, pa.timestamp("us", tz="UTC"))
    pq.write_table(pa.table({"id": [1, 2, 3], "price": [1.5, 2.5, 3.5], "name": ["a", "b", "c"], "at": at}), data / "p1.parquet")
    pq.write_table(pa.table({"id": [4], "flag": [True]}), data / "p2.parquet")
    (data / "c1.csv").write_text("id,amount,label\n1,1.25,x\n2,2.5,y\n")
    with gzip.open(data / "c2.csv.gz", "wt") as f:
        f.write("id,amount,label\n3,3.75,z\n")
    p = make_pipeline(bucket, pipelines_dir)

    info = p.run(filesystem(str(data), file_glob="*.parquet") | read_parquet(), table_name="prices")
    assert info.row_counts == {"prices": 4}
    assert dict(columns(p, "prices"))["price"] == "double" and dict(columns(p, "prices"))["at"] == "timestamp"
    assert {c: t for c, t in columns(p, "prices") if c in ("id", "name", "flag")} == {"id": "bigint", "name": "text", "flag": "bool"}

    info = p.run(filesystem(str(data), file_glob="*.csv*") | read_csv(add_file_name=True), table_name="amounts")
    assert info.row_counts == {"amounts": 3}
    assert {c: t for c, t in columns(p, "amounts") if not c.startswith("_dlt")} == {
        "id": "bigint", "amount": "double", "label": "text", "_file_name": "text"}
    names = {r["label"]: r["_file_name"] for r in table_rows(p, "amounts")}
    assert names == {"x": f"file://{data}/c1.csv", "y": f"file://{data}/c1.csv", "z": f"file://{data}/c2.csv.gz"}


def test_parquet_with_nanosecond_timestamps_is_read_through_pyarrow(bucket: Path, pipelines_dir: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    at = pa.array([1_714_557_600_123_456_789, None], pa.timestamp("ns"))  # what pandas writes; Spark refuses it
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.uint32()), "at": at}), data / "pandas.parquet")
    p = make_pipeline(bucket, pipelines_dir)
    info = p.run(filesystem(str(data), file_glob="*.parquet") | read_parquet(add_file_name=True), table_name="t")
    assert info.row_counts == {"t": 2}
    rows = sorted(table_rows(p, "t"), key=lambda r: r["id"])
    assert rows[0]["at"].isoformat().startswith("2024-05-01T10:00:00.123456") and rows[1]["at"] is None
    assert rows[0]["_file_name"] == f"file://{data}/pandas.parquet"


def test_incremental_picks_new_and_changed_files_only(bucket: Path, pipelines_dir: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_jsonl(data / "a.jsonl", events(0, 2))
    p = make_pipeline(bucket, pipelines_dir)

    def files() -> lakeload.Resource:
        return filesystem(f"file://{data}", file_glob="*.jsonl", incremental=True) | read_jsonl()

    assert p.run(files(), table_name="events").row_counts == {"events": 2, "events__tags": 1}
    write_jsonl(data / "b.jsonl", events(2, 3))
    assert p.run(files(), table_name="events").row_counts == {"events": 3, "events__tags": 3}
    assert p.run(files(), table_name="events").row_counts == {}  # nothing new: nothing extracted, no failure

    write_jsonl(data / "a.jsonl", events(0, 3))  # changed content
    assert p.run(files(), table_name="events").row_counts["events"] == 3
    later = (data / "b.jsonl").stat().st_mtime + 10
    os.utime(data / "b.jsonl", (later, later))  # touched
    assert p.run(files(), table_name="events").row_counts["events"] == 3
    known = p.state["sources"]["files"]["resources"]["read_jsonl"]["files"]
    assert sorted(known) == [f"file://{data}/a.jsonl", f"file://{data}/b.jsonl"]
    assert dict(p.dataset().row_counts())["events"] == 11
    restored = make_pipeline(bucket, pipelines_dir / "elsewhere")  # the file list travels in _dlt_pipeline_state
    restored.sync_destination()
    assert restored.state["sources"] == p.state["sources"]

    @lakeload.resource(name="boom")
    def boom() -> Any:
        raise RuntimeError("boom")
        yield

    write_jsonl(data / "c.jsonl", events(5, 4))
    with pytest.raises(PipelineStepFailed, match="boom"):
        p.run([files().apply_hints(table_name="events"), boom()])
    assert f"file://{data}/c.jsonl" not in p.state["sources"]["files"]["resources"]["read_jsonl"]["files"]
    assert p.run(files(), table_name="events").row_counts["events"] == 4  # the failed extract's files again

    write_jsonl(data / "d.jsonl", events(9, 1))
    load_id = p.extract(files(), table_name="events").loads_ids[0]
    write_jsonl(data / "d.jsonl", events(9, 2))
    with pytest.raises(PipelineStepFailed, match=r"d\.jsonl changed after extract") as failed:
        p.normalize()
    assert failed.value.load_id == load_id and p.storage.list_packages(EXTRACTED) == [load_id]
    write_jsonl(data / "e.jsonl", events(20, 1))
    p.extract(files(), table_name="events")  # e.jsonl is in a second pending package now
    p.drop_pending_packages()  # both go; their files are picked again, as the bucket never loaded them
    assert p.storage.list_packages(EXTRACTED) == []
    assert p.run(files(), table_name="events").row_counts == {"events": 3, "events__tags": 3}


def test_bucket_url_from_config_no_match_warns_and_unknown_readers_fail(
    bucket: Path, pipelines_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    write_jsonl(data / "a.jsonl", events(0, 2))
    monkeypatch.setenv("SOURCES__FILESYSTEM__BUCKET_URL", str(data))
    p = make_pipeline(bucket, pipelines_dir)
    with pytest.warns(UserWarning, match=r"matches file_glob '\*\.csv'"):
        assert p.run(filesystem(file_glob="*.csv") | read_csv(), table_name="none").row_counts == {}
    items = list(filesystem(file_glob="*.jsonl"))  # the file items of each page, as dlt's iteration gives them
    assert [i["file_name"] for i in items] == ["a.jsonl"] and items[0]["size_in_bytes"] > 0
    with pytest.raises(SourceError, match=r"read_jsonl\(\), read_parquet\(\), read_csv\(\) or read_csv_duckdb\(\)"):
        FileReader("xml")
    with pytest.raises(SourceError, match=r"read_jsonl\(\), read_parquet\(\), read_csv\(\) or read_csv_duckdb\(\)"):
        filesystem(file_glob="*.jsonl") | "jsonl"


def test_memory_bucket_is_read_by_the_driver(bucket: Path, pipelines_dir: Path) -> None:
    import io

    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe_file("/src-files/e.jsonl.gz", gzip.compress(b'{"id": 1}\n{"id": 2}\n'))
    sink = io.BytesIO()
    pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.uint8())}), sink)
    fs.pipe_file("/src-files/t.parquet", sink.getvalue())
    p = make_pipeline(bucket, pipelines_dir)
    assert p.run(filesystem("memory://src-files", file_glob="*.jsonl.gz") | read_jsonl(add_file_name=True), table_name="e").row_counts == {"e": 2}
    assert {r["_file_name"] for r in table_rows(p, "e")} == {"memory://src-files/e.jsonl.gz"}
    assert p.run(filesystem("memory://src-files", file_glob="*.parquet") | read_parquet(), table_name="t").row_counts == {"t": 3}
    assert p.default_schema.tables["t"]["columns"]["id"]["data_type"] == "bigint"


def test_executor_modules_load_no_driver_side_module_on_a_worker() -> None:
    """What a Spark worker imports to read source files: no configuration, pipeline or source-definition module."""
    import subprocess
    import sys

    code = (
        "import sys, lakeload.kernel.normalize.split_io, lakeload.kernel.spark.file_read\n"
        "print(sorted(m for m in sys.modules if m.startswith(('lakeload.config', 'lakeload.runtime', 'lakeload.sources', "
        "'lakeload.extract', 'pyspark')) or (m.endswith(('factory', 'configuration', 'client')) "
        "and not m.startswith('lakeload.errors.'))))"  # the errors' own modules are executor-safe
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

"""The DuckDB destination loading `loader_file_format="jsonl"` packages (DuckDB's `read_json`, every column typed
from the schema) beside dlt 1.31's DuckDB destination loading the same records as jsonl: the same column types and
rows for every data type, for append, replace and a `delete-insert` merge with nested tables, and through a
filesystem staging bucket; `insert_values` (dlt's default on DuckDB) loaded as Parquet; `csv` refused.

Where dlt's jsonl load does not keep the value it was given, lakeload keeps it, as both tools' Parquet loads do:
`binary` (dlt stores the base64 text's bytes) and `json` objects of different keys (dlt's DuckDB guesses one
struct for the file and adds the missing keys as nulls)."""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import logging
from decimal import Decimal
from pathlib import Path
from typing import Any

import dlt
import duckdb
import pytest

import lakeload
from lakeload.errors import ConfigurationError

pytestmark = [pytest.mark.usefixtures("spark")]
BIN = b"\x00\x01hello\xff"
TYPED = {"d": {"data_type": "decimal", "precision": 10, "scale": 3}, "j": {"data_type": "json"},
         "w": {"data_type": "wei"}, "ntz": {"data_type": "timestamp", "timezone": False}, "tm": {"data_type": "time"},
         "bin": {"data_type": "binary"}, "dd": {"data_type": "date"}}



def columns(path: Path) -> dict[str, list[tuple[str, str]]]:
    with duckdb.connect(str(path), read_only=True) as db:
        found = db.execute("SELECT table_name, column_name, data_type FROM information_schema.columns "
                           "WHERE table_schema = 'mydata' ORDER BY table_name, ordinal_position").fetchall()
    tables: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in found:
        tables.setdefault(table, []).append((column, kind))
    return tables


def rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(path), read_only=True) as db:
        db.execute("SET search_path = 'mydata'")
        return sorted(db.execute(sql).fetchall(), key=repr)


def all_types() -> list[dict[str, Any]]:
    return [
        {"id": 1, "f": 1.5, "b": True, "t": "x", "d": Decimal("12.345"),
         "ts": dt.datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2))),
         "dd": dt.date(2026, 2, 3), "tm": dt.time(4, 5, 6, 789000), "j": {"a": 1, "b": [1, 2]}, "bin": BIN,
         "w": 2**62, "ntz": dt.datetime(2026, 1, 1, 1, 2, 3), "seen": "2026-03-04T05:06:07+02:00"},
        {"id": 2, "f": 2.0, "b": False, "t": "ü'\"\n", "d": Decimal("-0.5"), "ts": dt.datetime(2025, 6, 1, tzinfo=dt.timezone.utc),
         "j": {"a": 2, "b": []}, "bin": b"\x02", "w": 7},
        {"id": 3},
    ]


def run_both(in_tmp: Path, loads: list[Any], ours_format: str = "jsonl", theirs_format: str = "jsonl") -> tuple[Path, Path]:
    """Each load run by lakeload and by dlt (`loads`: functions of the library giving what `run()` takes)."""
    for lib, name, file_format in ((lakeload, "ours", ours_format), (dlt, "theirs", theirs_format)):
        p = lib.pipeline(pipeline_name=name, destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / f"p_{name}"))
        for load in loads:
            p.run(load(lib), loader_file_format=file_format)
    return in_tmp / "ours.duckdb", in_tmp / "theirs.duckdb"


def test_every_type_as_dlt_and_as_the_parquet_path(in_tmp: Path) -> None:
    ours, theirs = run_both(in_tmp, [lambda lib: lib.resource(all_types(), name="all_types", columns=TYPED)])
    assert columns(ours)["all_types"] == columns(theirs)["all_types"]
    assert ("d", "DECIMAL(10,3)") in columns(ours)["all_types"] and ("ts", "TIMESTAMP WITH TIME ZONE") in columns(ours)["all_types"]
    data = 'SELECT id, f, b, t, d, ts, dd, tm, j, w, ntz, seen FROM all_types'
    assert rows(ours, data) == rows(theirs, data)
    # binary: dlt leaves the bytes of the base64 text its jsonl writer wrote; lakeload decodes them
    binary = "SELECT id, bin FROM all_types"
    assert rows(ours, binary) == [(1, BIN), (2, b"\x02"), (3, None)]
    assert rows(theirs, binary) == [(1, base64.b64encode(BIN)), (2, b"Ag=="), (3, None)]
    p = lakeload.pipeline("parq", destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / "p_parq"))
    p.run(lakeload.resource(all_types(), name="all_types", columns=TYPED))
    every = "SELECT * EXCLUDE (_dlt_id, _dlt_load_id) FROM all_types"
    assert rows(ours, every) == rows(in_tmp / "parq.duckdb", every)
    assert columns(ours) == columns(in_tmp / "parq.duckdb")


def test_json_objects_keep_their_keys(in_tmp: Path) -> None:
    """Objects of different keys in one `json` column load as given (dlt's jsonl load adds the others as nulls)."""
    records = [{"id": 1, "j": {"a": 1}}, {"id": 2, "j": {"b": [1, 2]}}, {"id": 3, "j": {"c": {"d": None}}}]
    ours, theirs = run_both(in_tmp, [lambda lib: lib.resource(records, name="docs", columns={"j": {"data_type": "json"}})])
    assert rows(ours, "SELECT id, j FROM docs") == [(1, '{"a":1}'), (2, '{"b":[1,2]}'), (3, '{"c":{"d":null}}')]
    assert rows(theirs, "SELECT id, j FROM docs")[0] == (1, '{"a":1,"b":null,"c":null}')


def merge_loads() -> list[Any]:
    first = [{"id": i, "v": 1, "pets": [{"name": f"p{i}.{k}", "toys": [k, k + 1]} for k in range(i % 3)]} for i in range(5)]
    second = [{"id": 1, "v": 2, "pets": [{"name": "new", "toys": [9]}]}, {"id": 7, "v": 2}, {"id": 2, "v": 2, "pets": []}]

    def merged(data: list[dict[str, Any]]) -> Any:
        return lambda lib: lib.resource(data, name="users", primary_key="id", write_disposition="merge")
    return [merged(first), merged(second)]


def test_append_replace_and_merge_with_nested_tables(in_tmp: Path) -> None:
    events = [{"id": 1, "tags": ["a", "b"], "meta": {"k": 1}}, {"id": 2, "tags": [], "extra": "x"}]
    loads = [
        lambda lib: lib.resource(events, name="events"),
        lambda lib: lib.resource(events[:1], name="events"),
        lambda lib: lib.resource(events, name="snapshot", write_disposition="replace"),
        lambda lib: lib.resource(events[1:], name="snapshot", write_disposition="replace"),
        *merge_loads(),
    ]
    ours, theirs = run_both(in_tmp, loads)
    assert {t: c for t, c in columns(ours).items() if not t.startswith("_dlt")} == {
        t: c for t, c in columns(theirs).items() if not t.startswith("_dlt")}
    for sql in ("SELECT id, meta__k, extra FROM events", "SELECT id, extra FROM snapshot", "SELECT id, v FROM users",
                "SELECT e.id, t.value, t._dlt_list_idx FROM events__tags t JOIN events e ON t._dlt_parent_id = e._dlt_id",
                "SELECT u.id, p.name FROM users__pets p JOIN users u ON p._dlt_parent_id = u._dlt_id",
                "SELECT p.name, t.value FROM users__pets__toys t JOIN users__pets p ON t._dlt_parent_id = p._dlt_id",
                "SELECT count(*) FROM users__pets__toys"):
        assert rows(ours, sql) == rows(theirs, sql), sql
    assert rows(ours, "SELECT id FROM snapshot") == [(2,)]
    assert rows(ours, "SELECT u.id, p.name FROM users__pets p JOIN users u ON p._dlt_parent_id = u._dlt_id") == [
        (1, "new"), (4, "p4.0")]


def test_staging_bucket_holds_the_jsonl_files(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`staging="filesystem"`: the gzipped jsonl files go to the bucket (`.jsonl.gz`) and DuckDB reads them there."""
    bucket = in_tmp / "bucket"
    monkeypatch.setenv("DESTINATION__FILESYSTEM__BUCKET_URL", str(bucket))
    p = lakeload.pipeline("staged", destination="duckdb", staging="filesystem", dataset_name="mydata",
                          pipelines_dir=str(in_tmp / "p"))
    info = p.run(lakeload.resource(all_types(), name="all_types", columns=TYPED), loader_file_format="jsonl")
    staged = sorted(bucket.glob("mydata/all_types/*"))
    assert [f.name for f in staged] == [f"{info.loads_ids[0]}.0.jsonl.gz"]
    assert gzip.decompress(staged[0].read_bytes()).startswith(b'{"id":1,')
    assert rows(in_tmp / "staged.duckdb", "SELECT id, d, bin FROM all_types") == [
        (1, Decimal("12.345"), BIN), (2, Decimal("-0.500"), b"\x02"), (3, None, None)]


def test_uncompressed_jsonl_files_load(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`[normalize.data_writer] disable_compression`: plain `.jsonl` files, read without gzip."""
    monkeypatch.setenv("NORMALIZE__DATA_WRITER__DISABLE_COMPRESSION", "true")
    p = lakeload.pipeline("plain", destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / "p"))
    info = p.run(lakeload.resource(all_types(), name="all_types", columns=TYPED), loader_file_format="jsonl")
    files = [f.file_path for f in info.load_packages[0].jobs["completed_jobs"] if "all_types" in f.file_path]
    assert files and all(f.endswith(".jsonl") for f in files)
    assert rows(in_tmp / "plain.duckdb", "SELECT id, ts, bin FROM all_types") == [
        (1, dt.datetime(2026, 1, 1, 10, 0, 0, 123456, tzinfo=dt.timezone.utc), BIN),
        (2, dt.datetime(2025, 6, 1, tzinfo=dt.timezone.utc), b"\x02"), (3, None, None)]


def test_a_child_process_loads_a_big_jsonl_package(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lakeload.load import duckdb_loader

    monkeypatch.setattr(duckdb_loader, "CHILD_BYTES", 0)
    p = lakeload.pipeline("child", destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / "p"))
    p.run(lakeload.resource(all_types(), name="all_types", columns=TYPED), loader_file_format="jsonl")
    assert rows(in_tmp / "child.duckdb", "SELECT id, j, bin FROM all_types") == [
        (1, '{"a":1,"b":[1,2]}', BIN), (2, '{"a":2,"b":[]}', b"\x02"), (3, None, None)]


def test_insert_values_loads_as_parquet(in_tmp: Path, caplog: pytest.LogCaptureFixture) -> None:
    """dlt's default format on DuckDB, asked for by name: written as Parquet (an info log says so), the same rows as
    dlt's `insert_values` load."""
    with caplog.at_level(logging.INFO, logger="lakeload.normalize"):
        ours, theirs = run_both(in_tmp, [lambda lib: lib.resource(all_types()[:2], name="all_types", columns=TYPED)],
                                ours_format="insert_values", theirs_format="insert_values")
    assert "lakeload writes the rows as parquet files" in caplog.text
    assert columns(ours)["all_types"] == columns(theirs)["all_types"]
    every = "SELECT * EXCLUDE (_dlt_id, _dlt_load_id) FROM all_types"
    assert rows(ours, every) == rows(theirs, every)


def test_a_format_the_destination_does_not_load_fails_before_extract(in_tmp: Path) -> None:
    """`csv` on DuckDB, `insert_values` on the filesystem destination: refused as dlt refuses them, nothing pending."""
    p = lakeload.pipeline("csv", destination="duckdb", dataset_name="mydata", pipelines_dir=str(in_tmp / "p"))
    with pytest.raises(ConfigurationError, match="'duckdb' does not load loader_file_format='csv'; it loads parquet, jsonl"):
        p.run([{"id": 1}], table_name="items", loader_file_format="csv")
    assert p.list_extracted_load_packages() == [] and p.list_normalized_load_packages() == []
    files = lakeload.pipeline("iv", destination=lakeload.destinations.filesystem(str(in_tmp / "bucket")),
                              dataset_name="mydata", pipelines_dir=str(in_tmp / "p"))
    with pytest.raises(ConfigurationError, match="does not load loader_file_format='insert_values'"):
        files.run([{"id": 1}], table_name="items", loader_file_format="insert_values")

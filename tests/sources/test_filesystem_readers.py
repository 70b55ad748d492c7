"""dlt's `readers()` source (`from dlt.sources.filesystem import readers`) against dlt 1.31: the same script on the
same local files loads the same rows into each tool's DuckDB database.

`readers(bucket_url, credentials, file_glob, ...)` is a source of four reader resources over the same files:
`read_csv`, `read_jsonl`, `read_parquet` and `read_csv_duckdb`, each callable with its reader's arguments. lakeload
reads them all with Spark; its `read_csv_duckdb` gives `read_csv`'s rows. dlt's own `read_csv_duckdb` pages its
result with DuckDB's `fetchmany`, which this environment's duckdb 2 no longer has, so lakeload's is compared with
dlt's `read_csv` (the rows dlt 1.31 loads with either reader, on duckdb 1.4, are equal for these files).

Also here: the files resource's own steps (`files.add_filter(...)`) pick which files `files | read_csv()` reads, as
in dlt (the advanced course, lesson 3, filters files by name and size so).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import dlt
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakeload

pytestmark = pytest.mark.usefixtures("spark")
dlt_files = importlib.import_module("dlt.sources.filesystem")
lakeload_files = importlib.import_module("lakeload.sources.filesystem")
T0 = 1_700_000_000
READERS = ["read_csv", "read_jsonl", "read_parquet", "read_csv_duckdb"]


def write_files(folder: Path) -> Path:
    """Two CSV, two JSONL and two Parquet files (ints, floats, empty values, booleans, nested JSON, timestamps)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a.csv").write_text("id,name,score,flag\n1,a,1.5,true\n2,b,,false\n")
    (folder / "b.csv").write_text("id,name,score,flag\n3,c,2.25,true\n")
    (folder / "a.jsonl").write_text(json.dumps({"id": 1, "name": "a"}) + "\n" + json.dumps({"id": 2, "extra": {"x": 1}}) + "\n")
    (folder / "b.jsonl").write_text(json.dumps({"id": 3, "name": "c", "tags": ["t1", "t2"]}) + "\n")
    for name, ids in (("a.parquet", [1, 2]), ("b.parquet", [3])):
        table = pa.table({"id": pa.array(ids, pa.int64()), "amount": [i * 1.5 for i in ids],
                          "at": pa.array([datetime(2024, 1, i, 12, tzinfo=timezone.utc) for i in ids], pa.timestamp("us", tz="UTC"))})
        pq.write_table(table, folder / name)
    for n, path in enumerate(sorted(folder.iterdir())):
        os.utime(path, (T0 + n, T0 + n))
    return folder


def pipeline(lib: Any, root: Path, name: str = "readers") -> Any:
    tool = lib.__name__
    return lib.pipeline(name, destination=lib.destinations.duckdb(str(root / f"{tool}.duckdb")), dataset_name="ds",
                        pipelines_dir=str(root / f"{tool}-pipelines"))


def rows(lib: Any, root: Path, table: str) -> list[dict[str, Any]]:
    """The table's rows without dlt's columns, in a fixed order."""
    with duckdb.connect(str(root / f"{lib.__name__}.duckdb"), read_only=True) as db:
        relation = db.sql(f'SELECT * EXCLUDE (_dlt_load_id, _dlt_id) FROM ds."{table}"')
        found = [dict(zip(relation.columns, values, strict=True)) for values in relation.fetchall()]
    return sorted(found, key=lambda row: json.dumps(row, sort_keys=True, default=str))


@pytest.fixture
def files(tmp_path: Path) -> Path:
    return write_files(tmp_path / "files")


@pytest.mark.parametrize(("reader", "glob"), [
    ("read_csv", "*.csv"), ("read_jsonl", "*.jsonl"), ("read_parquet", "*.parquet"), ("read_csv_duckdb", "*.csv"),
])
def test_each_reader_of_readers_loads_dlts_rows(tmp_path: Path, files: Path, reader: str, glob: str) -> None:
    dlt_reader = "read_csv" if reader == "read_csv_duckdb" else reader  # see the module
    pipeline(dlt, tmp_path).run(getattr(dlt_files.readers(str(files), file_glob=glob), dlt_reader)().with_name("t"))
    source = lakeload_files.readers(str(files), file_glob=glob)
    pipeline(lakeload, tmp_path).run(getattr(source, reader)().with_name("t"))
    expected = rows(dlt, tmp_path, "t")
    assert len(expected) == 3
    assert rows(lakeload, tmp_path, "t") == expected


def test_a_reader_resource_takes_its_readers_arguments_and_keeps_its_name(tmp_path: Path, files: Path) -> None:
    """`readers(...).read_parquet(chunksize=1)`: dlt's call of the reader resource; unrenamed, its table is its name."""
    for lib, module in ((dlt, dlt_files), (lakeload, lakeload_files)):
        source = module.readers(bucket_url=str(files), file_glob="*.parquet")
        assert source.name == "readers" and list(source.resources) == READERS, lib.__name__
        pipeline(lib, tmp_path).run(source.read_parquet(chunksize=1))
    assert rows(lakeload, tmp_path, "read_parquet") == rows(dlt, tmp_path, "read_parquet")


def test_readers_incremental_on_modification_date_as_dlt(tmp_path: Path, files: Path) -> None:
    """dlt's docs example: `readers(..., incremental=incremental("modification_date")).read_csv().with_name(...)`;
    an unchanged folder loads nothing, a newer file only its rows; the cursor is kept under dlt's resource name."""
    loaded: dict[str, list[int]] = {}
    cursors: dict[str, str] = {}
    for lib, module in ((dlt, dlt_files), (lakeload, lakeload_files)):
        p = pipeline(lib, tmp_path, "readers_inc")
        counts = []
        for run in range(3):
            if run == 2:
                (files / "c.csv").write_text("id,name,score,flag\n4,d,3.5,false\n")
                os.utime(files / "c.csv", (T0 + 100, T0 + 100))
            source = module.readers(str(files), file_glob="*.csv", incremental=lib.sources.incremental("modification_date"))
            p.run(source.read_csv().with_name("csv_rows"))
            counts.append(p.last_trace.last_normalize_info.row_counts.get("csv_rows", 0))
        (files / "c.csv").unlink()
        cursor = p.state["sources"][p.default_schema_name]["resources"]["filesystem_csv_rows"]["incremental"]
        cursors[lib.__name__] = str(cursor["modification_date"]["last_value"]).replace("T", " ")
        loaded[lib.__name__] = counts
    assert loaded["dlt"] == [3, 0, 1]
    assert cursors["dlt"].startswith("2023-11-14 22:15:00")  # c.csv's time
    assert (loaded["lakeload"], cursors["lakeload"]) == (loaded["dlt"], cursors["dlt"])
    assert rows(lakeload, tmp_path, "csv_rows") == rows(dlt, tmp_path, "csv_rows")


def test_the_files_resources_filter_picks_the_files_a_reader_reads(tmp_path: Path, files: Path) -> None:
    """`files.add_filter(...)` before `files | read_csv()` (advanced course, lesson 3): only the kept files are read."""
    for lib, module in ((dlt, dlt_files), (lakeload, lakeload_files)):
        fs = module.filesystem(bucket_url=str(files), file_glob="*.csv")
        fs.add_filter(lambda item: item["file_name"].startswith("a") and item["size_in_bytes"] < 1_000_000)
        pipeline(lib, tmp_path).run((fs | module.read_csv()).with_name("filtered"))
    assert rows(lakeload, tmp_path, "filtered") == rows(dlt, tmp_path, "filtered")
    assert sorted(row["id"] for row in rows(lakeload, tmp_path, "filtered")) == [1, 2]


def test_readers_signature_is_dlts() -> None:
    def parameters(fn: Any) -> list[str]:
        return [p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]

    assert parameters(lakeload_files.readers) == parameters(dlt_files.readers)


def test_duckdb_options_of_read_csv_duckdb_are_refused() -> None:
    with pytest.raises(lakeload.LakeloadError, match=r"read_csv_duckdb\(filename=\.\.\.\): lakeload reads CSV with Spark"):
        lakeload_files.readers("data/").read_csv_duckdb(filename=True)

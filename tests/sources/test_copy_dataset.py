"""Copying a dataset: data that already carries `_dlt_*` columns loads as dlt loads it.

dlt 1.31 keeps an incoming `_dlt_id`, replaces `_dlt_load_id` with the new load's id (in its place) and keeps
the other `_dlt_*` columns as data. lakeload must do the same for DataFrames (Parquet files, Spark frames) and
records, and such a package must never block later runs.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

import duckdb
import pytest

import lakeload
from lakeload.sources.filesystem import filesystem, read_parquet

pytestmark = pytest.mark.usefixtures("spark")


def _pipeline(tmp_path: Path, name: str, bucket: str) -> lakeload.Pipeline:
    destination = lakeload.destinations.filesystem(bucket_url=str(tmp_path / bucket))
    return lakeload.pipeline(name, destination=destination, dataset_name="ds", pipelines_dir=str(tmp_path / "pipelines"))


def _rows(path: Path) -> list[dict[str, Any]]:
    files = sorted(glob.glob(str(path / "*.parquet")))
    assert files, f"no parquet files in {path}"
    return duckdb.sql(f"SELECT * FROM read_parquet({files!r}) ORDER BY ALL").to_arrow_table().to_pylist()


@pytest.fixture
def source_bucket(tmp_path: Path) -> Path:
    """A dataset lakeload loaded: `users` and its nested `users__pets`."""
    p = _pipeline(tmp_path, "source", "src")
    records = [{"id": 1, "pets": [{"n": "a"}, {"n": "b"}]}, {"id": 2, "pets": []}, {"id": 3, "pets": [{"n": "c"}]}]
    p.run(records, table_name="users", loader_file_format="parquet")
    return tmp_path / "src" / "ds"


@pytest.mark.parametrize("table", ["users", "users__pets"])
def test_parquet_copy_of_a_dataset_matches_dlt(tmp_path: Path, source_bucket: Path, table: str) -> None:
    import dlt
    from dlt.sources.filesystem import filesystem as dlt_filesystem
    from dlt.sources.filesystem import read_parquet as dlt_read_parquet

    source = source_bucket / table
    p = _pipeline(tmp_path, "copy", "dest")
    info = p.run(filesystem(str(source), file_glob="*.parquet") | read_parquet(), table_name="copied", loader_file_format="parquet")
    load_id = info.load_ids[0]

    oracle = dlt.pipeline("oracle", destination=dlt.destinations.filesystem(str(tmp_path / "dlt")), dataset_name="ds",
                          pipelines_dir=str(tmp_path / "dlt_pipelines"))
    oracle.run(dlt_filesystem(f"file://{source}", file_glob="*.parquet") | dlt_read_parquet(), table_name="copied",
               loader_file_format="parquet")

    ours, theirs, original = _rows(tmp_path / "dest" / "ds" / "copied"), _rows(tmp_path / "dlt" / "ds" / "copied"), _rows(source)
    assert list(ours[0]) == list(theirs[0])  # same columns, same order
    assert {r["_dlt_load_id"] for r in ours} == {load_id}
    strip = [{k: v for k, v in r.items() if k != "_dlt_load_id"} for r in ours]
    assert strip == [{k: v for k, v in r.items() if k != "_dlt_load_id"} for r in theirs]
    assert strip == [{k: v for k, v in r.items() if k != "_dlt_load_id"} for r in original]  # _dlt_id kept
    ours_columns = {n: c.get("data_type") for n, c in p.default_schema.tables["copied"]["columns"].items()}
    theirs_columns = {n: c.get("data_type") for n, c in oracle.default_schema.tables["copied"]["columns"].items()}
    assert ours_columns == theirs_columns


def test_a_frame_with_dlt_columns_and_nested_lists(tmp_path: Path, spark: Any) -> None:
    """A Spark DataFrame carrying `_dlt_*` columns at the root and inside nested elements loads once, no clash."""
    frame = spark.createDataFrame(
        [(1, "old", "id-1", "r1", [("k1", 5)]), (2, "old", None, "r2", [])],
        "id long, _dlt_load_id string, _dlt_id string, _dlt_root_id string, kids array<struct<_dlt_id: string, v: long>>",
    )
    p = _pipeline(tmp_path, "frames", "dest")
    info = p.run(frame, table_name="t", loader_file_format="parquet", write_disposition="append")
    root = _rows(tmp_path / "dest" / "ds" / "t")
    assert [r["id"] for r in root] == [1, 2]
    assert root[0]["_dlt_id"] == "id-1" and root[1]["_dlt_id"] and root[1]["_dlt_id"] != "id-1"
    assert {r["_dlt_load_id"] for r in root} == {info.load_ids[0]}
    assert [r["_dlt_root_id"] for r in root] == ["r1", "r2"]  # data on a root table, as in dlt
    kids = _rows(tmp_path / "dest" / "ds" / "t__kids")
    assert [(k["_dlt_id"], k["v"], k["_dlt_parent_id"]) for k in kids] == [("k1", 5, "id-1")]


def test_records_with_dlt_columns_match_dlt(tmp_path: Path) -> None:
    import dlt

    records = [{"id": 5, "_dlt_load_id": "x", "_dlt_id": "myid"}, {"id": 6, "_dlt_load_id": "y"}]
    p = _pipeline(tmp_path, "records", "dest")
    info = p.run(records, table_name="recs", loader_file_format="parquet")
    oracle = dlt.pipeline("oracle_r", destination=dlt.destinations.filesystem(str(tmp_path / "dlt")), dataset_name="ds",
                          pipelines_dir=str(tmp_path / "dlt_pipelines"))
    oracle.run(records, table_name="recs", loader_file_format="parquet")
    ours, theirs = _rows(tmp_path / "dest" / "ds" / "recs"), _rows(tmp_path / "dlt" / "ds" / "recs")
    assert list(ours[0]) == list(theirs[0])
    assert [r["_dlt_id"] for r in ours][0] == "myid" and [r["_dlt_id"] for r in theirs][0] == "myid"
    assert {r["_dlt_load_id"] for r in ours} == {info.load_ids[0]}


def test_delta_merge_copy_of_a_dataset_loads_and_runs_again(tmp_path: Path, source_bucket: Path) -> None:
    """The failure the issue saw (AMBIGUOUS_REFERENCE on a Delta merge copy) is gone, and the pipeline goes on."""
    from deltalake import DeltaTable

    p = _pipeline(tmp_path, "delta_copy", "dest")
    files = filesystem(str(source_bucket / "users"), file_glob="*.parquet") | read_parquet()
    p.run(files, table_name="users", write_disposition="merge", primary_key="id", table_format="delta")
    p.run([{"id": 4}], table_name="users", write_disposition="merge", primary_key="id", table_format="delta")
    rows = DeltaTable(str(tmp_path / "dest" / "ds" / "users")).to_pyarrow_table().to_pylist()
    assert sorted(r["id"] for r in rows) == [1, 2, 3, 4]

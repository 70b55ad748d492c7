"""The one-task summary of a package's merge keys: the most rows sharing a key (nulls are one key, as in the
merge's null-safe match) and each ranged column's lowest and highest value, where JSON carries it exactly."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from lakeload.kernel.delta.keys import KeyColumns, key_summary


def _files(tmp_path: Path, *tables: pa.Table) -> list[str]:
    paths = []
    for i, table in enumerate(tables):
        path = tmp_path / f"{i}.parquet"
        pq.write_table(table, path)
        paths.append(str(path))
    return paths


def test_unique_keys_across_files_and_their_ranges(tmp_path: Path) -> None:
    files = _files(tmp_path, pa.table({"id": [5, 1], "name": ["b", "a"]}), pa.table({"id": [9, 3], "name": ["z", "c"]}))
    assert key_summary(KeyColumns(keys=["id"], ranged=["id", "name"]), files) == {
        "most": 1, "ranges": {"id": [1, 9], "name": ["a", "z"]}
    }


def test_a_key_in_two_files_and_null_keys_count_as_duplicates(tmp_path: Path) -> None:
    files = _files(tmp_path, pa.table({"id": [1, 2]}), pa.table({"id": [2, 3]}))
    assert key_summary(KeyColumns(keys=["id"], ranged=["id"]), files)["most"] == 2
    nulls = _files(tmp_path, pa.table({"id": pa.array([None, 4, None], pa.int64())}))
    assert key_summary(KeyColumns(keys=["id"], ranged=["id"]), nulls) == {"most": 2, "ranges": {"id": [4, 4]}}


def test_keys_of_several_columns_and_a_partition_column_missing_from_a_file(tmp_path: Path) -> None:
    files = _files(
        tmp_path,
        pa.table({"id": [1, 1], "kind": ["a", "b"], "day": ["d1", "d1"]}),
        pa.table({"id": [1], "kind": ["a"]}),  # no `day`: null there, another key than (1, a, d1)
    )
    assert key_summary(KeyColumns(keys=["id", "kind", "day"], ranged=["id", "kind"]), files)["most"] == 1
    assert key_summary(KeyColumns(keys=["id", "kind"], ranged=["id"]), files)["most"] == 2


def test_ranges_only_where_json_is_exact_and_an_empty_package(tmp_path: Path) -> None:
    stamps = pa.array([dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 2)], pa.timestamp("us", tz="UTC"))
    files = _files(tmp_path, pa.table({"at": stamps, "id": [1, 2], "blank": pa.nulls(2, pa.string())}))
    summary = key_summary(KeyColumns(keys=["at"], ranged=["at", "id", "blank"]), files)
    assert summary == {"most": 1, "ranges": {"id": [1, 2]}}  # timestamps and all-null columns: no pruning by them
    empty = _files(tmp_path, pa.table({"id": pa.array([], pa.int64())}))
    assert key_summary(KeyColumns(keys=["id"], ranged=["id"]), empty) == {"most": 0, "ranges": {}}

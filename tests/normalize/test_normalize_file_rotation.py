"""Normalize's file rotation by dlt's `[normalize.data_writer]` (and `[data_writer]`), side by side with dlt 1.31: the
same pipeline runs with each into a local filesystem bucket, in parquet and in jsonl, and the files per table and
the rows in them are compared.

Lakeload normalizes each extracted file in its own Spark task, dlt (one worker) streams all of a package through one
writer per table; the cases keep the two comparable: one extracted file, or extracted files that end where normalized
ones do."""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any

import dlt
import orjson
import pyarrow.parquet as pq
import pytest

import lakeload

pytestmark = pytest.mark.usefixtures("spark")


def rows_source(lib: Any) -> Any:
    @lib.resource(name="orders")
    def orders() -> Any:
        for i in range(50):
            yield {"id": i, "lines": [{"sku": f"s{i}-{k}"} for k in range(2)]}  # 100 rows of `orders__lines`

    return orders()


def read_file(path: Path) -> list[dict[str, Any]]:
    if path.name.endswith(".parquet"):
        return pq.read_table(path).to_pylist()
    raw = path.read_bytes()
    raw = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    return [orjson.loads(line) for line in raw.splitlines()]


def loaded(lib: Any, root: Path, file_format: str) -> dict[str, tuple[int, list[Any]]]:
    """Files per data table in the bucket, and the table's rows (their data columns) in a stable order."""
    pipeline = lib.pipeline("rotation", destination=lib.destinations.filesystem(str(root / "bucket")),
                            pipelines_dir=str(root / "pipelines"), dataset_name="ds")
    pipeline.run(rows_source(lib), loader_file_format=file_format)
    found: dict[str, tuple[int, list[Any]]] = {}
    for table in ("orders", "orders__lines"):
        files = sorted((root / "bucket" / "ds" / table).iterdir())
        rows = [row for path in files for row in read_file(path)]
        data = sorted((row.get("id"), row.get("sku")) for row in rows)
        found[table] = (len(files), data)
    return found


CASES = [
    ({"NORMALIZE__DATA_WRITER__FILE_MAX_ITEMS": "10"}, {"orders": 5, "orders__lines": 10}),
    ({"NORMALIZE__DATA_WRITER__FILE_MAX_ITEMS": "7", "NORMALIZE__DATA_WRITER__BUFFER_MAX_ITEMS": "3"},
     {"orders": 6, "orders__lines": 12}),  # dlt writes whole buffers: 9 rows a file
    ({"DATA_WRITER__FILE_MAX_ITEMS": "25"}, {"orders": 2, "orders__lines": 4}),  # extract too: 2 files of 25 items
    ({"ROTATION__NORMALIZE__DATA_WRITER__FILE_MAX_ITEMS": "40"}, {"orders": 2, "orders__lines": 3}),
]


@pytest.mark.parametrize("file_format", ["parquet", "jsonl"])
@pytest.mark.parametrize(("env", "expected"), CASES, ids=["-".join(env) for env, _ in CASES])
def test_normalized_files_per_table_as_dlt(
    env: dict[str, str], expected: dict[str, int], file_format: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    dlt_found = loaded(dlt, tmp_path / "dlt", file_format)
    lakeload_found = loaded(lakeload, tmp_path / "lakeload", file_format)
    assert {table: files for table, (files, _) in dlt_found.items()} == expected  # the oracle, as this table says
    for table, (files, rows) in dlt_found.items():
        assert lakeload_found[table][1] == rows, table  # the same rows
        assert lakeload_found[table][0] == files, (table, os.listdir(tmp_path / "lakeload" / "bucket" / "ds" / table))


def test_a_normalized_file_per_extracted_file_unlike_dlt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented difference: extracted files are normalized by separate Spark tasks, so without a
    `[normalize.data_writer]` limit a table gets a file per extracted file, where dlt's one writer makes one."""
    monkeypatch.setenv("SOURCES__DATA_WRITER__FILE_MAX_ITEMS", "10")  # extract's only: 5 extracted files
    dlt_found = loaded(dlt, tmp_path / "dlt", "parquet")
    lakeload_found = loaded(lakeload, tmp_path / "lakeload", "parquet")
    assert {table: found[0] for table, found in dlt_found.items()} == {"orders": 1, "orders__lines": 1}
    assert {table: found[0] for table, found in lakeload_found.items()} == {"orders": 5, "orders__lines": 5}
    assert {table: found[1] for table, found in lakeload_found.items()} == {t: f[1] for t, f in dlt_found.items()}

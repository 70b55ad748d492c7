"""`TableFileWriter`'s files when `FileLimits` split a table's rows (dlt's `[normalize.data_writer]`): rows one by one,
Arrow tables and rendered jsonl lines all cut at exactly `max_rows`; `max_bytes` closes a file after the chunk that
reaches it; no empty file after the last full one; the rows stay the same and in order."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakeload.kernel.normalize.writers import FileLimits, TableFileWriter
from lakeload.schema.typing import TColumn

COLUMNS: dict[str, TColumn] = {"id": {"name": "id", "data_type": "bigint", "nullable": True}}


def writer(tmp_path: Path, file_format: str, limits: FileLimits, compressed: bool = False) -> TableFileWriter:
    ext = {"jsonl": "jsonl.gz" if compressed else "jsonl", "parquet": "parquet", "csv": "csv"}[file_format]
    return TableFileWriter(str(tmp_path / f"items.abcdef0123.{ext}"), file_format, COLUMNS, compressed, "items",
                           "abcdef0123", ext, limits)


def read_ids(path: str) -> list[int]:
    if path.endswith(".parquet"):
        return pq.read_table(path).column("id").to_pylist()
    raw = Path(path).read_bytes()
    raw = gzip.decompress(raw) if path.endswith(".gz") else raw
    if path.endswith((".csv", ".csv.gz")):
        return [int(line) for line in raw.decode().splitlines()[1:]]
    return [orjson.loads(line)["id"] for line in raw.splitlines()]


@pytest.mark.parametrize("file_format", ["jsonl", "parquet", "csv"])
def test_rows_one_by_one_cut_at_max_rows(tmp_path: Path, file_format: str) -> None:
    out = writer(tmp_path, file_format, FileLimits(max_rows=7))
    for i in range(50):
        out.write({"id": i})
    files = out.close()
    assert [f["rows"] for f in files] == [7] * 7 + [1]
    assert [i for f in files for i in read_ids(f["path"])] == list(range(50))
    assert len({f["file_id"] for f in files}) == 8 and all(f["path"].endswith(f"items.{f['file_id']}.{f['ext']}") for f in files)
    assert not list(tmp_path.glob("*.tmp"))


def test_arrow_tables_are_sliced_and_full_files_leave_no_empty_one(tmp_path: Path) -> None:
    out = writer(tmp_path, "parquet", FileLimits(max_rows=10))
    for start in range(0, 40, 8):
        out.write_arrow(pa.table({"id": pa.array(range(start, start + 8), pa.int64())}))
    files = out.close()
    assert [f["rows"] for f in files] == [10, 10, 10, 10]  # 40 rows: no fifth, empty file
    assert [i for f in files for i in read_ids(f["path"])] == list(range(40))


def test_rendered_lines_are_cut_at_line_ends(tmp_path: Path) -> None:
    out = writer(tmp_path, "jsonl", FileLimits(max_rows=4), compressed=True)
    out.write_lines(b"".join(orjson.dumps({"id": i}) + b"\n" for i in range(10)), 10)
    out.write({"id": 10})
    files = out.close()
    assert [f["rows"] for f in files] == [4, 4, 3]
    assert [i for f in files for i in read_ids(f["path"])] == list(range(11))


def test_max_bytes_closes_a_file_after_the_chunk_that_reaches_it(tmp_path: Path) -> None:
    out = writer(tmp_path, "jsonl", FileLimits(max_bytes=20))
    for start in range(0, 30, 5):
        out.write_lines(b"".join(orjson.dumps({"id": i}) + b"\n" for i in range(start, start + 5)), 5)
    files = out.close()
    assert [f["rows"] for f in files] == [5] * 6  # each chunk of 5 lines passes 20 bytes
    assert all(f["bytes"] >= 20 for f in files)


def test_abort_removes_the_published_files(tmp_path: Path) -> None:
    out = writer(tmp_path, "jsonl", FileLimits(max_rows=2))
    for i in range(5):
        out.write({"id": i})
    out._flush()
    out.abort()
    assert list(tmp_path.glob("items.*")) == []

"""Reading splits of source files in place: byte ranges hold every line exactly once; changes are caught."""

from __future__ import annotations

import gzip
import os
import random
from collections.abc import Callable
from pathlib import Path

import fsspec
import pytest

from lakeload.errors import NormalizeError
from lakeload.extract.external import byte_ranges
from lakeload.kernel.normalize.split_io import (
    TAIL_BLOCK_BYTES,
    SourceFile,
    file_version,
    iter_split_lines,
    read_split_bytes,
)


def local_source(path: Path, start: int = 0, end: int | None = None) -> SourceFile:
    info = fsspec.filesystem("file").info(str(path))
    compression = "gzip" if path.name.endswith(".gz") else None
    return SourceFile(f"file://{path}", str(path), info["size"], file_version(info), start, end, compression,
                      bucket_url=f"file://{path.parent}")


def memory_source(path: Path, start: int = 0, end: int | None = None) -> SourceFile:
    """The same file in fsspec's memory filesystem: read through the blocks of a bucket, not one `readinto`."""
    fs = fsspec.filesystem("memory")
    key = f"/splits{path}"
    if not fs.exists(key) or fs.cat_file(key) != path.read_bytes():
        fs.pipe_file(key, path.read_bytes())
    info = fs.info(key)
    return SourceFile(f"memory:/{key}", key, info["size"], file_version(info), start, end, bucket_url="memory://splits")


def splits_of(path: Path, max_bytes: int, source: Callable[..., SourceFile] = local_source) -> list[SourceFile]:
    return [source(path, s, e) for s, e in byte_ranges(path.stat().st_size, max_bytes)]


def random_text(rng: random.Random) -> bytes:
    lines = [b"x" * rng.choice([0, 1, 2, 5, 17, 40]) + str(i).encode() * rng.randint(0, 3) for i in range(rng.randint(0, 60))]
    text = b"\n".join(lines)
    return text + (b"\n" if rng.random() < 0.5 else b"")


@pytest.mark.parametrize("source", [local_source, memory_source], ids=["local", "bucket"])
@pytest.mark.parametrize("seed", range(40))
def test_byte_ranges_hold_each_line_exactly_once(tmp_path: Path, seed: int, source: Callable[..., SourceFile]) -> None:
    rng = random.Random(seed)
    data = random_text(rng)
    path = tmp_path / "f.jsonl"
    path.write_bytes(data)
    for max_bytes in (1, 2, 3, 7, 16, 64, 1000):
        splits = splits_of(path, max_bytes, source)
        pieces = [read_split_bytes(s) for s in splits]
        assert all(type(piece) is bytearray for piece in pieces)  # mutable: the fast path blanks records in place
        assert b"".join(pieces) == data
        lines = [line for s in splits for line in iter_split_lines(s)]
        assert lines == data.split(b"\n")[: -1 if data.endswith(b"\n") else None]


def test_a_split_reads_through_the_line_crossing_its_end_and_skips_a_partial_first_line(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a":1}\n{"a":22}\n{"a":333}\n')  # lines start at 0, 8, 17
    assert list(iter_split_lines(local_source(path, 0, 9))) == [b'{"a":1}', b'{"a":22}']
    assert list(iter_split_lines(local_source(path, 9, 17))) == []  # the line at 17 belongs to the next split
    assert list(iter_split_lines(local_source(path, 8, 9))) == [b'{"a":22}']
    assert list(iter_split_lines(local_source(path, 17, None))) == [b'{"a":333}']


@pytest.mark.parametrize("source", [local_source, memory_source], ids=["local", "bucket"])
def test_a_line_longer_than_the_tail_reads_is_read_whole(tmp_path: Path, source: Callable[..., SourceFile]) -> None:
    long = b'{"a":"' + b"x" * (3 * TAIL_BLOCK_BYTES + 5) + b'"}'
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a":1}\n' + long + b'\n{"a":2}\n')
    assert read_split_bytes(source(path, 0, 12)) == b'{"a":1}\n' + long + b"\n"
    assert read_split_bytes(source(path, 12, None)) == b'{"a":2}\n'
    assert read_split_bytes(source(path, 9, 10)) == bytearray()  # the long line starts at 8, in the split before


def test_gzip_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl.gz"
    path.write_bytes(gzip.compress(b"1\n2\n\n3"))
    assert list(iter_split_lines(local_source(path))) == [b"1", b"2", b"", b"3"]


def test_changed_or_vanished_file_fails_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"1\n2\n")
    source = local_source(path)
    path.write_bytes(b"1\n2\n3\n")
    with pytest.raises(NormalizeError, match=r"f\.jsonl changed after extract \(size 4 -> 6"):
        list(iter_split_lines(source))
    os.remove(path)
    with pytest.raises(NormalizeError, match=r"f\.jsonl vanished after extract"):
        read_split_bytes(source)


def test_remote_ranges_and_secrets_stay_out_of_repr() -> None:
    fs = fsspec.filesystem("memory")
    fs.pipe_file("/bucket/f.jsonl", b"a\nbb\nccc\n")
    info = fs.info("/bucket/f.jsonl")
    source = SourceFile("memory://bucket/f.jsonl", "/bucket/f.jsonl", info["size"], file_version(info), 3, None,
                        bucket_url="memory://bucket", options={"secret": "hunter22"}, secrets=("hunter22",))
    assert list(iter_split_lines(source)) == [b"ccc"]
    assert "hunter22" not in repr(source)

"""Files a source hands over to normalize to be read in place: they are never parsed on the driver.

A resource yields an `ExternalFiles` item; the extractor registers the files as splits of the load
package (`split_entries`): a gzip file is one split, a plain file bigger than `[extract] file_max_bytes`
is cut into near-equal byte ranges that Spark tasks read in parallel. When the item knows how many tasks the
executors run at once (`parallelism`), the cut is the one that ends the job soonest (`split_shapes`).
The manifest records each file's URL, size and version (etag or modification time) but never the bucket's
credentials: those stay in the extracting process (`ExtractResult.source_options`) or are resolved again from
configuration.

>>> byte_ranges(10, 4)
[(0, 3), (3, 6), (6, None)]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from lakeload.config.open_types import FsspecOptions
from lakeload.extract import split_shapes

GZIP_SUFFIXES = (".gz", ".gzip")


@dataclass(frozen=True)
class ExternalFile:
    """One file in a bucket: its URL (no secrets), its path in the bucket's filesystem, size and version."""

    url: str
    path: str
    size: int
    version: str

    @property
    def compression(self) -> str | None:
        return "gzip" if self.path.lower().endswith(GZIP_SUFFIXES) else None


@dataclass
class ExternalFiles:
    """An item a resource yields: JSONL files of one bucket for normalize's executors to read in place."""

    bucket_url: str
    files: list[ExternalFile]
    options: FsspecOptions = field(default_factory=dict, repr=False)  # fsspec options, secrets in clear
    file_format: str = "jsonl"
    add_file_name: bool = False
    parallelism: int | None = None  # tasks the executors run at once, when known (shapes the splits)

    @property
    def protocol(self) -> str:
        return urlsplit(self.bucket_url).scheme or "file"


def byte_ranges(size: int, max_bytes: int) -> list[tuple[int, int | None]]:
    """`[start, end)` ranges of at most `max_bytes` covering a file of `size` bytes; the last ends at None.

    The ranges are of near-equal size (a 140 MB file at 64 MB: three of ~47 MB, not 64 + 64 + 12), so that
    the tasks of a job take near-equal time.

    >>> byte_ranges(10, 4)
    [(0, 3), (3, 6), (6, None)]
    """
    return _open_ended(split_shapes.even(size, _count(size, max_bytes)), size)


def piece_ranges(
    sizes: list[int], splittable: list[bool], max_bytes: int, parallelism: int | None = None
) -> list[list[tuple[int, int | None]]]:
    """The byte ranges of each file of one item (the files' splits, in task order); each file's last range
    ends at None.

    Plain files are cut into near-equal ranges of at most `max_bytes` (`byte_ranges`); with the executors'
    `parallelism` known, the cut that ends the job soonest (`split_shapes`).

    >>> piece_ranges([100, 10], [True, True], 40, None)
    [[(0, 33), (33, 66), (66, None)], [(0, None)]]
    """
    counts = [_count(size, max_bytes) if can else 1 for size, can in zip(sizes, splittable, strict=True)]
    pieces = split_shapes.shape(sizes, splittable, counts, parallelism)
    return [_open_ended(ranges, size) for ranges, size in zip(pieces, sizes, strict=True)]


def _count(size: int, max_bytes: int) -> int:
    return -(-max(size, 1) // max(int(max_bytes), 1))


def _open_ended(ranges: list[tuple[int, int]], size: int) -> list[tuple[int, int | None]]:
    return [(start, end if end < size else None) for start, end in ranges]


def split_entries(external: ExternalFiles, table: str, max_bytes: int) -> list[dict[str, Any]]:
    """The package manifest's split entries for `external` (empty files are skipped)."""
    files = [file for file in external.files if file.size > 0]
    plans = piece_ranges(
        [file.size for file in files], [file.compression is None for file in files], max_bytes, external.parallelism
    )
    entries = []
    for file, ranges in zip(files, plans, strict=True):
        for start, end in ranges:
            source = {
                "bucket_url": external.bucket_url, "path": file.path, "size": file.size, "version": file.version,
                "start": start, "end": end, "compression": file.compression, "add_file_name": external.add_file_name,
            }
            entries.append({
                "path": file.url, "root_table": table, "file_format": external.file_format,
                "may_have_tags": False, "source": source,
            })
    return entries

"""Files a source hands over to normalize to be read in place: they are never parsed on the driver.

A resource yields an `ExternalFiles` item; the extractor registers the files as splits of the load
package (`split_entries`): a gzip file is one split, a plain file bigger than `[extract] file_max_bytes`
is cut into near-equal byte ranges that Spark tasks read in parallel. The manifest records each file's URL, size
and version (etag or modification time) but never the bucket's credentials: those stay in the
extracting process (`ExtractResult.source_options`) or are resolved again from configuration.

>>> byte_ranges(10, 4)
[(0, 3), (3, 6), (6, None)]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

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
    options: dict[str, Any] = field(default_factory=dict, repr=False)  # fsspec options, secrets in clear
    file_format: str = "jsonl"
    add_file_name: bool = False

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
    count = -(-max(size, 1) // max(int(max_bytes), 1))
    starts = [size * i // count for i in range(count)]
    return [(start, starts[i + 1] if i + 1 < count else None) for i, start in enumerate(starts)]


def split_entries(external: ExternalFiles, table: str, max_bytes: int) -> list[dict[str, Any]]:
    """The package manifest's split entries for `external` (empty files are skipped)."""
    entries = []
    for file in external.files:
        if file.size == 0:
            continue
        compression = file.compression
        ranges = [(0, None)] if compression or file.size <= max_bytes else byte_ranges(file.size, max_bytes)
        for start, end in ranges:
            source = {
                "bucket_url": external.bucket_url, "path": file.path, "size": file.size, "version": file.version,
                "start": start, "end": end, "compression": compression, "add_file_name": external.add_file_name,
            }
            entries.append({
                "path": file.url, "root_table": table, "file_format": external.file_format,
                "may_have_tags": False, "source": source,
            })
    return entries

"""Extract's writer: the items of one load package into its files, in constant memory.

Items go to typed-JSONL files, one root table per file, rotated at `file_max_bytes` so Spark can split the work (after
any line), or as dlt rotates them when the items' source has dlt's `file_max_items` or `file_max_bytes`
(`lakeload.config.data_writer`): a page of items stays in one file, and the limits are checked whenever dlt would
write its buffer of `buffer_max_items` items out, so a file closes after the page that makes it reach them;
Arrow tables and pandas frames go to Parquet files as they are; a Spark DataFrame is written by its executors;
external files are registered as splits, read in place by normalize. `extractor.extract_resources` drives it.

>>> import tempfile
>>> writer = PackageWriter(tempfile.mkdtemp())
>>> writer.write_items("users", [{"id": 1}, {"id": 2}])
2
>>> writer.close()
>>> [(split["root_table"], split["items"]) for split in writer.splits]
[('users', 2)]
"""

from __future__ import annotations

import os
import sys
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any, TypeVar

import lakeload.kernel.spark.working as wio
from lakeload.config.data_writer import DataWriterSettings
from lakeload.errors import ExtractError
from lakeload.extract.external import ExternalFiles, split_entries
from lakeload.extract.spark_parts import write_frame_parts
from lakeload.kernel.spark.working import WorkingStore
from lakeload.schema import typed_json
from lakeload.spark.local_paths import local_uri

FILE_MAX_BYTES = 64 * 1024 * 1024
BUFFER_BYTES = 4 * 1024 * 1024
FILLING_BYTES = 1024 * 1024  # written to a JSONL file: the listener hears that normalize will have work
_NO_LIMITS = DataWriterSettings()  # the writer's own `file_max_bytes` only
_T = TypeVar("_T")


@dataclass
class _JsonlFile:
    path: str
    handle: IO[bytes]
    max_bytes: int
    settings: DataWriterSettings
    local: str = ""  # the executor-local file uploaded to `path` when it is a bucket URL
    items: int = 0
    bytes: int = 0
    may_have_tags: bool = False
    buffered: int = 0  # items in dlt's buffer (dlt checks `file_max_items` when it writes the buffer out)
    flushed: int = 0  # items dlt would have written out to the file

    def count(self, items: int) -> bool:
        """Count `items` written in one call as dlt's buffered writer does: True when dlt would write its buffer out
        now and find the file full (`file_max_items` items or `file_max_bytes` bytes)."""
        settings = self.settings
        if not (settings.file_max_items or settings.file_max_bytes):
            return False
        self.buffered += items
        if self.buffered < settings.flush_items:
            return False
        self.flushed, self.buffered = self.flushed + self.buffered, 0
        return bool(settings.file_max_items and self.flushed >= settings.file_max_items) or bool(
            settings.file_max_bytes and self.bytes >= settings.file_max_bytes)


class PackageWriter:
    """Writes the items of one package, rotating files per root table."""

    def __init__(
        self, data_dir: str, file_max_bytes: int = FILE_MAX_BYTES, on_closed: Callable[[int, dict[str, Any]], None] | None = None,
        working: WorkingStore | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.working = working  # the bucket of `data_dir` when it is a URL (`[spark] working_url`)
        self.file_max_bytes = file_max_bytes
        self.on_closed = on_closed  # hears of every complete JSONL file (split index, split entry)
        self.on_filling: Callable[[], None] | None = None  # hears once that `FILLING_BYTES` were written
        self.splits: list[dict[str, Any]] = []
        self.source_options: dict[str, dict[str, Any]] = {}  # of external files' buckets; never in the manifest
        self._open: dict[str, _JsonlFile] = {}
        wio.make_dirs(data_dir)

    def _new_path(self, table: str, ext: str) -> str:
        return wio.join(self.data_dir, f"{len(self.splits):06d}.{table}.{ext}")

    def _new_jsonl(self, path: str, settings: DataWriterSettings) -> _JsonlFile:
        local = wio.local_temp(path) if wio.is_remote(path) else ""
        handle = open(local or path, "wb", buffering=BUFFER_BYTES)  # noqa: SIM115
        # dlt's `file_max_bytes` is checked as dlt does (`count`); else any line may close the file at lakeload's size
        max_bytes = sys.maxsize if settings.file_max_bytes else self.file_max_bytes
        return _JsonlFile(path, handle, max_bytes, settings, local)

    def _current(self, table: str, settings: DataWriterSettings) -> _JsonlFile:
        current = self._open.get(table)
        if current is None:
            path = self._new_path(table, "jsonl")
            current = self._open[table] = self._new_jsonl(path, settings)
            self.splits.append({"path": path, "root_table": table, "file_format": "jsonl"})
        return current

    def write_item(self, table: str, item: Any, settings: DataWriterSettings = _NO_LIMITS) -> None:
        """Write one item as a JSON line of the table's open file (`settings`: its source's file rotation)."""
        line, tagged = self._serialized(table, typed_json.dumps_tracked, item)
        self._write_lines(table, line + b"\n", [len(line) + 1], tagged, settings)

    def write_items(self, table: str, items: Sequence[Any], settings: DataWriterSettings = _NO_LIMITS) -> int:
        """Write `items` (one page of a resource) as JSON lines of the table's open file, rotated at `file_max_bytes`
        and after the page that fills the file to `settings.file_max_items`."""
        block, ends, tagged = self._serialized(table, typed_json.dumps_page, items)
        self._write_lines(table, block, ends, tagged, settings)
        return len(items)

    @staticmethod
    def _serialized(table: str, dumps: Callable[[Any], _T], value: Any) -> _T:
        try:
            return dumps(value)
        except ExtractError as exc:
            raise ExtractError(f"Table '{table}': {exc}") from exc
        except Exception as exc:
            raise ExtractError(f"Item for table '{table}' cannot be serialized: {exc}") from exc

    def _write_lines(self, table: str, block: bytes, ends: list[int], tagged: bool, settings: DataWriterSettings) -> None:
        """Write lines (`block`; line i ends at `ends[i]`), closing a file after the line that makes it reach
        `file_max_bytes` (the next line starts a new file), or after the lines that fill it to `file_max_items`."""
        done = 0  # lines written so far
        while done < len(ends):
            current = self._current(table, settings)
            offset = ends[done - 1] if done else 0
            last = bisect_left(ends, offset + current.max_bytes - current.bytes, lo=done)
            upto = min(last + 1, len(ends))
            current.handle.write(memoryview(block)[offset : ends[upto - 1]])
            current.bytes += ends[upto - 1] - offset
            current.items += upto - done
            current.may_have_tags |= tagged
            full = current.count(upto - done)
            done = upto
            filling = self.on_filling
            if filling is not None and current.bytes >= FILLING_BYTES:
                self.on_filling = None  # once
                filling()
            if current.bytes >= current.max_bytes or full:
                self._close(table)

    def write_arrow(self, table: str, data: Any) -> int:
        """Arrow tables/batches and pandas frames are stored as Parquet as they are (normalize keeps their schema)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not isinstance(data, (pa.Table, pa.RecordBatch)):
            data = pa.Table.from_pandas(data, preserve_index=False)
        path = self._new_path(table, "parquet")
        with wio.local_target(path, self.working) as local:
            # list fields keep their Arrow names (`item`): normalize reads the item's own schema back
            pq.write_table(pa.table(data) if isinstance(data, pa.RecordBatch) else data, local, use_compliant_nested_type=False)
        self.splits.append({"path": path, "root_table": table, "file_format": "parquet"})
        return data.num_rows

    def write_spark(self, table: str, frame: Any) -> None:
        """A Spark DataFrame is written by its executors as Parquet (its types kept): one split, normalized by Spark."""
        folder = self._new_path(table, "spark")
        if wio.is_remote(folder):
            write_frame_parts(frame, folder, self.working)
        else:
            frame.write.mode("overwrite").parquet(local_uri(folder))
        self.splits.append({"path": folder, "root_table": table, "file_format": "frame"})

    def write_external(self, table: str, external: ExternalFiles, settings: DataWriterSettings = _NO_LIMITS) -> None:
        """Files read in place by normalize: registered as splits (byte ranges of big plain files), not read here."""
        self.source_options[external.bucket_url] = external.options
        self.splits.extend(split_entries(external, table, settings.file_max_bytes or self.file_max_bytes))

    def _close(self, table: str) -> None:
        current = self._open.pop(table)
        current.handle.close()
        if current.local:
            wio.upload(current.local, current.path, self.working)
            os.remove(current.local)
        for index, split in enumerate(self.splits):
            if split["path"] == current.path:
                split.update(items=current.items, may_have_tags=current.may_have_tags)
                if self.on_closed is not None:
                    self.on_closed(index, dict(split))

    def close(self) -> None:
        """Close the open files and publish them (uploaded when the package is in a bucket)."""
        for table in list(self._open):
            self._close(table)

    def abort(self) -> None:
        """Close open files without publishing them (the package is discarded)."""
        for current in self._open.values():
            current.handle.close()
            if current.local:
                os.remove(current.local)
        self._open.clear()

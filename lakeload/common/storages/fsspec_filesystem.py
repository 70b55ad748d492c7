"""dlt's `FileItemDict` (at dlt's place, `dlt.common.storages.fsspec_filesystem`): what `filesystem()` yields for a file, a dict with the file's fields (`file_url`,
`file_name`, `relative_path`, `mime_type`, `modification_date`, `size_in_bytes`, `encoding` when gzip) that can
also open and read the file through the source's fsspec filesystem (its credentials and options).

A transformer of one's own reads files with it, as in dlt::

    @lakeload.transformer
    def read_rows(items):
        for file_obj in items:
            with file_obj.open(mode="rt", newline="") as f:   # a `.csv.gz` file is un-gzipped ("auto")
                yield from csv.DictReader(f)

    pipeline.run(filesystem("s3://bucket/exports", file_glob="*.csv*") | read_rows(), table_name="rows")

The file is read on the driver, in the extract (Spark's readers, `read_csv()` & co., read on executors).
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Mapping
from typing import IO, Any, Literal
from urllib.parse import unquote, urlsplit

from fsspec import AbstractFileSystem

from lakeload.errors import SourceError

Compression = Literal["auto", "disable", "enable"]
COMPRESSIONS = ("auto", "disable", "enable")


class FileItemDict(dict[str, Any]):
    """A file item (a dict of dlt's `FileItem` fields) with `open()`, `read_bytes()`, `local_file_path` and the
    `fsspec` filesystem it was listed with.

    >>> item = FileItemDict({"file_url": "file:///tmp/a.csv", "file_name": "a.csv"})
    >>> item.local_file_path, item["file_name"]
    ('/tmp/a.csv', 'a.csv')
    """

    def __init__(self, mapping: Mapping[str, Any], fsspec: AbstractFileSystem | None = None, path: str | None = None) -> None:
        super().__init__(mapping)
        self._fsspec = fsspec
        self._path = path  # the file's path in `fsspec` (its URL without the protocol, as listed)

    @property
    def fsspec(self) -> AbstractFileSystem:
        """The fsspec filesystem of the file's bucket (with the source's credentials); a local one for `file://`."""
        if self._fsspec is None:
            import fsspec

            self._fsspec = fsspec.filesystem(urlsplit(self["file_url"]).scheme or "file")
        return self._fsspec

    @property
    def local_file_path(self) -> str:
        """The path of a `file://` item on this machine (`/data/a.csv` for `file:///data/a.csv`)."""
        if self._path is not None and _is_local(self["file_url"]):
            return self._path
        parts = urlsplit(self["file_url"])
        return unquote(parts.path) if parts.scheme in ("", "file") else self["file_url"]

    def open(self, mode: str = "rb", compression: Compression = "auto", **kwargs: Any) -> IO[Any]:  # noqa: A003 - dlt's name
        """The file opened (`mode` "rb" or "rt", ...); `compression` "auto" un-gzips a gzip file (its `encoding` is
        "gzip"), "enable" always, "disable" never. Other keyword arguments go to fsspec's `open` (`encoding`,
        `newline` in text mode). With `file_content` in the item (`extract_content=True`), that is read instead."""
        if compression not in COMPRESSIONS:
            raise SourceError(f"FileItemDict.open(compression={compression!r}) of {self.get('file_url')}: use one of {COMPRESSIONS}.")
        gzipped = compression == "enable" or (compression == "auto" and self.get("encoding") == "gzip")
        if "file_content" in self:
            content = gzip.decompress(self["file_content"]) if gzipped else self["file_content"]
            if "t" not in mode:
                return io.BytesIO(content)
            text = {k: kwargs.pop(k) for k in ("encoding", "errors", "newline") if k in kwargs}
            return io.TextIOWrapper(io.BytesIO(content), **text)
        return self.fsspec.open(self._open_path(), mode=mode, compression="gzip" if gzipped else None, **kwargs)  # type: ignore[no-any-return]

    def read_bytes(self) -> bytes:
        """The file's bytes as stored (not un-gzipped)."""
        if self.get("file_content") is not None:
            return bytes(self["file_content"])
        with self.open(mode="rb", compression="disable") as f:
            return bytes(f.read())

    def _open_path(self) -> str:
        if self._path is not None:
            return self._path
        return self.local_file_path if _is_local(self["file_url"]) else str(self["file_url"])


def _is_local(url: str) -> bool:
    return urlsplit(url).scheme in ("", "file")

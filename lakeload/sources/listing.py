"""Files sources (driver side): where the files are, which of them match, and which are new.

Configuration comes from the arguments of `filesystem(...)`, else from `[sources.filesystem]`
(`SOURCES__FILESYSTEM__BUCKET_URL`, `[sources.filesystem.credentials]`, `kwargs`, `client_kwargs`),
resolved with `lakeload.config.resolve` and mapped to fsspec options exactly as the filesystem
destination maps its own (same credential forms and fields).

>>> file_glob_pattern("**/*.jsonl").fullmatch("2024/05/a.jsonl") is not None
True
"""

from __future__ import annotations

import logging
import posixpath
import re
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, TypedDict
from urllib.parse import urlsplit

from fsspec.utils import glob_translate

from lakeload.config.bucket_credentials import fsspec_options
from lakeload.config.open_types import FsspecOptions
from lakeload.config.resolver import resolve
from lakeload.destinations.impl.filesystem.client import bucket_error, open_filesystem
from lakeload.destinations.impl.filesystem.configuration import (
    as_dict,
    normalize_bucket_url,
    resolve_credentials,
)
from lakeload.destinations.state_types import ResourceState
from lakeload.errors import ConfigurationError, DestinationError, SourceError
from lakeload.extract.external import ExternalFile
from lakeload.kernel.normalize.split_io import file_version

logger = logging.getLogger("lakeload.sources")
SECTIONS = ("sources", "filesystem")


FileInfo = dict[str, Any]
"""One entry of fsspec's `find(detail=True)`/`info()`: `name`, `size`, `type` and keys of the backend's own
(`mtime`, `LastModified`, `ETag`, `generation`, ...). Arbitrary by design: each backend has its own."""


class _FileItem(TypedDict):
    file_name: str
    relative_path: str
    file_url: str
    mime_type: str
    modification_date: datetime | None
    size_in_bytes: int


class FileItem(_FileItem, total=False):
    """dlt's `FileItem`: what `filesystem()` yields for a file (and what its readers read)."""

    encoding: str
    file_content: bytes


@dataclass(frozen=True)
class SourceConfiguration:
    """A files source's resolved bucket: its normalized URL and fsspec options (secrets in clear, never shown)."""

    bucket_url: str
    options: FsspecOptions = field(default_factory=dict, repr=False, compare=False)

    @property
    def protocol(self) -> str:
        return urlsplit(self.bucket_url).scheme or "file"


def resolve_source(
    bucket_url: str | None, credentials: Any = None, kwargs: FsspecOptions | None = None,
    client_kwargs: FsspecOptions | None = None, pipeline_name: str | None = None,
) -> SourceConfiguration:
    """Explicit arguments over `[sources.filesystem]` configuration (env vars, TOML), as for the destination.

    >>> resolve_source("/tmp/data").bucket_url
    'file:///tmp/data'
    """

    def get(key: str, explicit: Any, hint: type) -> Any:
        return resolve(SECTIONS, key, pipeline_name, explicit, hint, required=key == "bucket_url")

    url = normalize_bucket_url(get("bucket_url", bucket_url, str).value).rstrip("/")
    if urlsplit(url).password:
        raise ConfigurationError(
            f"The files source's bucket_url holds a password; remove it from the URL and give it as a credential "
            f"(e.g. sftp_password in [sources.filesystem.credentials]): {urlsplit(url)._replace(netloc='***').geturl()}"
        )
    creds = resolve_credentials(credentials, SECTIONS, pipeline_name)
    options = fsspec_options(
        urlsplit(url).scheme or "file", creds, as_dict(get("kwargs", kwargs, dict), "kwargs"),
        as_dict(get("client_kwargs", client_kwargs, dict), "client_kwargs"), bucket_url=url,
    )
    return SourceConfiguration(url, options)


def configured_options(bucket_url: str, pipeline_name: str | None = None) -> FsspecOptions:
    """fsspec options for `bucket_url` from `[sources.filesystem]` configuration alone (no explicit arguments)."""
    return resolve_source(bucket_url, pipeline_name=pipeline_name).options


def file_glob_pattern(file_glob: str) -> re.Pattern[str]:
    """A regex for paths relative to the bucket URL; `**` matches any number of folders."""
    return re.compile(glob_translate(file_glob.strip("/") or "*"))


@dataclass(frozen=True)
class ListedFile(ExternalFile):
    """A matched file: `ExternalFile` plus its path relative to the bucket URL and its modification time."""

    relative: str = ""
    modified: datetime | None = None

    def item(self) -> FileItem:
        """dlt's file item (what `filesystem()` alone yields, and what an `incremental=` hint on it filters): the
        same fields in the same order, so that the incremental's hashes of items at its boundary are dlt's too."""
        import mimetypes

        mime_type, encoding = mimetypes.guess_type(posixpath.basename(self.relative), strict=False)
        item: FileItem = {
            "file_name": posixpath.basename(self.relative), "relative_path": self.relative, "file_url": self.url,
            "mime_type": mime_type or "application/" + (posixpath.splitext(self.relative)[1][1:] or "octet-stream"),
            "modification_date": self.modified, "size_in_bytes": self.size,
        }
        if encoding is not None:
            item["encoding"] = encoding
        return item


def _modified(info: FileInfo) -> datetime | None:
    for key in ("mtime", "LastModified", "last_modified", "updated"):
        value = info.get(key)
        if isinstance(value, (int, float)):
            return datetime.fromtimestamp(value, tz=timezone.utc)
        if isinstance(value, datetime):
            return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    return None


def _find(config: SourceConfiguration, file_glob: str) -> tuple[str, dict[str, FileInfo]]:
    try:
        fs, root = open_filesystem(config.bucket_url, config.options)
    except DestinationError as exc:
        raise SourceError(str(exc).replace("Cannot open bucket", "Files source: cannot open bucket")) from None
    depth = None if "**" in file_glob else file_glob.strip("/").count("/") + 1
    try:
        fs.info(root)  # raises on refused credentials, which some backends' `find` swallows
        found = fs.find(root, maxdepth=depth, detail=True)
    except FileNotFoundError:
        found = {}
    except Exception as exc:
        error = bucket_error(exc, config.bucket_url, config.options, "list files in", SourceError)
        raise error from None
    return root.rstrip("/"), found


def list_files(config: SourceConfiguration, file_glob: str) -> list[ListedFile]:
    """The files below the bucket URL that match `file_glob`, sorted by path; a warning when none do."""
    root, found = _find(config, file_glob)
    pattern = file_glob_pattern(file_glob)
    files = []
    for path, info in sorted(found.items()):
        relative = posixpath.relpath(path, root) if root else path
        if info.get("type", "file") != "file" or not pattern.fullmatch(relative):
            continue
        url = f"{config.bucket_url}/{relative}"
        files.append(ListedFile(url, path, int(info.get("size") or 0), file_version(info), relative, _modified(info)))
    if not files:
        message = f"No file in {config.bucket_url} matches file_glob {file_glob!r}; nothing is extracted from it."
        logger.warning(message)
        warnings.warn(message, stacklevel=4)
    return files


def pick_new(files: list[ListedFile], resource_state: ResourceState, config: SourceConfiguration, file_glob: str) -> list[ListedFile]:
    """The files not loaded before (unknown URL or another version), recorded in `resource_state["files"]`.

    Files of this source's scope (bucket URL and glob) that are gone from the listing are forgotten,
    so the state holds at most one entry per existing file.
    """
    known: dict[str, str] = resource_state.setdefault("files", {})
    new = [f for f in files if known.get(f.url) != f.version]
    listed = {f.url for f in files}
    prefix, pattern = config.bucket_url + "/", file_glob_pattern(file_glob)
    for url in [u for u in known if u not in listed and u.startswith(prefix)]:
        if pattern.fullmatch(url[len(prefix):]):
            del known[url]
    known.update({f.url: f.version for f in new})
    logger.info("%d new or changed of %d files in %s (%s)", len(new), len(files), config.bucket_url, file_glob)
    return new

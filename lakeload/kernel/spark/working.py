"""Executor-safe: read and write load package data files at local paths or in the working bucket.

With `[spark] working_url` on an object store (`s3://`, `gs://`, `az://`, `abfss://`, `memory://`), package
data files are URLs such as `s3://bucket/prefix/<pipeline>/<load_id>/extracted/data/000000.users.jsonl`.
Spark here has no Hadoop connectors, so every process (driver or executor) reaches them through fsspec,
opened from a `WorkingStore`: the bucket URL and its plain fsspec options (credentials included, never
shown in `repr`, never written to a file). Local paths keep their plain `open`/`os` fast path.

A file written to a bucket appears complete or not at all: `local_target(path)` gives a local temporary
file and uploads it in one PUT when the block succeeds. Spark tasks get the store through their payload
(`run_tasks(..., working=...)` installs it with `use()` in the task's process).
Imports only the standard library and `kernel.filesystem.fs` (fsspec).

>>> is_remote("s3://bucket/p/1.2/extracted/data/x.jsonl"), is_remote("/tmp/x.jsonl")
(True, False)
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import IO, Any

from lakeload.kernel.filesystem.fs import url_to_fs

_FS_CACHE: dict[tuple[str, str], Any] = {}
_CURRENT: list[WorkingStore] = []


@dataclass(frozen=True)
class WorkingStore:
    """The working bucket (`url`, no secrets) and its fsspec options; picklable, options hidden from `repr`."""

    url: str
    options: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def protocol(self) -> str:
        return self.url.split("://", 1)[0].lower()

    def filesystem(self) -> Any:
        """The fsspec filesystem of the bucket, opened once per process."""
        key = (self.url, repr(sorted(self.options.items())))  # in memory only
        if key not in _FS_CACHE:
            _FS_CACHE[key] = url_to_fs(self.url, self.options)[0]
        return _FS_CACHE[key]


def is_remote(path: str) -> bool:
    """A URL of an object store (anything with `://` but `file://`)."""
    return "://" in path and not path.startswith("file://")


def use(store: WorkingStore | None) -> None:
    """Make `store` the one package data URLs are opened with in this process (Spark tasks call this)."""
    _CURRENT.clear()
    if store is not None:
        _CURRENT.append(store)


def _fs(path: str, store: WorkingStore | None) -> Any:
    chosen = store or (_CURRENT[0] if _CURRENT else None)
    if chosen is None:
        raise RuntimeError(f"No working store is set to open {path.split('://', 1)[0]}:// package files")
    return chosen.filesystem()


def open_input(path: str, store: WorkingStore | None = None) -> IO[bytes]:
    """Open a package data file for reading (binary)."""
    if not is_remote(path):
        return open(path, "rb")  # noqa: SIM115 - the caller closes it
    return _fs(path, store).open(path, "rb")  # type: ignore[no-any-return]


def read_bytes(path: str, store: WorkingStore | None = None) -> bytes:
    with open_input(path, store) as f:
        return f.read()


def size(path: str, store: WorkingStore | None = None) -> int:
    if not is_remote(path):
        return os.path.getsize(path)
    return int(_fs(path, store).info(path)["size"])


def exists(path: str, store: WorkingStore | None = None) -> bool:
    return _fs(path, store).exists(path) if is_remote(path) else os.path.exists(path)


def remove(path: str, store: WorkingStore | None = None) -> None:
    """Remove one file; a missing one is fine."""
    if not is_remote(path):
        if os.path.exists(path):
            os.remove(path)
        return
    with suppress(FileNotFoundError):
        _fs(path, store).rm_file(path)


def remove_tree(path: str, store: WorkingStore | None = None) -> None:
    """Remove a folder and everything under it; a missing one is fine."""
    if not is_remote(path):
        shutil.rmtree(path, ignore_errors=True)
        return
    fs = _fs(path, store)
    files = [f for f in fs.find(path) if f]
    if files:
        fs.rm(files)
    fs.invalidate_cache()


def list_files(folder: str, store: WorkingStore | None = None) -> list[str]:
    """The file names (not paths) directly in `folder`, sorted."""
    if not is_remote(folder):
        return sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    fs = _fs(folder, store)
    fs.invalidate_cache(folder)
    try:
        return sorted(str(p).rstrip("/").rsplit("/", 1)[-1] for p in fs.ls(folder, detail=False))
    except FileNotFoundError:
        return []


def file_sizes(folder: str, store: WorkingStore) -> dict[str, int]:
    """The size of every file under `folder` of the working bucket, by its path relative to `folder` (one listing)."""
    fs = store.filesystem()
    fs.invalidate_cache()
    root = str(fs._strip_protocol(folder)).rstrip("/")
    try:
        found = fs.find(folder, detail=True)
    except FileNotFoundError:
        return {}
    return {str(path)[len(root) :].lstrip("/"): int(info["size"]) for path, info in found.items() if info.get("type") != "directory"}


def make_dirs(folder: str) -> None:
    """Create a local folder (object stores have none to create)."""
    if not is_remote(folder):
        os.makedirs(folder, exist_ok=True)


def join(folder: str, *names: str) -> str:
    """`os.path.join` for local paths, `/` for URLs."""
    if not is_remote(folder):
        return os.path.join(folder, *names)
    return "/".join([folder.rstrip("/"), *names])


def relative(path: str, base: str) -> str:
    """`path` relative to the folder or URL `base` (what manifests and package.json record)."""
    if not is_remote(base):
        return os.path.relpath(path, base)
    return path[len(base.rstrip("/")) + 1 :] if path.startswith(base.rstrip("/") + "/") else path


def upload(local: str, path: str, store: WorkingStore | None = None) -> None:
    """Put a complete local file at the bucket path `path` (one PUT: it appears whole or not at all)."""
    _fs(path, store).put_file(local, path)


def local_temp(path: str) -> str:
    """A new, empty executor-local temporary file to write `path`'s content to before `upload`."""
    handle, local = tempfile.mkstemp(prefix="lakeload-", suffix="-" + path.rsplit("/", 1)[-1])
    os.close(handle)
    return local


@contextmanager
def local_source(path: str, store: WorkingStore | None = None) -> Iterator[str]:
    """A local file with `path`'s content: `path` itself when local, else a downloaded temporary copy."""
    if not is_remote(path):
        yield path
        return
    local = local_temp(path)
    try:
        _fs(path, store).get_file(path, local)
        yield local
    finally:
        os.remove(local)


@contextmanager
def local_target(path: str, store: WorkingStore | None = None) -> Iterator[str]:
    """A local file to write `path`'s content to: `path` itself when local, else a temporary file uploaded
    to `path` when the block succeeds (removed either way)."""
    if not is_remote(path):
        yield path
        return
    local = local_temp(path)
    try:
        yield local
        upload(local, path, store)
    finally:
        if os.path.exists(local):
            os.remove(local)

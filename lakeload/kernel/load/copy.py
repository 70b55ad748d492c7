"""Executor-safe: copies a package's normalized files into the bucket, on Spark executors.

Each file lands under its final name in one step (a rename on local disks and SFTP, a single PUT on
object stores), so nobody reads a half-written file. Names are decided at normalize time, so a resumed
load overwrites the same files instead of adding duplicates, and a file whose copy met a transient
storage fault is copied again whole (`kernel.filesystem.retry`, policy in the payload). Every file is checked
against its `package.json` entry (size, Parquet footer: `kernel.load.file_check`) just before it is copied, so
a damaged package file is never published.
"""

from __future__ import annotations

import functools
import os
import posixpath
import shutil
from dataclasses import dataclass, field
from typing import Any

import pendulum

import lakeload.kernel.spark.working as wio
from lakeload.kernel.contracts import TFsOptions, TLoadedFile, TPackageFile
from lakeload.kernel.filesystem.fs import url_to_fs
from lakeload.kernel.filesystem.layout import Layout
from lakeload.kernel.filesystem.retry import RetryPolicy, call_with_retry
from lakeload.kernel.load.file_check import check_package_file
from lakeload.kernel.spark.working import WorkingStore


@dataclass
class CopyPayload:
    """What copy tasks need; shipped to executors (credentials stay inside fs_kwargs)."""

    bucket_url: str
    fs_kwargs: TFsOptions
    dataset_path: str
    package_dir: str
    layout: Layout
    schema_name: str
    load_id: str
    package_timestamp: str
    is_local: bool
    rename_after_write: bool = False
    working: WorkingStore | None = None  # the bucket `package_dir` is in, when it is a URL
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def __repr__(self) -> str:
        return f"CopyPayload(bucket_url={self.bucket_url!r}, load_id={self.load_id!r})"


def target_path(payload: CopyPayload, file: TPackageFile) -> str:
    """The file's path relative to the dataset, from the layout."""
    return payload.layout.render(
        schema_name=payload.schema_name,
        table_name=file["table"],
        load_id=payload.load_id,
        file_id=file["file_id"],
        ext=file["ext"],
        load_package_timestamp=pendulum.parse(payload.package_timestamp),  # type: ignore[arg-type]
    )


def copy_files(payload: CopyPayload, files: list[TPackageFile]) -> list[TLoadedFile]:
    """Copy `files` (package-relative `TPackageFile`s) to the bucket; returns `TLoadedFile`s (bucket-relative paths)."""
    fs, _ = url_to_fs(payload.bucket_url, payload.fs_kwargs, payload.retry)
    copied: list[TLoadedFile] = []
    for file in files:
        path = target_path(payload, file)
        package_path = wio.join(payload.package_dir, file["path"])
        with wio.local_source(package_path, payload.working) as source:
            check_package_file(source, file, payload.load_id, shown_path=package_path)
            target = posixpath.join(payload.dataset_path, path)
            copy = functools.partial(_copy_one, payload, fs, source, target)
            call_with_retry(payload.retry, copy, f"copy to {target}")
        copied.append(_copied(file, path))
    return copied


def link_files(payload: CopyPayload, files: list[TPackageFile]) -> tuple[list[TLoadedFile], list[TPackageFile]]:
    """Hard-link `files` of a package on a local disk into a local bucket: `(linked, left)`.

    For a local bucket beside the package (a local Spark, no working bucket) a load needs no copy at all,
    only a link and a rename per file, so the driver does them instead of a Spark job. Files it cannot link
    (the bucket on another disk, a file system without hard links, no permission) are `left` for
    `copy_files`, which copies them or raises the load's error; a rename that fails raises here. The loader
    checked every file of the package (`check_package_files`) before any is linked.
    """
    linked: list[TLoadedFile] = []
    left: list[TPackageFile] = []
    for file in files:
        path = target_path(payload, file)
        target = posixpath.join(payload.dataset_path, path)
        tmp = _aside(target)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            _link_aside(wio.join(payload.package_dir, file["path"]), tmp)
        except OSError:
            left.append(file)
            continue
        _rename(tmp, target)
        linked.append(_copied(file, path))
    return linked, left


def _copied(file: TPackageFile, path: str) -> TLoadedFile:
    return {"table": file["table"], "path": path, "rows": file["rows"], "bytes": file["bytes"]}


def _aside(target: str) -> str:
    """The temporary name a file is written or linked under before it is renamed to `target`."""
    return f"{target}.lakeload-tmp"


def _link_aside(source: str, tmp: str) -> None:
    """Hard-link `source` at the temporary name `tmp`, in place of one a killed load left there."""
    try:
        os.link(source, tmp)
    except FileExistsError:
        os.unlink(tmp)
        os.link(source, tmp)


def _rename(tmp: str, target: str) -> None:
    """Rename `tmp` to `target`, so that `target` is the whole file or absent."""
    os.replace(tmp, target)
    if os.path.lexists(tmp):  # `target` was this very file already (a rerun): rename() then leaves both names
        os.unlink(tmp)


def _copy_one(payload: CopyPayload, fs: Any, source: str, target: str) -> None:
    """Put the local file `source` at `target` in the bucket, complete or not at all."""
    if payload.is_local:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = _aside(target)
        try:
            _link_aside(source, tmp)
        except OSError:  # another disk, or no hard links: a copy
            shutil.copyfile(source, tmp)
        _rename(tmp, target)
    elif payload.rename_after_write:
        # a plain file server (SFTP): write aside, then rename, so the final name is complete or absent
        tmp = _aside(target)
        fs.put_file(source, tmp)
        fs.mv(tmp, target)
    else:
        fs.put_file(source, target)  # object stores: one PUT, the object appears whole

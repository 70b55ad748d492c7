"""The bucket as lakeload sees it: an fsspec filesystem rooted at `<bucket_url>/<dataset_name>`."""

from __future__ import annotations

import os
import posixpath
from typing import Any

import fsspec

from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.errors import DestinationError


def fsspec_kwargs(config: FilesystemConfiguration) -> dict[str, Any]:
    """Constructor arguments for the bucket's fsspec filesystem (credentials included)."""
    kwargs: dict[str, Any] = dict(config.kwargs)
    if config.client_kwargs:
        kwargs["client_kwargs"] = dict(config.client_kwargs)
    if config.is_local:
        kwargs.setdefault("auto_mkdir", True)
    return kwargs


class FilesystemClient:
    """Lists, reads, writes and deletes files of one dataset in the bucket."""

    def __init__(self, config: FilesystemConfiguration, dataset_name: str) -> None:
        self.config = config
        self.dataset_name = dataset_name
        try:
            self.fs, self.bucket_path = fsspec.core.url_to_fs(config.bucket_url, **fsspec_kwargs(config))
        except (ImportError, ValueError) as exc:
            raise DestinationError(f"Cannot open bucket {config.bucket_url}: {exc}") from exc
        self.dataset_path = posixpath.join(self.bucket_path, dataset_name)

    def path(self, relative: str) -> str:
        return posixpath.join(self.dataset_path, relative)

    def relative(self, path: str) -> str:
        return posixpath.relpath(path, self.dataset_path)

    def exists(self, relative: str) -> bool:
        return bool(self.fs.exists(self.path(relative)))

    def list_dir(self, relative: str) -> list[str]:
        """File names (not paths) in a folder of the dataset; empty when it does not exist."""
        path = self.path(relative)
        if not self.fs.exists(path):
            return []
        return sorted(posixpath.basename(p) for p in self.fs.ls(path, detail=False) if not self.fs.isdir(p))

    def find(self, relative_dir: str) -> list[str]:
        """All files below a folder of the dataset, as paths relative to the dataset."""
        path = self.path(relative_dir) if relative_dir else self.dataset_path
        if not self.fs.exists(path):
            return []
        return sorted(self.relative(p) for p in self.fs.find(path))

    def read_bytes(self, relative: str) -> bytes:
        return bytes(self.fs.cat_file(self.path(relative)))

    def write_bytes(self, relative: str, data: bytes) -> None:
        """Write a whole file; on local disks through a temporary name and a rename."""
        path = self.path(relative)
        if self.config.is_local:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.lakeload-tmp"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        else:
            self.fs.pipe_file(path, data)

    def delete(self, relatives: list[str]) -> None:
        if relatives:
            self.fs.rm([self.path(r) for r in relatives])

    def truncate_dataset(self) -> None:
        if self.fs.exists(self.dataset_path):
            self.fs.rm(self.dataset_path, recursive=True)

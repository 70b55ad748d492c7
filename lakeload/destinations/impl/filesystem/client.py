"""The bucket as lakeload sees it: an fsspec filesystem rooted at `<bucket_url>/<dataset_name>`."""

from __future__ import annotations

import functools
import os
import posixpath
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

from fsspec import AbstractFileSystem

from lakeload.config.bucket_credentials import fsspec_options, masked_options, secret_values
from lakeload.config.credentials import url_without_password
from lakeload.config.open_types import FsspecOptions
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.errors import DestinationError, LakeloadError, StorageUnavailableError
from lakeload.kernel.filesystem.fs import url_to_fs
from lakeload.kernel.filesystem.retry import (
    RetryPolicy,
    StorageRetriesExhausted,
    call_with_retry,
)

T = TypeVar("T")
E = TypeVar("E", bound=LakeloadError)


def fsspec_kwargs(config: FilesystemConfiguration) -> FsspecOptions:
    """Constructor arguments for the bucket's fsspec filesystem, credentials included (in clear).

    See `credentials.fsspec_options` for the mapping; log `masked_options(...)` of it, never the dict.

    >>> fsspec_kwargs(FilesystemConfiguration("file:///tmp/bucket"))
    {'auto_mkdir': True}
    """
    return fsspec_options(
        config.protocol, config.credentials, config.kwargs, config.client_kwargs, bucket_url=config.bucket_url
    )


def _scrub(text: str, secrets: list[str]) -> str:
    for value in secrets:
        text = text.replace(value, "***")
    return text


# protocols whose first path segment is a bucket or container that must exist before anything is written
BUCKET_PROTOCOLS = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "azure", "adl", "r2")
RETRY_FIX = (
    "check bucket_url, endpoint_url and the network; retries and time-outs are set by [destination.filesystem] "
    "retry_attempts, connect_timeout, read_timeout and unreachable_timeout"
)
AUTH_WORDS = ("authenticat", "forbidden", "accessdenied", "access denied", "signaturedoesnotmatch",
              "invalidaccesskeyid", "403", "401", "unauthorized", "permission", "credential", "pem file",
              "private key", "invalid_grant", "refresh_token")


def destination_error(exc: BaseException, bucket_url: str, options: Mapping[str, Any], action: str) -> DestinationError:
    """A `DestinationError` for `exc` that names the bucket and the likely fix, with every secret removed.

    The original exception is chained only when none of its messages holds a secret value.
    """
    return bucket_error(exc, bucket_url, options, action, DestinationError)


def bucket_error(exc: BaseException, bucket_url: str, options: Mapping[str, Any], action: str, error_class: type[E]) -> E:
    """`destination_error` as any lakeload error class (a files source raises `SourceError`)."""
    secrets = secret_values(options)
    url = urlsplit(bucket_url)
    if url.password:
        secrets.append(url.password)
    chain: list[BaseException] = []
    node: BaseException | None = exc
    while node is not None and node not in chain:
        chain.append(node)
        node = node.__cause__ or node.__context__
    text = " ".join(f"{type(e).__name__} {e!s}" for e in chain).lower()
    hint = ""
    if isinstance(exc, StorageRetriesExhausted):
        hint = f" (bucket unreachable or failing: {RETRY_FIX})"
        if error_class is DestinationError:
            error_class = StorageUnavailableError  # type: ignore[assignment]
    elif isinstance(exc, ImportError):
        hint = " (a package for this protocol is missing: install lakeload's extra for it, e.g. lakeload[s3])"
    elif isinstance(exc, PermissionError) or any(word in text for word in AUTH_WORDS):
        hint = " (access refused: check the credentials)"
    elif isinstance(exc, (ConnectionError, TimeoutError, OSError)) and "connect" in text:
        hint = " (bucket unreachable: check bucket_url, endpoint_url and the network)"
    error = error_class(
        f"Cannot {action} bucket {url_without_password(bucket_url)}{hint}: {type(exc).__name__}: {_scrub(str(exc), secrets)}. "
        f"Options: {masked_options(options)}"
    )
    leaks = any(value and value in f"{e!s} {e!r}" for e in chain for value in secrets)
    error.__cause__ = None if leaks else exc
    return error


def open_filesystem(
    bucket_url: str, options: Mapping[str, Any], retry: RetryPolicy | None = None
) -> tuple[AbstractFileSystem, str]:
    """The fsspec filesystem and root path of `bucket_url`, opened with `options` (from `fsspec_kwargs`).

    SFTP buckets open lakeload's `VerifiedSFTPFileSystem` (host keys checked). Any error while opening
    is re-raised as `DestinationError` whose message holds no secret value of `options`. With `retry`,
    the caller retries its calls (see `kernel.filesystem.fs.url_to_fs`).

    >>> fs, path = open_filesystem("memory://bucket/data", {})
    >>> path
    '/bucket/data'
    """
    try:
        fs, path = url_to_fs(bucket_url, options, retry)
    except Exception as exc:
        error = destination_error(exc, bucket_url, options, "open")
    else:
        return fs, path
    raise error  # outside `except`: no implicit context that could carry a secret


def _guarded(method: Callable[..., T]) -> Callable[..., T]:
    """Bucket operations are retried through transient faults (the configuration's retry policy) and fail
    with a clear `DestinationError` (secrets removed), never a raw client error."""

    @functools.wraps(method)
    def call(self: FilesystemClient, *args: Any, **kwargs: Any) -> T:
        what = f"{method.__name__} in bucket {url_without_password(self.config.bucket_url)}"
        try:
            return call_with_retry(self.config.retry, lambda: method(self, *args, **kwargs), what)
        except DestinationError:
            raise
        except Exception as exc:
            error = destination_error(exc, self.config.bucket_url, self._options, f"{method.__name__} in")
        raise error  # outside `except`: no implicit context that could carry a secret

    return call


class FilesystemClient:
    """Lists, reads, writes and deletes files of one dataset in the bucket."""

    def __init__(self, config: FilesystemConfiguration, dataset_name: str) -> None:
        self.config = config
        self.dataset_name = dataset_name
        self._options = fsspec_kwargs(config)
        self.fs, self.bucket_path = open_filesystem(config.bucket_url, self._options, config.retry)
        self.dataset_path = posixpath.join(self.bucket_path, dataset_name)

    def path(self, relative: str) -> str:
        return posixpath.join(self.dataset_path, relative)

    def relative(self, path: str) -> str:
        return posixpath.relpath(path, self.dataset_path)

    @_guarded
    def check_bucket(self) -> None:
        """Fail now, before any work is done, when the bucket cannot take the dataset: not a folder, no such bucket,
        or not reachable (the client's own time-outs bound the wait)."""
        if self.config.is_local:
            folder = self.bucket_path
            while not os.path.exists(folder) and os.path.dirname(folder) != folder:
                folder = os.path.dirname(folder)
            if not os.path.isdir(folder):
                raise DestinationError(
                    f"Bucket {self.config.bucket_url} cannot be used: {folder} is a file, not a folder. "
                    "Fix: point bucket_url at a folder (or a path that can be created)."
                )
            return
        if self.config.protocol not in BUCKET_PROTOCOLS:
            return  # SFTP and others: opening the filesystem already connected; memory:// is always there
        root = self.bucket_path.split("/", 1)[0]
        try:
            self.fs.info(root)  # raises for refused credentials or no answer, which the retry policy handles
        except FileNotFoundError:
            missing = True
        else:
            missing = False
        if missing:
            raise DestinationError(
                f"Bucket {url_without_password(self.config.bucket_url)} cannot be used: the bucket (container) "
                f"'{root}' does not exist. Fix: create it, or correct bucket_url."
            )

    @_guarded
    def exists(self, relative: str) -> bool:
        return bool(self.fs.exists(self.path(relative)))

    @_guarded
    def list_dir(self, relative: str) -> list[str]:
        """File names (not paths) in a folder of the dataset; empty when it does not exist."""
        path = self.path(relative)
        if not self.fs.exists(path):
            return []
        return sorted(posixpath.basename(p) for p in self.fs.ls(path, detail=False) if not self.fs.isdir(p))

    @_guarded
    def find(self, relative_dir: str) -> list[str]:
        """All files below a folder of the dataset, as paths relative to the dataset."""
        path = self.path(relative_dir) if relative_dir else self.dataset_path
        if not self.fs.exists(path):
            return []
        return sorted(self.relative(p) for p in self.fs.find(path))

    @_guarded
    def read_bytes(self, relative: str) -> bytes:
        return bytes(self.fs.cat_file(self.path(relative)))

    @_guarded
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

    @_guarded
    def delete(self, relatives: list[str]) -> None:
        if relatives:
            self.fs.rm([self.path(r) for r in relatives])

    @_guarded
    def delete_folder(self, relative_dir: str) -> None:
        """A folder of the dataset with everything in it (nothing when it does not exist)."""
        path = self.path(relative_dir)
        if self.fs.exists(path):
            self.fs.rm(path, recursive=True)

    @_guarded
    def truncate_dataset(self) -> None:
        if self.fs.exists(self.dataset_path):
            self.fs.rm(self.dataset_path, recursive=True)

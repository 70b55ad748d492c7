"""Executor-safe: open a bucket's fsspec filesystem from plain, picklable options, on any process.

Options travel to executors as plain values. What cannot travel, or what fsspec does not accept as
a plain value, is built here, where the filesystem is opened:
- a GCP service-account key (a dict with `type: service_account`) becomes google-auth credentials
  (gcsfs reads a `token` dict as an OAuth user token);
- `sftp://` opens lakeload's host-key-checking SFTP filesystem.
Imports only fsspec, the standard library, `kernel.contracts` and `kernel.filesystem.retry` (google-auth and paramiko lazily).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import fsspec

from lakeload.kernel.contracts import TFsOptions
from lakeload.kernel.filesystem.protocols import SFTP_PROTOCOLS
from lakeload.kernel.filesystem.retry import RetryPolicy, bound_client, bounded_options

GCS_SCOPES = ("https://www.googleapis.com/auth/devstorage.read_write",)


def _gcs_token(token: Any) -> Any:
    if isinstance(token, Mapping) and token.get("type") == "service_account":
        from google.oauth2 import service_account

        try:
            info = dict(token)  # google-auth has no type hints for it
            return service_account.Credentials.from_service_account_info(info, scopes=list(GCS_SCOPES))  # type: ignore[no-untyped-call]
        except (ValueError, KeyError) as exc:
            raise ValueError(f"Invalid GCP service-account credentials ({type(exc).__name__}: {exc})") from exc
    return token


def prepare_options(bucket_url: str, options: Mapping[str, Any]) -> TFsOptions:
    """The fsspec constructor arguments for `bucket_url`, with non-plain values built in this process."""
    protocol = urlsplit(bucket_url).scheme.lower()
    prepared = dict(options)
    if protocol in ("gs", "gcs") and "token" in prepared:
        prepared["token"] = _gcs_token(prepared["token"])
    if protocol in SFTP_PROTOCOLS:
        from lakeload.kernel.filesystem.sftp_fs import register_sftp

        register_sftp()
    return prepared


def url_to_fs(bucket_url: str, options: Mapping[str, Any], retry: RetryPolicy | None = None) -> tuple[Any, str]:
    """`fsspec.core.url_to_fs` with lakeload's preparation of the options (see `prepare_options`).

    With a `retry` policy, the caller retries its calls with `kernel.filesystem.retry.call_with_retry`: the
    filesystem gets the policy's time-outs and the client library's own retries are switched off.
    """
    prepared = prepare_options(bucket_url, options)
    if retry is not None:
        prepared = bounded_options(urlsplit(bucket_url).scheme.lower(), prepared, retry)
    fs, path = fsspec.core.url_to_fs(bucket_url, **prepared)
    if retry is not None:
        bound_client(fs, retry)
    return fs, str(path)

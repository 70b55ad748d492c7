"""Typed configuration of the filesystem destination, resolved in one place."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from lakeload.config.resolver import resolve
from lakeload.errors import ConfigurationError

SECTIONS = ("destination", "filesystem")


def normalize_bucket_url(bucket_url: str) -> str:
    """An fsspec URL for `bucket_url`; plain and relative local paths become absolute `file://` URLs.

    >>> normalize_bucket_url("/data/bucket")
    'file:///data/bucket'
    """
    url = str(bucket_url).strip()
    if not url:
        raise ConfigurationError("bucket_url is empty; give a local path or a URL such as s3://bucket/path.")
    if url.startswith("file://"):
        parsed = urlparse(url)
        if not parsed.path and not parsed.netloc:
            raise ConfigurationError(
                f"bucket_url={url!r} has neither a path nor a host; use e.g. file:///absolute/path or a plain path."
            )
        path = parsed.path if not parsed.netloc or parsed.netloc == "localhost" else f"//{parsed.netloc}{parsed.path}"
        return "file://" + os.path.abspath(path)
    scheme = urlparse(url).scheme
    if not scheme or len(scheme) == 1:  # a plain path (or a Windows drive letter)
        return "file://" + os.path.abspath(os.path.expanduser(url))
    return url


@dataclass
class FilesystemConfiguration:
    """Resolved settings of one filesystem destination."""

    bucket_url: str
    destination_name: str = "filesystem"
    layout: str = "{table_name}/{load_id}.{file_id}.{ext}"
    extra_placeholders: dict[str, Any] | None = None
    current_datetime: Any = None
    credentials: Any = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    client_kwargs: dict[str, Any] = field(default_factory=dict)
    max_state_files: int = 100
    always_refresh_views: bool = False

    @property
    def protocol(self) -> str:
        return urlparse(self.bucket_url).scheme or "file"

    @property
    def is_local(self) -> bool:
        return self.protocol == "file"

    def __repr__(self) -> str:  # never show credentials
        return f"FilesystemConfiguration(bucket_url={self.bucket_url!r}, destination_name={self.destination_name!r}, layout={self.layout!r})"


def resolve_configuration(explicit: dict[str, Any], destination_name: str, pipeline_name: str | None) -> FilesystemConfiguration:
    """Merge explicit factory arguments with env vars and TOML files (see `lakeload.config.resolver`)."""
    sections = ("destination", destination_name)

    def get(key: str, hint: type | None = None, required: bool = False) -> Any:
        return resolve(sections, key, pipeline_name, explicit.get(key), hint, required).value

    bucket_url = get("bucket_url", str, required=True)
    kwargs = get("kwargs", dict) or {}
    client_kwargs = get("client_kwargs", dict) or {}
    return FilesystemConfiguration(
        bucket_url=normalize_bucket_url(bucket_url),
        destination_name=destination_name,
        layout=get("layout", str) or "{table_name}/{load_id}.{file_id}.{ext}",
        extra_placeholders=explicit.get("extra_placeholders") or get("extra_placeholders", dict),
        current_datetime=explicit.get("current_datetime"),
        credentials=get("credentials", dict),
        kwargs=dict(kwargs),
        client_kwargs=dict(client_kwargs),
        max_state_files=int(get("max_state_files", int) or 100),
        always_refresh_views=bool(get("always_refresh_views", bool) or False),
    )

"""Typed configuration of the filesystem destination, resolved in one place.

>>> normalize_bucket_url("C:\\\\data\\\\x")
'file:///C:/data/x'
"""

from __future__ import annotations

import datetime
import ntpath
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PureWindowsPath
from typing import Any, TypedDict
from urllib.parse import unquote, urlparse

from lakeload.config.credentials import Credentials, parse_json_object, url_without_password
from lakeload.config.known_keys import RETRY_KEYS
from lakeload.config.open_types import FsspecOptions
from lakeload.config.resolver import Resolved, resolve, resolve_section
from lakeload.errors import ConfigurationError
from lakeload.kernel.filesystem.retry import RetryPolicy

SECTIONS = ("destination", "filesystem")
DEFAULT_LAYOUT = "{table_name}/{load_id}.{file_id}.{ext}"
DEFAULT_MAX_STATE_FILES = 100
# Protocols of dlt's filesystem destination; every protocol fsspec knows is accepted as well.
LAKELOAD_PROTOCOLS = ("file", "memory", "s3", "gs", "gcs", "gdrive", "az", "abfs", "abfss", "adl", "azure", "sftp", "hf")


_DRIVE = re.compile(r"^[A-Za-z]:")
_ADMIN_SHARE = re.compile(r"^/[A-Za-z]\$(/|$)")


def known_protocols() -> list[str]:
    """Every bucket_url protocol lakeload accepts: dlt's filesystem protocols plus fsspec's registry."""
    import fsspec

    return sorted(set(LAKELOAD_PROTOCOLS) | set(fsspec.available_protocols()))


def is_windows_path(path: str) -> bool:
    """A Windows-native path: a drive (`C:\\x`, `C:/x`, `C:x`), UNC `\\\\server\\share` or `\\\\?\\...`."""
    return bool(_DRIVE.match(path)) or path.startswith("\\\\")


def windows_path_to_url(path: str) -> str:
    """An fsspec `file://` URL for a Windows path, parsed with `ntpath` on any OS.

    Drive paths become `file:///C:/...`; UNC paths `file:////server/share/...`, the form fsspec's
    local filesystem strips to `//server/share/...`. Extended-length (`\\\\?\\C:\\x`,
    `\\\\?\\UNC\\server\\share\\x`) and device (`\\\\.\\C:\\x`) prefixes are dropped.

    >>> windows_path_to_url("\\\\\\\\?\\\\UNC\\\\server\\\\share\\\\data")
    'file:////server/share/data'
    """
    text = path
    if text[:4] in ("\\\\?\\", "\\\\.\\", "//?/", "//./"):
        text = "\\\\" + text[8:] if text[4:8].upper() in ("UNC\\", "UNC/") else text[4:]
    trailing = text.endswith(("\\", "/"))
    normalized = ntpath.normpath(text)
    windows = PureWindowsPath(normalized)
    if not windows.drive or not windows.root:
        raise ConfigurationError(
            f"bucket_url={path!r} is not an absolute Windows path: give a drive and a root (C:\\data\\bucket) "
            "or a full UNC path (\\\\server\\share\\folder)."
        )
    rest = "/".join(windows.parts[1:])
    if trailing and rest:
        rest += "/"
    if _DRIVE.match(windows.drive):
        return f"file:///{windows.drive}/{rest}"
    return "file://" + windows.drive.replace("\\", "/") + "/" + rest


def _file_url(url: str) -> str:
    """Normalize a `file:` URL: `localhost` means this machine, any other host is a UNC server."""
    rest = url[len("file:"):]
    host, path = "", rest
    if rest.startswith("//"):
        host, _, tail = rest[2:].partition("/")
        path = "/" + tail if (tail or rest[2:].endswith("/")) else ""
    if not host and not path:
        raise ConfigurationError(
            f"bucket_url={url_without_password(url)!r} has neither a path nor a host (dlt: File `path` and `netloc` are missing); "
            "use e.g. file:///absolute/path or a plain path."
        )
    host, path = unquote(host), unquote(path)
    if _DRIVE.match(host):  # file://C:/data
        return windows_path_to_url(host + (path or "/"))
    if host and (host.lower() != "localhost" or _ADMIN_SHARE.match(path)):
        return f"file:////{host}{path or '/'}"
    if path.startswith("//") or _DRIVE.match(path[1:]):  # file:////server/share, file:///C:/data
        return "file://" + path
    if not path.startswith("/"):
        raise ConfigurationError(f"bucket_url={url!r} is a relative file: URL; use a plain relative path instead.")
    return "file://" + path


def normalize_bucket_url(bucket_url: str) -> str:
    """An fsspec URL for `bucket_url`; plain and relative local paths become absolute `file://` URLs.

    Accepts POSIX paths (absolute, relative to the working folder, `~`), `file:///abs`,
    `file://localhost/abs`, `file://host/share/...` (UNC), Windows drive paths `C:\\data`, UNC
    `\\\\server\\share\\x` and extended `\\\\?\\C:\\x` / `\\\\?\\UNC\\server\\share\\x` paths.
    Characters stay literal (no %-escapes), because fsspec's local filesystem does not decode them.

    >>> normalize_bucket_url("/data/bucket")
    'file:///data/bucket'
    """
    url = str(bucket_url).strip()
    if not url:
        raise ConfigurationError("bucket_url is empty; give a local path or a URL such as s3://bucket/path.")
    if is_windows_path(url):
        if _DRIVE.match(url) and url[2:3] not in ("\\", "/"):
            raise ConfigurationError(
                f"bucket_url={url!r} is relative to the current folder of drive {url[:2]}; give C:\\folder instead."
            )
        return windows_path_to_url(url)
    scheme = urlparse(url).scheme.lower()
    if scheme == "file":
        return _file_url(url)
    if not scheme:
        if os.name == "nt":  # pragma: no cover - Windows only
            return windows_path_to_url(os.path.realpath(os.path.expanduser(url)) + ("\\" if url.endswith(("/", "\\")) else ""))
        absolute = os.path.realpath(os.path.expanduser(url))
        if url.endswith("/") and not absolute.endswith("/"):
            absolute += "/"
        return "file://" + absolute
    protocols = known_protocols()
    if scheme not in protocols:
        raise ConfigurationError(
            f"Protocol not known: {scheme} (bucket_url={url_without_password(url)!r}). Known protocols: {', '.join(protocols)}."
        )
    return url


ExtraPlaceholders = dict[str, "str | int | float | datetime.date | Callable[..., str]"]
"""Values of a layout's extra placeholders (dlt's `extra_placeholders`): a value, or a callable that returns one."""

DeltaStorageArguments = dict[str, Any]
"""delta-rs storage options the user passes (`deltalake_storage_options`, names as delta-rs spells them): strings,
also booleans and numbers from TOML (made text when used). Arbitrary by design: delta-rs' option names."""


class FilesystemArguments(TypedDict, total=False):
    """What the `filesystem(...)` factory (or the Dagster I/O manager) passes explicitly; None: not given."""

    bucket_url: str | None
    credentials: Any  # a dict, a connection string or a lakeload credentials object
    layout: str | None
    extra_placeholders: ExtraPlaceholders | None
    current_datetime: Any  # a datetime, or a callable that returns one
    kwargs: FsspecOptions | None
    client_kwargs: FsspecOptions | None
    always_refresh_views: bool | None
    max_state_files: int | None
    deltalake_storage_options: DeltaStorageArguments | None


@dataclass
class FilesystemConfiguration:
    """Resolved settings of one filesystem destination; `repr` never shows secrets in clear."""

    bucket_url: str
    destination_name: str = "filesystem"
    layout: str = DEFAULT_LAYOUT
    extra_placeholders: ExtraPlaceholders | None = None
    current_datetime: Any = None
    credentials: Credentials | None = None
    kwargs: FsspecOptions = field(default_factory=dict)
    client_kwargs: FsspecOptions = field(default_factory=dict)
    deltalake_storage_options: DeltaStorageArguments = field(default_factory=dict)
    max_state_files: int = DEFAULT_MAX_STATE_FILES
    always_refresh_views: bool = False
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    @property
    def protocol(self) -> str:
        return urlparse(self.bucket_url).scheme or "file"

    @property
    def is_local(self) -> bool:
        return self.protocol == "file"

    def __repr__(self) -> str:
        return (
            f"FilesystemConfiguration(bucket_url={url_without_password(self.bucket_url)!r}, destination_name={self.destination_name!r}, "
            f"layout={self.layout!r}, credentials={self.credentials!r})"
        )


def as_dict(resolved: Resolved, key: str) -> FsspecOptions:
    """`kwargs`/`client_kwargs`/`deltalake_storage_options` as a dict: a TOML table, a dict, or a stringified JSON object."""
    value = resolved.value
    if value is None:
        return {}
    if isinstance(value, str):
        parsed = parse_json_object(value)
        if parsed is None:
            raise ConfigurationError(
                f"{key} from {resolved.source} is not a JSON object: {value!r}. "
                f"Write e.g. {key} = '{{\"auto_mkdir\": true}}' or a [destination.filesystem.{key}] table."
            )
        return parsed
    if not isinstance(value, dict):
        raise ConfigurationError(f"{key} from {resolved.source} must be a dict, got {type(value).__name__}.")
    return dict(value)


def resolve_credentials(explicit: Any, sections: tuple[str, ...], pipeline_name: str | None) -> Credentials | None:
    """Explicit credentials win wholesale; otherwise fields are gathered from env vars and TOML files."""
    section = resolve_section(sections, "credentials", pipeline_name, explicit)
    if not section.is_set:
        return None
    return Credentials(section.fields, section.native, section.sources, native_source=section.native_source)


def resolve_retry_policy(get: Any) -> RetryPolicy:
    """The retry policy from the `RETRY_KEYS` of the destination's section (`get(key, hint)` resolves one).

    >>> resolve_retry_policy(lambda key, hint: Resolved(None, None)).attempts
    4
    """
    values: dict[str, Any] = {}
    for key, name in RETRY_KEYS.items():
        hint = int if name == "attempts" else float
        resolved = get(key, hint)
        if resolved.value is None:
            continue
        value = resolved.value
        try:
            if isinstance(value, bool) or (hint is int and isinstance(value, float) and not value.is_integer()):
                raise ValueError
            value = hint(value)
        except (TypeError, ValueError):
            raise ConfigurationError(f"{key} from {resolved.source} must be a number, got {value!r}.") from None
        low = 1 if name == "attempts" else 0
        if value < low or (name == "jitter" and value > 1):
            bound = "between 0 and 1" if name == "jitter" else f">= {low}"
            raise ConfigurationError(f"{key} from {resolved.source} = {value!r} must be {bound}.")
        values[name] = value
    return RetryPolicy(**values)


def resolve_configuration(explicit: FilesystemArguments, destination_name: str, pipeline_name: str | None) -> FilesystemConfiguration:
    """Merge explicit factory arguments with env vars and TOML files (see `lakeload.config.resolver`).

    >>> resolve_configuration({"bucket_url": "/tmp/b"}, "filesystem", None).bucket_url
    'file:///tmp/b'
    """
    sections = ("destination", destination_name)

    def get(key: str, hint: type | None = None, required: bool = False) -> Any:
        return resolve(sections, key, pipeline_name, explicit.get(key), hint, required)

    bucket_url = get("bucket_url", str, required=True).value
    max_state_files = get("max_state_files", int).value
    return FilesystemConfiguration(
        bucket_url=normalize_bucket_url(bucket_url),
        destination_name=destination_name,
        layout=get("layout", str).value or DEFAULT_LAYOUT,
        extra_placeholders=explicit.get("extra_placeholders") or get("extra_placeholders", dict).value,
        current_datetime=explicit.get("current_datetime"),
        credentials=resolve_credentials(explicit.get("credentials"), sections, pipeline_name),
        kwargs=as_dict(get("kwargs", dict), "kwargs"),
        client_kwargs=as_dict(get("client_kwargs", dict), "client_kwargs"),
        deltalake_storage_options=as_dict(get("deltalake_storage_options", dict), "deltalake_storage_options"),
        max_state_files=DEFAULT_MAX_STATE_FILES if max_state_files is None else int(max_state_files),
        always_refresh_views=bool(get("always_refresh_views", bool).value or False),
        retry=resolve_retry_policy(get),
    )

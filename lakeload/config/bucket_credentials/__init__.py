"""Typed credentials per bucket protocol and their mapping to fsspec constructor arguments.

`fsspec_options` merges, from weakest to strongest: the backend's defaults (`max_concurrency=1` on
Azure, no listing cache on object stores), defaults of the credentials (default credential chains:
`token="google_default"`, `anon=False`; S3 `config_kwargs`), the user's `kwargs` and `client_kwargs`,
and the values the credentials give explicitly. `client_kwargs` and `config_kwargs` merge key by key.

>>> from lakeload.config.credentials import Credentials
>>> opts = fsspec_options("s3", Credentials({"aws_access_key_id": "AKIA", "aws_secret_access_key": "S"}))
>>> opts["key"], masked_options(opts)["secret"]
('AKIA', '***')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from lakeload.config.bucket_credentials.aws import AwsCredentials
from lakeload.config.bucket_credentials.azure import AzureCredentials
from lakeload.config.bucket_credentials.base import TypedCredentials
from lakeload.config.bucket_credentials.gcp import GcpCredentials
from lakeload.config.bucket_credentials.sftp import SFTPCredentials
from lakeload.config.credentials import MASK, Credentials, is_secret_key, url_without_password
from lakeload.config.open_types import FsspecOptions
from lakeload.errors import ConfigurationError

__all__ = [
    "AwsCredentials", "AzureCredentials", "GcpCredentials", "SFTPCredentials", "TypedCredentials",
    "credentials_class_for", "typed_credentials", "fsspec_options", "masked_options", "secret_values",
    "known_credential_protocols", "credential_classes",
]

NO_CREDENTIALS = ("file", "memory")
_CLASSES: tuple[type[TypedCredentials], ...] = (AwsCredentials, GcpCredentials, AzureCredentials, SFTPCredentials)
_REGISTRY: dict[str, type[TypedCredentials] | None] = {p: None for p in NO_CREDENTIALS}
_REGISTRY.update({protocol: cls for cls in _CLASSES for protocol in cls.protocols})
_MERGED = ("client_kwargs", "config_kwargs")
# option names that look secret but are not
_NOT_SECRET_OPTIONS = frozenset(
    {"key_filename", "known_hosts", "verify_host_key", "look_for_keys", "token_uri", "host_key_policy"}
)


def credential_classes() -> tuple[type[TypedCredentials], ...]:
    """The typed credentials class of every protocol that takes credentials (their fields are the valid ones)."""
    return _CLASSES


def known_credential_protocols() -> list[str]:
    """The protocols lakeload maps credentials for (plus `file` and `memory`, which need none)."""
    return sorted(_REGISTRY)


def credentials_class_for(protocol: str) -> type[TypedCredentials] | None:
    """The typed credentials class of a bucket protocol; None for `file` and `memory`.

    >>> credentials_class_for("abfss").__name__
    'AzureCredentials'
    """
    key = protocol.lower()
    if key not in _REGISTRY:
        raise ConfigurationError(
            f"No credentials mapping for protocol {protocol!r}. Known protocols: {', '.join(known_credential_protocols())}."
        )
    return _REGISTRY[key]


def typed_credentials(protocol: str, credentials: Credentials | Mapping[str, Any] | None) -> TypedCredentials | None:
    """The typed credentials for `protocol` built from lakeload's `Credentials` (None for file/memory).

    >>> typed_credentials("sftp", {"sftp_port": "2222"}).sftp_port
    2222
    """
    cls = credentials_class_for(protocol)
    return None if cls is None else cls.from_credentials(credentials)


def _merge(target: FsspecOptions, values: Mapping[str, Any]) -> None:
    for key, value in values.items():
        if key in _MERGED and isinstance(value, Mapping) and isinstance(target.get(key), Mapping):
            merged = dict(target[key])
            for sub, sub_value in value.items():
                if isinstance(sub_value, Mapping) and isinstance(merged.get(sub), Mapping):
                    merged[sub] = {**merged[sub], **sub_value}
                else:
                    merged[sub] = sub_value
            target[key] = merged
        else:
            target[key] = dict(value) if isinstance(value, Mapping) else value


def _sftp_url_options(options: FsspecOptions, credentials: Credentials | None, bucket_url: str) -> None:
    """Drop `port`/`username` the bucket URL already gives (fsspec refuses a second, different value)."""
    parts = urlsplit(bucket_url)
    given = credentials if credentials is not None else Credentials()
    for option, field, url_value in (("port", "sftp_port", parts.port), ("username", "sftp_username", parts.username)):
        if url_value is None or option not in options:
            continue
        if field in given and options[option] != url_value:
            raise ConfigurationError(
                f"The bucket URL gives {option} {url_value!r} but the credentials give {field}={options[option]!r}; "
                "set it in one place only."
            )
        options.pop(option)


def fsspec_options(
    protocol: str,
    credentials: Credentials | Mapping[str, Any] | None,
    kwargs: Mapping[str, Any] | None = None,
    client_kwargs: Mapping[str, Any] | None = None,
    bucket_url: str | None = None,
) -> FsspecOptions:
    """Constructor arguments for the fsspec filesystem of `protocol`, secrets in clear.

    Log `masked_options(...)` of the result, never the result. `bucket_url` lets SFTP drop a port or
    user name the URL already carries. Credentials for `file`/`memory` are ignored; for a protocol
    lakeload has no mapping for, only `kwargs`/`client_kwargs` are passed and credentials are refused.

    >>> fsspec_options("az", None, {"max_concurrency": 4})["max_concurrency"]
    4
    """
    key = protocol.lower()
    options: FsspecOptions = {}
    extra = dict(kwargs or {})
    if client_kwargs:
        _merge(extra, {"client_kwargs": dict(client_kwargs)})
    if key == "file":
        options["auto_mkdir"] = True
    if key not in _REGISTRY:
        if credentials:
            credentials_class_for(key)  # raises, naming the known protocols
        _merge(options, extra)
        return options
    cls = _REGISTRY[key]
    typed = None if cls is None else cls.from_credentials(credentials)
    if cls is not None and typed is not None:
        _merge(options, cls.protocol_defaults())
        _merge(options, typed.fsspec_defaults())
    _merge(options, extra)
    if typed is not None:
        _merge(options, typed.fsspec_kwargs())
    if key in SFTPCredentials.protocols and bucket_url:
        as_creds = credentials if credentials is None or isinstance(credentials, Credentials) else Credentials.from_value(credentials)
        _sftp_url_options(options, as_creds, bucket_url)
    return options


def masked_options(options: Mapping[str, Any]) -> FsspecOptions:
    """`options` for logs and errors: every secret value (also nested, e.g. a GCP `token` dict) is `'***'`.

    >>> masked_options({"account_name": "a", "account_key": "k", "client_kwargs": {"region_name": "r"}})
    {'account_name': 'a', 'account_key': '***', 'client_kwargs': {'region_name': 'r'}}
    """
    masked: FsspecOptions = {}
    for name, value in options.items():
        if name in _NOT_SECRET_OPTIONS:
            masked[name] = value
        elif isinstance(value, Mapping):
            masked[name] = masked_options(value)
        elif value is not None and is_secret_key(str(name)):
            masked[name] = MASK
        else:
            masked[name] = url_without_password(value) if isinstance(value, str) else value
    return masked


def secret_values(options: Mapping[str, Any]) -> list[str]:
    """The string values `masked_options` hides, longest first (to scrub them from error messages)."""
    found: set[str] = set()

    def walk(node: Mapping[str, Any], masked: Mapping[str, Any]) -> None:
        for name, value in node.items():
            shown = masked.get(name)
            if isinstance(value, Mapping) and isinstance(shown, Mapping):
                walk(value, shown)
            elif shown == MASK and isinstance(value, str) and value != MASK:
                found.add(str(value))

    walk(options, masked_options(options))
    return sorted((v for v in found if len(v) >= 3), key=len, reverse=True)

"""Credentials as lakeload carries them: fields, an optional native string, and where each came from.

Backend-specific credential classes (S3, GCS, Azure, SFTP) are built from these later; here the
fields are only gathered, kept and masked whenever they are shown.

>>> creds = Credentials({"aws_access_key_id": "AKIA", "region_name": "eu-central-1"})
>>> creds
Credentials(aws_access_key_id='***', region_name='eu-central-1')
>>> creds["aws_access_key_id"]
'AKIA'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from lakeload.config.open_types import CredentialFields
from lakeload.errors import ConfigurationError

MASK = "***"
SECRET_MARKERS = (
    "key", "secret", "password", "token", "sas", "private", "passphrase", "credential", "connection_string",
)


def is_secret_key(name: str) -> bool:
    """True when a field name looks like it holds a secret (`aws_secret_access_key`, `sftp_password`, ...).

    >>> is_secret_key("azure_storage_sas_token"), is_secret_key("region_name")
    (True, False)
    """
    lowered = name.lower()
    return any(marker in lowered for marker in SECRET_MARKERS)


def url_without_password(url: str) -> str:
    """`url` with the password of its user info masked (`http://u:***@proxy:3128`); other text unchanged.

    >>> url_without_password("http://user:pw@proxy:3128")
    'http://user:***@proxy:3128'
    """
    if "://" not in url or "@" not in url:
        return url
    try:
        parts = urlsplit(url)
        password, port = parts.password, parts.port
    except ValueError:
        return url
    if password is None:
        return url
    netloc = f"{parts.username or ''}:{MASK}@{parts.hostname or ''}" + (f":{port}" if port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def mask_value(name: str, value: Any) -> Any:
    """`value` with every secret-looking entry replaced by `'***'` (dicts are masked field by field, and
    passwords in URLs too).

    >>> mask_value("kwargs", {"key": "abc", "use_ssl": True, "proxy": "http://u:pw@p:1"})
    {'key': '***', 'use_ssl': True, 'proxy': 'http://u:***@p:1'}
    """
    if isinstance(value, Credentials):
        return value.masked()
    if isinstance(value, Mapping):
        return {k: mask_value(str(k), v) for k, v in value.items()}
    if value is not None and is_secret_key(name):
        return MASK
    if isinstance(value, str):
        return url_without_password(value)
    return value


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The dict a string holds when it is a JSON object (`'{"a": 1}'`), otherwise None."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


class Credentials:
    """Resolved credentials: a dict of fields, an optional native string, and the source of each.

    `repr`/`str` mask every secret-looking field and the native string. Read values with `creds[name]`,
    `creds.get(name)` or `creds.to_dict()`; `creds.source(name)` says where a field came from.

    >>> creds = Credentials(native="DefaultEndpointsProtocol=https;AccountName=a;AccountKey=k", source="explicit argument")
    >>> str(creds)
    "Credentials(native='***')"
    """

    __slots__ = ("_fields", "_sources", "native", "native_source")

    def __init__(self, fields: Mapping[str, Any] | None = None, native: str | None = None,
                 sources: Mapping[str, str] | None = None, source: str | None = None,
                 native_source: str | None = None) -> None:
        self._fields: CredentialFields = dict(fields or {})
        self._sources: dict[str, str] = {name: source for name in self._fields} if source else {}
        self._sources.update(sources or {})
        self.native = native
        self.native_source = native_source or (source if native is not None else None)

    @classmethod
    def from_value(cls, value: Any, source: str = "explicit argument") -> Credentials:
        """Credentials from an object with attributes, a dataclass, a dict, or a native / JSON string.

        >>> Credentials.from_value('{"sftp_username": "u"}').to_dict()
        {'sftp_username': 'u'}
        """
        if isinstance(value, Credentials):
            return value
        if isinstance(value, str):
            parsed = parse_json_object(value)
            if parsed is not None:
                return cls(parsed, source=source)
            if value.strip().startswith("{"):
                raise ConfigurationError(
                    f"credentials from {source} look like JSON but do not parse as a JSON object; "
                    "give a valid JSON object such as '{\"aws_access_key_id\": \"...\"}' or a native string."
                )
            return cls(native=value, source=source)
        if isinstance(value, Mapping):
            return cls({str(k): v for k, v in value.items()}, source=source)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return cls({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, source=source)
        attrs = _public_attributes(value)
        if attrs is None:
            raise ConfigurationError(
                f"credentials of type {type(value).__name__} carry no fields; pass a dict, a dataclass, an object "
                "with attributes, or a native string (e.g. an Azure connection string)."
            )
        return cls(attrs, source=source)

    def __getitem__(self, name: str) -> Any:
        return self._fields[name]

    def __contains__(self, name: object) -> bool:
        return name in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __bool__(self) -> bool:
        return bool(self._fields) or self.native is not None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Credentials):
            return NotImplemented
        return self._fields == other._fields and self.native == other.native

    __hash__ = None  # type: ignore[assignment]

    def get(self, name: str, default: Any = None) -> Any:
        return self._fields.get(name, default)

    def to_dict(self) -> CredentialFields:
        """A copy of the fields, secrets in clear: hand it to a backend, never to a log."""
        return dict(self._fields)

    def masked(self) -> CredentialFields:
        """The fields with secret-looking values replaced by `'***'`."""
        return {name: mask_value(name, value) for name, value in self._fields.items()}

    def source(self, name: str) -> str | None:
        """Where field `name` came from, e.g. `environment variable DESTINATION__CREDENTIALS__X`."""
        return self._sources.get(name)

    @property
    def sources(self) -> dict[str, str]:
        return dict(self._sources)

    def __repr__(self) -> str:
        parts = [f"{name}={value!r}" for name, value in self.masked().items()]
        if self.native is not None:
            parts.append(f"native={MASK!r}")
        return f"Credentials({', '.join(parts)})"

    __str__ = __repr__


def _public_attributes(value: Any) -> CredentialFields | None:
    """Public, non-callable attributes of a plain object (from `__dict__` or `__slots__`)."""
    names: list[str] = []
    if hasattr(value, "__dict__"):
        names = list(vars(value))
    for klass in type(value).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    attrs = {}
    for name in names:
        if name.startswith("_") or not hasattr(value, name):
            continue
        attr = getattr(value, name)
        if not callable(attr):
            attrs[name] = attr
    return attrs or None

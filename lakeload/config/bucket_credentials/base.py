"""The common base of typed backend credentials: building from `Credentials`, coercion, masking.

Each backend (`aws.py`, `gcp.py`, `azure.py`, `sftp.py`) declares a dataclass with dlt's field names
and defaults and turns it into fsspec constructor arguments. Values read from environment variables
arrive as strings and are coerced to the declared field types here.

>>> from lakeload.config.bucket_credentials.aws import AwsCredentials
>>> AwsCredentials.from_credentials(Credentials({"aws_access_key_id": "AKIA", "aws_secret_access_key": "s"}))
AwsCredentials(aws_access_key_id='***', aws_secret_access_key='***', aws_sts_token_expiration_hours=24.0)
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar, Union

from lakeload.config.credentials import MASK, Credentials, is_secret_key, parse_json_object
from lakeload.config.open_types import CredentialFields, FsspecOptions
from lakeload.errors import ConfigurationError

T = TypeVar("T", bound="TypedCredentials")
V = TypeVar("V")

_TRUE = ("1", "true", "yes", "on", "y", "t")
_FALSE = ("0", "false", "no", "off", "n", "f", "")


def not_secret(default: Any) -> Any:
    """A dataclass field whose name looks secret (`sftp_key_filename`, `token_uri`) but whose value is not."""
    return dataclasses.field(default=default, metadata={"secret": False})


def secret(default: Any = None) -> Any:
    """A dataclass field that is always masked when shown."""
    return dataclasses.field(default=default, metadata={"secret": True})


def is_secret_field(field: dataclasses.Field[Any]) -> bool:
    """Whether a field's value is masked in `repr`: explicit metadata first, else the name's look."""
    flag = field.metadata.get("secret")
    return is_secret_key(field.name) if flag is None else bool(flag)


def _base_type(hint: Any) -> Any:
    """`int` for `int | None`, `list` for `list[str] | None`; other hints unchanged."""
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return _base_type(args[0]) if len(args) == 1 else hint
    return origin or hint


def coerce_field(owner: str, name: str, value: Any, hint: Any, source: str | None) -> Any:
    """`value` converted to the field's declared type; strings (env vars) are parsed.

    >>> coerce_field("SFTPCredentials", "sftp_port", "2222", int, None)
    2222
    """
    base = _base_type(hint)
    where = f" (from {source})" if source else ""
    if value is None or base is Any:
        return value
    try:
        if base is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in _TRUE or text in _FALSE:
                return text in _TRUE
            raise ValueError("expected true or false")
        if base is int and not isinstance(value, bool):
            if isinstance(value, float) and not value.is_integer():
                raise ValueError("expected a whole number")
            return int(value)
        if base is float and not isinstance(value, bool):
            return float(value)
        if base is str:
            if isinstance(value, (dict, list, bool)):
                raise ValueError("expected a string")
            return str(value)
        if base is list:
            if isinstance(value, str):
                parsed = parse_json_object('{"v": ' + value + "}") if value.strip().startswith("[") else None
                items = parsed["v"] if parsed else value.replace(",", " ").split()
                return [str(v) for v in items]
            return [str(v) for v in value]
    except (TypeError, ValueError) as exc:
        shown = MASK if is_secret_key(name) else repr(value)
        raise ConfigurationError(
            f"{owner}.{name}{where} = {shown} is not a valid {getattr(base, '__name__', base)}: {exc}"
        ) from None
    return value


@dataclasses.dataclass(repr=False)
class TypedCredentials:
    """Base of the typed credentials of one backend; subclasses are dataclasses with dlt's fields."""

    backend: ClassVar[str] = ""
    protocols: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def field_names(cls) -> list[str]:
        """The valid field names, in declaration order."""
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def parse_native(cls, native: str) -> CredentialFields:
        """Fields from a backend's native credentials string; backends without one refuse it."""
        raise ConfigurationError(
            f"{cls.__name__} ({cls.backend}) has no native string form; give the credentials as fields "
            f"({', '.join(cls.field_names())})."
        )

    @classmethod
    def from_credentials(cls: type[T], credentials: Credentials | Mapping[str, Any] | None) -> T:
        """The typed credentials from lakeload's `Credentials` (fields plus an optional native string).

        Unknown field names raise `ConfigurationError` naming the valid fields; a native string is parsed
        by `parse_native` and explicit fields win over the values it holds.
        """
        if credentials is None:
            creds = Credentials()
        elif isinstance(credentials, Credentials):
            creds = credentials
        else:
            creds = Credentials.from_value(credentials)
        values: CredentialFields = {}
        sources: dict[str, str | None] = {}
        if creds.native is not None:
            for name, value in cls.parse_native(creds.native).items():
                values[name], sources[name] = value, creds.native_source
        valid = cls.field_names()
        unknown = [name for name in creds if name not in valid]
        if unknown:
            where = "; ".join(f"{n} from {creds.source(n)}" for n in unknown if creds.source(n))
            raise ConfigurationError(
                f"Unknown {cls.backend} credential field(s) {', '.join(repr(n) for n in unknown)}"
                f"{' (' + where + ')' if where else ''}. Valid fields for {cls.__name__}: {', '.join(valid)}."
            )
        for name in creds:
            if creds[name] is not None:
                values[name], sources[name] = creds[name], creds.source(name)
        hints = typing.get_type_hints(cls)
        coerced = {
            name: coerce_field(cls.__name__, name, value, hints.get(name, Any), sources.get(name))
            for name, value in values.items()
        }
        typed = cls(**coerced)
        typed.validate()
        return typed

    @classmethod
    def protocol_defaults(cls) -> FsspecOptions:
        """Constructor arguments for every bucket of the backend, overridable by user `kwargs`."""
        return {}

    def validate(self) -> None:
        """Raise `ConfigurationError` when fields are inconsistent (e.g. a key id without its secret)."""

    def fsspec_kwargs(self) -> FsspecOptions:
        """Constructor arguments for the backend's fsspec filesystem that override user `kwargs`."""
        return {}

    def fsspec_defaults(self) -> FsspecOptions:
        """Constructor arguments used only when user `kwargs` do not set them (default credential chains)."""
        return {}

    def masked(self) -> CredentialFields:
        """The fields that are not None, secrets replaced by `'***'`."""
        shown: CredentialFields = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                shown[field.name] = MASK if is_secret_field(field) else value
        return shown

    def __repr__(self) -> str:
        shown = self.masked()
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"

    __str__ = __repr__


def require(owner: TypedCredentials, what: str, names: list[str]) -> None:
    """Raise when some of `names` are set and others not (they only work together)."""
    given = [n for n in names if getattr(owner, n) not in (None, "")]
    missing = [n for n in names if n not in given]
    if given and missing:
        raise ConfigurationError(
            f"{type(owner).__name__}: {what} needs {', '.join(names)}; got {', '.join(given)} "
            f"but {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing."
        )


def without_none(values: Mapping[str, V]) -> dict[str, V]:
    """`values` without the entries that are None (so library defaults apply)."""
    return {k: v for k, v in values.items() if v is not None}

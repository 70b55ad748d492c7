"""Google Cloud Storage credentials for gcsfs: service account, OAuth (installed app), or defaults.

Which one is used follows from the fields given: a `private_key`/`client_email` means a service
account, a `refresh_token`/`client_secret` (or a bare access `token`) means OAuth, nothing means the
Google default credentials (`gcloud auth application-default login`, metadata server).

>>> GcpCredentials(project_id="p").fsspec_kwargs()
{'project': 'p'}
>>> GcpCredentials(project_id="p").fsspec_defaults()
{'token': 'google_default'}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypedDict, cast

from lakeload.config.bucket_credentials.base import (
    TypedCredentials,
    not_secret,
    require,
    secret,
    without_none,
)
from lakeload.config.credentials import parse_json_object
from lakeload.config.open_types import CredentialFields, FsspecOptions
from lakeload.errors import ConfigurationError

TOKEN_URI = "https://oauth2.googleapis.com/token"
AUTH_URI = "https://accounts.google.com/o/oauth2/auth"
# keys of a service-account JSON file that go to google-auth as they are
class ServiceAccountInfo(TypedDict, total=False):
    """A Google service account key (the JSON file's fields), as google-auth reads it; unset fields are left out."""

    type: str
    project_id: str
    private_key_id: str
    private_key: str
    client_email: str
    client_id: str
    token_uri: str
    auth_uri: str
    auth_provider_x509_cert_url: str
    client_x509_cert_url: str
    universe_domain: str


_SERVICE_ACCOUNT_KEYS = (
    "type", "project_id", "private_key_id", "private_key", "client_email", "client_id", "token_uri", "auth_uri",
    "auth_provider_x509_cert_url", "client_x509_cert_url", "universe_domain",
)


@dataclass(repr=False)
class GcpCredentials(TypedCredentials):
    """dlt's `GcpServiceAccountCredentials` and `GcpOAuthCredentials` fields in one class.

    The service-account JSON keys `auth_provider_x509_cert_url`, `client_x509_cert_url` and
    `universe_domain` are accepted too, so a whole key file can be given as the native string.

    >>> GcpCredentials.from_credentials({"client_email": "a@p", "private_key": "K"}).kind
    'service_account'
    """

    backend: ClassVar[str] = "gs"
    protocols: ClassVar[tuple[str, ...]] = ("gs", "gcs")

    # service account
    project_id: str | None = None
    private_key: str | None = secret()
    private_key_id: str | None = secret()
    client_email: str | None = None
    type: str = "service_account"
    token_uri: str = not_secret(TOKEN_URI)
    auth_uri: str = AUTH_URI
    # OAuth (installed app)
    client_id: str | None = None
    client_secret: str | None = secret()
    refresh_token: str | None = secret()
    scopes: list[str] | None = None
    token: str | None = secret()
    client_type: str = "installed"
    # other keys of a service-account JSON file
    auth_provider_x509_cert_url: str | None = None
    client_x509_cert_url: str | None = None
    universe_domain: str | None = None

    @classmethod
    def parse_native(cls, native: str) -> CredentialFields:
        """The JSON of a service account (or of an OAuth client, `{"installed": {...}}`)."""
        info = parse_json_object(native)
        if info is None:
            raise ConfigurationError(
                "GcpCredentials: the native credentials string must be the JSON of a service account key "
                "(or of an OAuth client); give fields such as project_id, private_key, client_email instead."
            )
        if len(info) == 1 and isinstance(next(iter(info.values())), dict):
            info = next(iter(info.values()))  # {"installed": {...}} from an OAuth client secrets file
        if info.get("type") == "authorized_user":
            info.pop("type")
        info.pop("redirect_uris", None)
        unknown = [k for k in info if k not in cls.field_names()]
        if unknown:
            raise ConfigurationError(
                f"GcpCredentials: unknown key(s) {', '.join(map(repr, unknown))} in the credentials JSON. "
                f"Valid fields: {', '.join(cls.field_names())}."
            )
        return info

    @property
    def kind(self) -> str:
        """`service_account`, `oauth` or `default`."""
        if self.private_key or self.client_email:
            return "service_account"
        if self.refresh_token or self.client_secret or self.token:
            return "oauth"
        return "default"

    def validate(self) -> None:
        if self.kind == "service_account":
            require(self, "a service account", ["client_email", "private_key"])
            if self.type != "service_account":
                raise ConfigurationError(f"GcpCredentials: type={self.type!r}; a service account has 'service_account'.")
        elif self.kind == "oauth" and not (self.token and not self.refresh_token and not self.client_secret):
            require(self, "OAuth", ["client_id", "client_secret", "refresh_token"])

    def normalized_private_key(self) -> str | None:
        """The PEM key with real newlines (env vars often carry `\\n`) and a final newline."""
        key = self.private_key
        if not key:
            return key
        if "\n" not in key and "\\n" in key:
            key = key.replace("\\n", "\n")
        return key if key.endswith("\n") else key + "\n"

    def service_account_info(self) -> ServiceAccountInfo:
        """The dict google-auth's `Credentials.from_service_account_info` reads."""
        info = without_none({k: getattr(self, k) for k in _SERVICE_ACCOUNT_KEYS})
        info["private_key"] = self.normalized_private_key()
        return cast(ServiceAccountInfo, info)

    def fsspec_kwargs(self) -> FsspecOptions:
        """gcsfs arguments: `project`, and `token` as a dict (service account, OAuth) or an access token."""
        options: FsspecOptions = without_none({"project": self.project_id or None})
        if self.kind == "service_account":
            options["token"] = self.service_account_info()
        elif self.kind == "oauth":
            if self.refresh_token:
                options["token"] = without_none(
                    {
                        "client_id": self.client_id,
                        "client_secret": self.client_secret,
                        "refresh_token": self.refresh_token,
                        "token_uri": self.token_uri,
                    }
                )
            else:
                options["token"] = self.token  # a bare access token; gcsfs cannot refresh it
        return options

    @classmethod
    def protocol_defaults(cls) -> FsspecOptions:
        """No listing cache: executors write to the bucket behind the driver's back."""
        return {"use_listings_cache": False}

    def fsspec_defaults(self) -> FsspecOptions:
        """With no credentials: Google default credentials (a `token` in kwargs, e.g. `"anon"`, wins)."""
        return {"token": "google_default"} if self.kind == "default" else {}

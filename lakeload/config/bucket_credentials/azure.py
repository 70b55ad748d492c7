"""Azure Blob Storage / ADLS Gen2 credentials for adlfs.

Tried in this order: a connection string (the native form), an account key or SAS token, a service
principal, and finally Azure's default credentials (`DefaultAzureCredential`: environment, managed
identity, Azure CLI) for the named storage account.

>>> AzureCredentials(azure_storage_account_name="acc").fsspec_defaults()
{'anon': False}
>>> AzureCredentials.protocol_defaults()["max_concurrency"]
1
>>> AzureCredentials.from_credentials(Credentials(native="AccountName=acc;AccountKey=k")).kind
'connection_string'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from lakeload.config.bucket_credentials.base import (
    TypedCredentials,
    not_secret,
    require,
    secret,
    without_none,
)
from lakeload.config.credentials import Credentials  # noqa: F401  (used by the doctest)
from lakeload.config.open_types import CredentialFields, FsspecOptions
from lakeload.errors import ConfigurationError

# connection-string keys that fill typed fields (the whole string is kept as well)
_CONNECTION_STRING_FIELDS = {
    "accountname": "azure_storage_account_name",
    "accountkey": "azure_storage_account_key",
    "sharedaccesssignature": "azure_storage_sas_token",
}
DEFAULT_MAX_CONCURRENCY = 1


def parse_connection_string(text: str) -> dict[str, str]:
    """`Key=Value;...` pairs of an Azure connection string (values may contain `=`).

    >>> parse_connection_string("AccountName=a;AccountKey=k==;BlobEndpoint=http://h/a")["AccountKey"]
    'k=='
    """
    pairs: dict[str, str] = {}
    for part in text.strip().split(";"):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ConfigurationError(
                "AzureCredentials: the native credentials string is not a connection string of "
                "Key=Value pairs separated by ';' (e.g. DefaultEndpointsProtocol=https;AccountName=...;AccountKey=...)."
            )
        pairs[key.strip()] = value.strip()
    return pairs


@dataclass(repr=False)
class AzureCredentials(TypedCredentials):
    """dlt's Azure fields (account key / SAS, service principal), plus `azure_connection_string`.

    `azure_sas_token_permissions` and `azure_sas_token_expiration_hours` only matter when a SAS token
    is minted from an account key for engines that need one; adlfs uses the key directly.
    """

    backend: ClassVar[str] = "az"
    protocols: ClassVar[tuple[str, ...]] = ("az", "abfs", "abfss", "adl", "azure")

    azure_storage_account_name: str | None = None
    azure_account_host: str | None = None
    azure_storage_account_key: str | None = secret()
    azure_storage_sas_token: str | None = secret()
    azure_sas_token_permissions: str = not_secret("racwdl")
    azure_sas_token_expiration_hours: float = not_secret(24.0)
    azure_tenant_id: str | None = None
    azure_client_id: str | None = None
    azure_client_secret: str | None = secret()
    azure_connection_string: str | None = secret()

    @classmethod
    def parse_native(cls, native: str) -> CredentialFields:
        """A connection string: kept whole, and its account name, key and SAS fill the typed fields."""
        fields: CredentialFields = {"azure_connection_string": native.strip()}
        for key, value in parse_connection_string(native).items():
            name = _CONNECTION_STRING_FIELDS.get(key.lower())
            if name and value:
                fields[name] = value
        return fields

    @property
    def kind(self) -> str:
        """`connection_string`, `account_key`, `sas_token`, `service_principal` or `default`."""
        if self.azure_connection_string:
            return "connection_string"
        if self.azure_storage_account_key:
            return "account_key"
        if self.azure_storage_sas_token:
            return "sas_token"
        if self.azure_tenant_id or self.azure_client_id or self.azure_client_secret:
            return "service_principal"
        return "default"

    def validate(self) -> None:
        if self.azure_connection_string:
            parse_connection_string(self.azure_connection_string)
            return
        if not self.azure_storage_account_name and self.kind != "default":
            # with nothing at all, adlfs reads AZURE_STORAGE_CONNECTION_STRING / _ACCOUNT_NAME itself
            raise ConfigurationError(
                f"AzureCredentials ({self.kind.replace('_', ' ')}): azure_storage_account_name is required; "
                "it cannot be inferred from the environment. Or give a connection string as the native value."
            )
        if self.kind == "service_principal":
            require(self, "a service principal", ["azure_tenant_id", "azure_client_id", "azure_client_secret"])
        if self.azure_sas_token_expiration_hours <= 0:
            raise ConfigurationError("AzureCredentials: azure_sas_token_expiration_hours must be positive.")

    def fsspec_kwargs(self) -> FsspecOptions:
        """adlfs arguments: `account_name`, `account_host` and one of `connection_string`,
        `account_key`/`sas_token`, `tenant_id`/`client_id`/`client_secret`."""
        options: FsspecOptions = without_none(
            {"account_name": self.azure_storage_account_name, "account_host": self.azure_account_host}
        )
        kind = self.kind
        if kind == "connection_string":
            options["connection_string"] = self.azure_connection_string
        elif kind in ("account_key", "sas_token"):
            options.update(
                without_none({"account_key": self.azure_storage_account_key, "sas_token": self.azure_storage_sas_token})
            )
        elif kind == "service_principal":
            options.update(
                tenant_id=self.azure_tenant_id, client_id=self.azure_client_id, client_secret=self.azure_client_secret
            )
        return options

    @classmethod
    def protocol_defaults(cls) -> FsspecOptions:
        """`max_concurrency=1`: adlfs otherwise uploads 4 MB chunks of one blob concurrently, using lots of
        memory and connections for big files. No listing cache: other processes write to the bucket."""
        return {"max_concurrency": DEFAULT_MAX_CONCURRENCY, "use_listings_cache": False}

    def fsspec_defaults(self) -> FsspecOptions:
        """`anon=False` with default credentials, so adlfs uses `DefaultAzureCredential`."""
        return {"anon": False} if self.kind == "default" else {}

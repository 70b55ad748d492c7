"""Storage configuration of the Delta Lake I/O manager: one typed class per backend, picked by `provider`.

Each class turns its fields into two things lakeload already knows how to use:
- `credentials()`: fields of lakeload's filesystem credentials (`aws_access_key_id`, `azure_storage_account_name`,
  ...), so the same values open the bucket for delta-rs and for the Spark executors (fsspec);
- `delta_options()`: delta-rs options that have no fsspec meaning (S3 commit options such as R2's copy-if-not-exists,
  Azure CLI or Fabric endpoints), laid over the options lakeload derives.
Fields left unset are taken from lakeload's own configuration (`[destination.filesystem.credentials]` in
`.lakeload/secrets.toml` or `DESTINATION__FILESYSTEM__CREDENTIALS__*`), field by field.

>>> S3Config(access_key_id="AKIA", endpoint="http://127.0.0.1:9000", allow_unsafe_rename=True).delta_options()
{'AWS_S3_ALLOW_UNSAFE_RENAME': 'true'}
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from enum import Enum
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from dagster import Config
from pydantic import Field

from lakeload.config.credentials import mask_value
from lakeload.config.open_types import CredentialFields, FsspecOptions
from lakeload.errors import ConfigurationError

V = TypeVar("V")

AZURITE_ACCOUNT = "devstoreaccount1"
# Azurite's well-known development key (published by Microsoft, not a secret)
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
AZURITE_DEFAULT_URL = "http://127.0.0.1:10000"


class WriteMode(str, Enum):
    """What a write does with rows already in its slice (the whole table, or the asset's partition)."""

    error = "error"  # fail when the slice already has rows
    append = "append"  # add the rows
    overwrite = "overwrite"  # replace the slice's rows in one commit
    ignore = "ignore"  # write nothing when the slice already has rows


class SchemaMode(str, Enum):
    """How a write may change the table's schema: add new columns, or (whole-table overwrite) replace it."""

    merge = "merge"
    overwrite = "overwrite"


def _flag(value: bool | None) -> str | None:
    return None if value is None else str(bool(value)).lower()


def _present(values: Mapping[str, V | None]) -> dict[str, V]:
    return {k: v for k, v in values.items() if v is not None and v != ""}


class _StorageConfig(Config):
    """Base of the storage configs: `repr` masks secret fields; no credentials or options by default."""

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={mask_value(k, v)!r}" for k, v in self.__dict__.items() if v is not None)
        return f"{type(self).__name__}({fields})"

    __str__ = __repr__

    def credentials(self) -> CredentialFields:
        return {}

    def fsspec_kwargs(self) -> FsspecOptions:
        return {}

    def delta_options(self) -> dict[str, str]:
        return {}

    def all_delta_options(self) -> dict[str, str]:
        """`delta_options()` with the backend's `client` options (HTTP client settings) over them."""
        client = getattr(self, "client", None)
        return {**self.delta_options(), **(client.delta_options() if client is not None else {})}


class ClientConfig(_StorageConfig):
    """HTTP client settings of delta-rs' object store (all backends)."""

    allow_http: bool | None = None
    allow_invalid_certificates: bool | None = None
    connect_timeout: str | None = None  # e.g. "5s"
    timeout: str | None = None  # e.g. "30s"
    pool_idle_timeout: str | None = None
    proxy_url: str | None = None
    user_agent: str | None = None

    def delta_options(self) -> dict[str, str]:
        return _present({
            "ALLOW_HTTP": _flag(self.allow_http),
            "ALLOW_INVALID_CERTIFICATES": _flag(self.allow_invalid_certificates),
            "CONNECT_TIMEOUT": self.connect_timeout, "TIMEOUT": self.timeout,
            "POOL_IDLE_TIMEOUT": self.pool_idle_timeout, "PROXY_URL": self.proxy_url, "USER_AGENT": self.user_agent,
        })


class LakeloadConfig(_StorageConfig):
    """Everything from lakeload's own configuration for the bucket of `root_uri` (the default): credentials
    in `[destination.filesystem.credentials]`, fsspec `kwargs`, `deltalake_storage_options`."""

    provider: Literal["lakeload"] = "lakeload"


class LocalConfig(_StorageConfig):
    """A table folder on this machine (or a mount every Spark executor sees at the same path)."""

    provider: Literal["local"] = "local"
    client: ClientConfig | None = None  # HTTP client options of this backend


class S3Config(_StorageConfig):
    """S3 and S3-compatible stores. Commits are atomic by conditional put (`If-None-Match`, AWS S3 and most
    S3-compatible stores) unless another commit option is set: `allow_unsafe_rename` (a single writer only)
    or `copy_if_not_exists` (Cloudflare R2's atomic copy header). `locking_provider="dynamodb"` is accepted
    for dagster-deltalake configs and means conditional puts: delta-rs 1.x has no DynamoDB log store."""

    provider: Literal["s3"] = "s3"
    access_key_id: str | None = None
    secret_access_key: str | None = None
    session_token: str | None = None
    region: str | None = None
    endpoint: str | None = None
    profile: str | None = None
    virtual_hosted_style_request: bool | None = None
    allow_unsafe_rename: bool | None = None
    locking_provider: str | None = None  # "dynamodb"
    lock_table_name: str | None = None
    dynamodb_endpoint: str | None = None
    copy_if_not_exists: str | None = None
    conditional_put: str | None = None
    client: ClientConfig | None = None  # HTTP client options of this backend

    def credentials(self) -> CredentialFields:
        style = None if self.virtual_hosted_style_request is None else ("vhost" if self.virtual_hosted_style_request else "path")
        return _present({
            "aws_access_key_id": self.access_key_id, "aws_secret_access_key": self.secret_access_key,
            "aws_session_token": self.session_token, "region_name": self.region, "endpoint_url": self.endpoint,
            "profile_name": self.profile, "s3_url_style": style,
        })

    def delta_options(self) -> dict[str, str]:
        return _present({
            "AWS_S3_ALLOW_UNSAFE_RENAME": _flag(self.allow_unsafe_rename),
            "AWS_COPY_IF_NOT_EXISTS": self.copy_if_not_exists,
            "AWS_CONDITIONAL_PUT": self.conditional_put or self._locking(),
        })

    def _locking(self) -> str | None:
        """A DynamoDB lock asked for: delta-rs 1.x commits atomically with S3 conditional puts instead
        (it dropped its DynamoDB log store and would ignore the setting), so lakeload uses those."""
        if self.locking_provider is None:
            return None
        if self.locking_provider.lower() != "dynamodb":
            raise ConfigurationError(
                f"S3Config(locking_provider={self.locking_provider!r}): the only locking provider is 'dynamodb'."
            )
        warnings.warn(
            "S3Config(locking_provider='dynamodb'): delta-rs no longer commits through a DynamoDB lock table; "
            "lakeload makes S3 commits atomic with conditional puts (If-None-Match), which AWS S3 supports for "
            "concurrent writers without a lock table. The lock table settings are not used.",
            stacklevel=2,
        )
        return "etag"


class AzureConfig(_StorageConfig):
    """Azure Blob Storage / ADLS Gen2: account key, SAS token or service principal, or the default
    credential chain. `use_emulator` targets Azurite (its well-known account and key) at
    `AZURITE_BLOB_STORAGE_URL`, default http://127.0.0.1:10000."""

    provider: Literal["azure"] = "azure"
    account_name: str | None = None
    account_key: str | None = None
    sas_key: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    tenant_id: str | None = None
    connection_string: str | None = None
    endpoint: str | None = None
    use_emulator: bool | None = None
    use_azure_cli: bool | None = None
    use_fabric_endpoint: bool | None = None
    client: ClientConfig | None = None  # HTTP client options of this backend

    def credentials(self) -> CredentialFields:
        if self.use_emulator:
            url = (self.endpoint or os.environ.get("AZURITE_BLOB_STORAGE_URL") or AZURITE_DEFAULT_URL).rstrip("/")
            if not url.endswith(f"/{AZURITE_ACCOUNT}"):
                url = f"{url}/{AZURITE_ACCOUNT}"
            return {
                "azure_storage_account_name": AZURITE_ACCOUNT, "azure_storage_account_key": AZURITE_KEY,
                "azure_connection_string": f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};"
                                           f"AccountKey={AZURITE_KEY};BlobEndpoint={url};",
            }
        return _present({
            "azure_storage_account_name": self.account_name, "azure_storage_account_key": self.account_key,
            "azure_storage_sas_token": self.sas_key, "azure_client_id": self.client_id,
            "azure_client_secret": self.client_secret, "azure_tenant_id": self.tenant_id,
            "azure_connection_string": self.connection_string, **self._endpoint(),
        })

    def _endpoint(self) -> dict[str, str]:
        """A bare host or an `https://host` is the account host; any other URL (http, an account path, as
        emulators have) travels in a connection string, the one form both adlfs and delta-rs take it in."""
        if not self.endpoint:
            return {}
        parts = urlsplit(self.endpoint if "://" in self.endpoint else f"https://{self.endpoint}")
        if parts.scheme == "https" and parts.path in ("", "/"):
            return {"azure_account_host": parts.netloc}
        secret = f"AccountKey={self.account_key};" if self.account_key else (
            f"SharedAccessSignature={self.sas_key.lstrip('?')};" if self.sas_key else None)
        if not self.account_name or secret is None:
            raise ConfigurationError(
                f"AzureConfig(endpoint={self.endpoint!r}): a custom endpoint URL needs account_name and account_key "
                "or sas_key (or give a connection_string, or use_emulator=True for Azurite)."
            )
        return {"azure_connection_string": f"DefaultEndpointsProtocol={parts.scheme};AccountName={self.account_name};"
                                           f"{secret}BlobEndpoint={self.endpoint.rstrip('/')};"}

    def delta_options(self) -> dict[str, str]:
        return _present({
            "AZURE_USE_AZURE_CLI": _flag(self.use_azure_cli),
            "AZURE_USE_FABRIC_ENDPOINT": _flag(self.use_fabric_endpoint),
        })


class GcsConfig(_StorageConfig):
    """Google Cloud Storage: a service-account key (JSON text, or a key file path), or Google's default
    credentials when neither is given. `endpoint` points at an emulator; `anonymous` skips signing."""

    provider: Literal["gcs"] = "gcs"
    service_account_key: str | None = None
    service_account: str | None = None  # path to a service-account key file (read, used like the key)
    application_credentials: str | None = None  # path to an application-default credentials file (passed on)
    endpoint: str | None = None
    anonymous: bool | None = None
    client: ClientConfig | None = None  # HTTP client options of this backend

    def credentials(self) -> CredentialFields:
        text = self.service_account_key
        path = self.service_account
        if not text and path:
            try:
                with open(os.path.expanduser(path), encoding="utf-8") as handle:
                    text = handle.read()
            except OSError as exc:
                raise ConfigurationError(
                    f"GcsConfig: cannot read the key file {path!r} ({exc.strerror}); give an existing service-account "
                    "key file or the key's JSON text as service_account_key."
                ) from None
        if not text:
            return {}
        try:
            key = json.loads(text)
        except ValueError:
            raise ConfigurationError(
                "GcsConfig: the service-account key is not JSON; give the key file's content (or its path as "
                "service_account)."
            ) from None
        return {k: v for k, v in key.items() if isinstance(v, str | list)}

    def fsspec_kwargs(self) -> FsspecOptions:
        """An application-credentials file is passed on by path (gcsfs and delta-rs read it themselves)."""
        token = "anon" if self.anonymous else (os.path.expanduser(self.application_credentials)
                                                if self.application_credentials else None)
        return _present({"endpoint_url": self.endpoint, "token": token})

    def delta_options(self) -> dict[str, str]:
        path = self.application_credentials
        return {"GOOGLE_APPLICATION_CREDENTIALS": os.path.expanduser(path)} if path and not self.anonymous else {}


StorageConfig = LakeloadConfig | LocalConfig | S3Config | AzureConfig | GcsConfig
PROVIDER_PROTOCOLS: dict[str, tuple[str, ...]] = {
    "local": ("file",), "s3": ("s3", "s3a"), "azure": ("az", "abfs", "abfss", "adl", "azure"), "gcs": ("gs", "gcs"),
}


def storage_field() -> Any:
    """The I/O manager's `storage_options` field: one of the configs above, told apart by `provider`."""
    return Field(default=LakeloadConfig(), discriminator="provider",
                 description="Storage backend settings: LakeloadConfig (default: lakeload's configuration), "
                             "LocalConfig, S3Config, AzureConfig or GcsConfig.")

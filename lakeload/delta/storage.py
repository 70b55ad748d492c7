"""Where delta-rs finds a Delta table of the dataset, and the object_store options it opens it with.

delta-rs does not use fsspec: it reads and commits through Rust's `object_store`, configured by a flat
dict of string options. `storage_options` derives that dict from the same settings the bucket is opened
with (typed credentials and fsspec `kwargs`, credentials winning, see `fsspec_kwargs`), then lays the
user's `deltalake_storage_options` over it: a user key replaces every spelling of the same option
(`AWS_REGION`, `aws_region`, `region`). The dict holds secrets in clear; it masks them in its `repr`,
and errors must be built with `delta_error`, never from the dict.

>>> from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
>>> table_uri(FilesystemConfiguration("s3://bucket/lake"), "bucket/lake/ds", "users")
's3://bucket/lake/ds/users'
>>> storage_options(FilesystemConfiguration("s3://bucket/lake", deltalake_storage_options={"AWS_REGION": "eu-west-1"}))
StorageOptions({'AWS_REGION': 'eu-west-1', 'AWS_CONDITIONAL_PUT': 'etag'})
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from lakeload.config.bucket_credentials import masked_options
from lakeload.config.bucket_credentials.azure import parse_connection_string
from lakeload.config.credentials import url_without_password
from lakeload.config.resolver import flat_text
from lakeload.destinations.impl.filesystem.client import destination_error, fsspec_kwargs
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.errors import ConfigurationError, DestinationError
from lakeload.kernel.filesystem.retry import RetryPolicy

S3_PROTOCOLS = ("s3", "s3a")
AZURE_PROTOCOLS = ("az", "abfs", "abfss", "adl", "azure")
GCS_PROTOCOLS = ("gs", "gcs")
DELTA_PROTOCOLS = ("file", *S3_PROTOCOLS, *AZURE_PROTOCOLS, *GCS_PROTOCOLS)
# S3 options that already choose how commits are made atomic: lakeload then adds no commit default
S3_COMMIT_OPTIONS = ("aws_s3_locking_provider", "aws_s3_allow_unsafe_rename", "aws_conditional_put",
                     "aws_copy_if_not_exists")
_SPELLINGS: dict[str, tuple[str, ...]] = {
    "aws_access_key_id": ("access_key_id",),
    "aws_secret_access_key": ("secret_access_key",),
    "aws_session_token": ("aws_token", "session_token", "token"),
    "aws_region": ("region", "aws_default_region", "default_region"),
    "aws_endpoint_url": ("aws_endpoint", "endpoint_url", "endpoint"),
    "aws_profile": ("profile",),
    "aws_virtual_hosted_style_request": ("virtual_hosted_style_request",),
    "aws_conditional_put": ("conditional_put",),
    "aws_copy_if_not_exists": ("copy_if_not_exists",),
    "azure_storage_account_name": ("account_name",),
    "azure_storage_account_key": ("azure_storage_access_key", "azure_storage_master_key", "account_key",
                                  "access_key", "master_key"),
    "azure_storage_sas_token": ("azure_storage_sas_key", "sas_token", "sas_key"),
    "azure_client_id": ("azure_storage_client_id", "client_id"),
    "azure_client_secret": ("azure_storage_client_secret", "client_secret"),
    "azure_tenant_id": ("azure_storage_tenant_id", "azure_storage_authority_id", "azure_authority_id",
                        "tenant_id", "authority_id"),
    "azure_storage_endpoint": ("azure_endpoint", "endpoint"),
    "azure_storage_use_emulator": ("use_emulator",),
    "google_service_account_key": ("service_account_key",),
    "google_service_account": ("service_account", "google_service_account_path", "service_account_path"),
    "google_application_credentials": ("application_credentials",),
    "google_base_url": ("base_url",),
    "allow_http": ("aws_allow_http", "azure_allow_http", "google_allow_http"),
    "skip_signature": ("aws_skip_signature", "azure_skip_signature", "google_skip_signature"),
}
ENDPOINT_OPTIONS = ("aws_endpoint_url", "azure_storage_endpoint", "google_base_url")
GCS_CREDENTIAL_OPTIONS = ("google_service_account_key", "google_service_account", "google_application_credentials",
                          "skip_signature")
# gcsfs `token` values that mean "find credentials yourself" (delta-rs then uses Google's default chain)
_GCS_DEFAULT_TOKENS = (None, "google_default", "cloud", "browser")


class StorageOptions(dict[str, str]):
    """delta-rs storage options: a plain `dict[str, str]` whose `repr`/`str` mask secret values.

    >>> StorageOptions({"AWS_REGION": "eu-west-1", "AWS_SECRET_ACCESS_KEY": "s"})
    StorageOptions({'AWS_REGION': 'eu-west-1', 'AWS_SECRET_ACCESS_KEY': '***'})
    """

    def masked(self) -> dict[str, str]:
        return masked_options(self)

    def __reduce__(self) -> tuple[type, tuple[dict[str, str]]]:
        return dict, (dict(self),)  # unpickles as a plain dict: importable on a bare Spark worker

    def __repr__(self) -> str:
        return f"StorageOptions({self.masked()!r})"

    __str__ = __repr__


def canonical_option(name: str, protocol: str = "") -> str:
    """The lower-case canonical name of a delta-rs option, whatever spelling is used (`protocol` picks
    between backends that share a short spelling such as `endpoint`).

    >>> canonical_option("AWS_DEFAULT_REGION"), canonical_option("SAS_TOKEN", "az"), canonical_option("endpoint", "s3")
    ('aws_region', 'azure_storage_sas_token', 'aws_endpoint_url')
    """
    lowered = name.lower()
    if lowered in _SPELLINGS:
        return lowered
    prefix = "aws_" if protocol in S3_PROTOCOLS else "azure_" if protocol in AZURE_PROTOCOLS else "google_"
    matches = [key for key, spellings in _SPELLINGS.items() if lowered in spellings]
    preferred = [key for key in matches if key.startswith(prefix)] or matches
    return preferred[0] if preferred else lowered


def delta_protocol(config: FilesystemConfiguration) -> str:
    """The bucket's protocol when delta-rs can open it; otherwise a `DestinationError` saying what to use."""
    protocol = config.protocol.lower()
    if protocol in DELTA_PROTOCOLS:
        return protocol
    reason = {
        "memory": "fsspec's memory:// filesystem lives inside this Python process, where delta-rs cannot see it",
        "sftp": "delta-rs has no SFTP object store",
        "ssh": "delta-rs has no SFTP object store",
    }.get(protocol, "delta-rs has no object store for it")
    raise DestinationError(
        f"Bucket {url_without_password(config.bucket_url)!r} ({protocol}://) cannot hold Delta tables: {reason}. "
        'Use a local path or an object store (s3://, az://, abfss://, gs://) as bucket_url for table_format="delta", '
        "or load these tables without table_format."
    )


def table_uri(config: FilesystemConfiguration, dataset_path: str, table_name: str) -> str:
    """The URI delta-rs opens for `table_name`: `<dataset_path>/<table_name>` in delta-rs' form.

    `dataset_path` is the fsspec path of the dataset (`FilesystemClient.dataset_path`, no protocol).
    Local tables get an absolute OS path; `gcs://` becomes `gs://`; an `abfss://container@account...`
    bucket keeps its account host.

    >>> table_uri(FilesystemConfiguration("file:///data/lake"), "/data/lake/ds", "users__pets")
    '/data/lake/ds/users__pets'
    """
    protocol = delta_protocol(config)
    path = posixpath.join(dataset_path.rstrip("/"), table_name)
    if protocol == "file":
        return os.path.abspath(path)
    if protocol in GCS_PROTOCOLS:
        return f"gs://{path}"
    netloc = urlsplit(config.bucket_url).netloc
    if protocol in AZURE_PROTOCOLS and "@" in netloc:
        container = netloc.split("@", 1)[0]
        rest = path.split("/", 1)[1] if path.startswith(container + "/") else path
        return f"{protocol}://{netloc}/{rest}"
    return f"{protocol}://{path}"


def _text(name: str, value: Any) -> str:
    text = flat_text(value)
    if text is not None:
        return text
    raise ConfigurationError(
        f"deltalake_storage_options[{name!r}] must be a string, number or boolean, got {type(value).__name__}; "
        "delta-rs takes only flat string options."
    )


def _http(url: str | None) -> bool:
    return bool(url) and str(url).lower().startswith("http://")


def s3_options(fs: Mapping[str, Any]) -> dict[str, str]:
    """delta-rs options from s3fs arguments (`key`, `secret`, `token`, `profile`, `endpoint_url`, region, style).

    >>> s3_options({"key": "AKIA", "secret": "s", "endpoint_url": "http://127.0.0.1:9000"})["AWS_ALLOW_HTTP"]
    'true'
    """
    client = fs.get("client_kwargs") or {}
    endpoint = fs.get("endpoint_url") or client.get("endpoint_url")
    style = ((fs.get("config_kwargs") or {}).get("s3") or {}).get("addressing_style")
    options = {
        "AWS_ACCESS_KEY_ID": fs.get("key"),
        "AWS_SECRET_ACCESS_KEY": fs.get("secret"),
        "AWS_SESSION_TOKEN": fs.get("token"),
        "AWS_PROFILE": fs.get("profile"),
        "AWS_REGION": client.get("region_name"),
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ALLOW_HTTP": "true" if _http(endpoint) else None,
        "AWS_SKIP_SIGNATURE": "true" if fs.get("anon") is True else None,
        "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": {"virtual": "true", "path": "false"}.get(str(style)),
    }
    return {k: str(v) for k, v in options.items() if v not in (None, "")}


def _connection_string_options(text: str) -> dict[str, str | None]:
    pairs = {k.lower(): v for k, v in parse_connection_string(text).items()}
    if pairs.get("usedevelopmentstorage", "").lower() == "true":
        return {"AZURE_STORAGE_USE_EMULATOR": "true"}
    endpoint = pairs.get("blobendpoint")
    account = pairs.get("accountname")
    if not endpoint and account and pairs.get("endpointsuffix"):
        endpoint = f"{pairs.get('defaultendpointsprotocol', 'https')}://{account}.blob.{pairs['endpointsuffix']}"
    return {
        "AZURE_STORAGE_ACCOUNT_NAME": account,
        "AZURE_STORAGE_ACCOUNT_KEY": pairs.get("accountkey"),
        "AZURE_STORAGE_SAS_TOKEN": pairs.get("sharedaccesssignature"),
        "AZURE_STORAGE_ENDPOINT": endpoint.rstrip("/") if endpoint else None,
    }


def azure_options(fs: Mapping[str, Any]) -> dict[str, str]:
    """delta-rs options from adlfs arguments; a connection string is split into account, key/SAS and endpoint.

    >>> azure_options({"connection_string": "AccountName=a;AccountKey=k;BlobEndpoint=http://127.0.0.1:1/a"})
    {'AZURE_STORAGE_ACCOUNT_NAME': 'a', 'AZURE_STORAGE_ACCOUNT_KEY': 'k', 'AZURE_STORAGE_ENDPOINT': 'http://127.0.0.1:1/a', 'AZURE_ALLOW_HTTP': 'true'}
    """
    host = fs.get("account_host")
    options: dict[str, str | None] = {
        "AZURE_STORAGE_ACCOUNT_NAME": fs.get("account_name"),
        "AZURE_STORAGE_ACCOUNT_KEY": fs.get("account_key"),
        "AZURE_STORAGE_SAS_TOKEN": fs.get("sas_token"),
        "AZURE_CLIENT_ID": fs.get("client_id"),
        "AZURE_CLIENT_SECRET": fs.get("client_secret"),
        "AZURE_TENANT_ID": fs.get("tenant_id"),
        "AZURE_STORAGE_ENDPOINT": (host if "://" in host else f"https://{host}") if host else None,
        "AZURE_SKIP_SIGNATURE": "true" if fs.get("anon") is True else None,
    }
    if fs.get("connection_string"):
        parsed = _connection_string_options(str(fs["connection_string"]))
        options.update({k: v for k, v in parsed.items() if v})
    if _http(options.get("AZURE_STORAGE_ENDPOINT")):
        options["AZURE_ALLOW_HTTP"] = "true"
    return {k: str(v) for k, v in options.items() if v not in (None, "")}


def gcs_options(fs: Mapping[str, Any], user_has_credentials: bool = False) -> dict[str, str]:
    """delta-rs options from gcsfs arguments: a service-account `token` dict becomes its JSON key,
    `token="anon"` skips signing, a key file path is passed on, `endpoint_url` becomes the base URL.

    OAuth user tokens (refresh token, bare access token) cannot be given to delta-rs inline: unless the
    user's `deltalake_storage_options` carry Google credentials, that is a `DestinationError`.

    >>> gcs_options({"token": "anon", "endpoint_url": "http://127.0.0.1:4443"})
    {'GOOGLE_SKIP_SIGNATURE': 'true', 'GOOGLE_BASE_URL': 'http://127.0.0.1:4443', 'ALLOW_HTTP': 'true'}
    """
    token, endpoint = fs.get("token"), fs.get("endpoint_url")
    options: dict[str, str | None] = {}
    if isinstance(token, Mapping) and token.get("private_key"):
        options["GOOGLE_SERVICE_ACCOUNT_KEY"] = json.dumps(dict(token))
    elif token == "anon":
        options["GOOGLE_SKIP_SIGNATURE"] = "true"
    elif isinstance(token, str) and os.path.isfile(os.path.expanduser(token)):
        options["GOOGLE_APPLICATION_CREDENTIALS"] = os.path.expanduser(token)
    elif token not in _GCS_DEFAULT_TOKENS and not user_has_credentials:
        raise DestinationError(
            "delta-rs cannot use GCP OAuth user credentials (refresh token or access token) given inline. "
            "Use a service-account key in the credentials, or point deltalake_storage_options "
            "'{\"GOOGLE_APPLICATION_CREDENTIALS\": \"<path to an authorized_user or service-account JSON file>\"}' "
            "at a key file, or rely on Google's default credentials."
        )
    options["GOOGLE_BASE_URL"] = endpoint
    options["ALLOW_HTTP"] = "true" if _http(endpoint) else None
    return {k: str(v) for k, v in options.items() if v not in (None, "")}


def merge_options(derived: Mapping[str, str], user: Mapping[str, Any], protocol: str = "") -> StorageOptions:
    """`derived` options overlaid with the user's: a user key drops every derived spelling of the same option.

    >>> merge_options({"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "A"}, {"region": "eu-west-1"}, "s3")
    StorageOptions({'AWS_ACCESS_KEY_ID': '***', 'region': 'eu-west-1'})
    """
    given = {canonical_option(name, protocol) for name in user}
    merged = StorageOptions({k: v for k, v in derived.items() if canonical_option(k, protocol) not in given})
    merged.update({str(name): _text(str(name), value) for name, value in user.items()})
    return merged


def _allow_http(protocol: str, options: Mapping[str, str]) -> dict[str, str]:
    """`ALLOW_HTTP` for an `http://` endpoint the user gave without saying whether plain HTTP is allowed."""
    names = {canonical_option(name, protocol): name for name in options}
    endpoint = next((options[names[key]] for key in ENDPOINT_OPTIONS if key in names), None)
    if "allow_http" in names or not _http(endpoint):
        return {}
    prefix = "AWS_" if protocol in S3_PROTOCOLS else "AZURE_" if protocol in AZURE_PROTOCOLS else ""
    return {f"{prefix}ALLOW_HTTP": "true"}


def _commit_default(protocol: str, options: Mapping[str, str]) -> dict[str, str]:
    """S3 commits made atomic with conditional puts (`If-None-Match`), unless the user chose a commit mode."""
    if protocol not in S3_PROTOCOLS:
        return {}
    chosen = {canonical_option(name, protocol) for name in options}
    return {} if chosen & set(S3_COMMIT_OPTIONS) else {"AWS_CONDITIONAL_PUT": "etag"}


_DERIVERS: dict[str, Callable[[Mapping[str, Any]], dict[str, str]]] = {
    **{p: s3_options for p in S3_PROTOCOLS}, **{p: azure_options for p in AZURE_PROTOCOLS},
}


def storage_options(config: FilesystemConfiguration) -> StorageOptions:
    """delta-rs `storage_options` for the tables of `config`'s bucket: credentials merged with the user's
    `deltalake_storage_options` (user keys win). Secrets are in clear: log `options.masked()` only.

    >>> storage_options(FilesystemConfiguration("file:///data/lake"))
    StorageOptions({})
    """
    protocol = delta_protocol(config)
    user = dict(config.deltalake_storage_options or {})
    if protocol == "file":
        return merge_options({}, user, protocol)
    fs = fsspec_kwargs(config)
    if protocol in GCS_PROTOCOLS:
        has_credentials = any(canonical_option(name, protocol) in GCS_CREDENTIAL_OPTIONS for name in user)
        derived = gcs_options(fs, user_has_credentials=has_credentials)
    else:
        derived = _DERIVERS[protocol](fs)
    merged = merge_options(derived, user, protocol)
    merged.update(_allow_http(protocol, merged))
    merged.update(_commit_default(protocol, merged))
    return merged


def _millis(seconds: float) -> str:
    return f"{round(seconds * 1000)}ms"


def retry_storage_options(options: Mapping[str, str], policy: RetryPolicy, protocol: str) -> StorageOptions:
    """`options` plus object_store's retries and time-outs from lakeload's retry policy, for the options
    the user did not set: `max_retries` (attempts - 1), `retry_timeout` (`unreachable_timeout`), the
    backoff, `connect_timeout`, and `timeout` (a whole request: 3 x `read_timeout`, at least 30 s).
    Local tables get nothing (no object store).

    >>> retry_storage_options({}, RetryPolicy(), "s3")["max_retries"]
    '3'
    """
    merged = StorageOptions(options)
    if protocol == "file":
        return merged
    derived = {
        "max_retries": str(policy.attempts - 1),
        "retry_timeout": _millis(policy.unreachable_timeout),
        "backoff_config.init_backoff": _millis(policy.initial_backoff),
        "backoff_config.max_backoff": _millis(policy.max_backoff),
        "connect_timeout": _millis(policy.connect_timeout),
        "timeout": _millis(max(30.0, 3 * policy.read_timeout)),
    }
    given = {name.lower() for name in options}
    merged.update({name: value for name, value in derived.items() if name not in given})
    return merged


def delta_error(exc: BaseException, config: FilesystemConfiguration, options: Mapping[str, Any],
                action: str) -> DestinationError:
    """A `DestinationError` for a failed delta-rs call that names the bucket, never a secret of `options`.

    Raise it outside the `except` block, so that no secret-bearing exception is chained implicitly.
    """
    return destination_error(exc, config.bucket_url, options, action)

"""Documentation of configuration keys: type, default and a one-line description (`KeyDoc`).

The registry of every key lakeload reads is `lakeload.runtime.key_reference` (it imports the default constants of
the layers above this one). Here: the `KeyDoc` record, how a type and a default are shown (`type_text`,
`default_text`, as they would be written in TOML), and the documentation of what this layer and the ones below
declare themselves: the retry policy's keys (`lakeload.kernel.filesystem.retry.RetryPolicy`) and the credential
fields of every bucket protocol (the typed dataclasses of `lakeload.config.bucket_credentials`), whose types and
defaults are read from the dataclasses; only the descriptions are written here.

>>> retry_key_docs()["retry_attempts"]
KeyDoc(type='int', default='4', doc='Attempts of one bucket operation, the first included (1 = no retry).')
>>> credential_key_docs()["sftp_port"].default
'22'
"""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from typing import Any

from lakeload.config.known_keys import RETRY_KEYS
from lakeload.kernel.filesystem.retry import RetryPolicy


@dataclasses.dataclass(frozen=True)
class KeyDoc:
    """One key's documentation. `type` as written in TOML terms (`str`, `float`, `table`); `default` as it would be
    written in TOML (`"local[*]"`, `900.0`, `true`), or a short description of a computed default in parentheses,
    or `""` when the key has none; `doc`: one line."""

    type: str
    default: str
    doc: str


def type_text(hint: Any) -> str:
    """A type annotation as short text, module paths dropped.

    >>> type_text(int), type_text("str | None"), type_text(list[str] | None)
    ('int', 'str | None', 'list[str] | None')
    """
    if isinstance(hint, type) and not typing.get_args(hint):
        return hint.__name__
    text = hint if isinstance(hint, str) else repr(hint)
    return re.sub(r"\b(?:[a-z_]\w*\.)+(\w+)", r"\1", text)


def default_text(value: Any) -> str:
    """A default value as it is written in TOML; `""` for None (no default: the key is unset).

    >>> default_text(True), default_text("local[*]"), default_text(900.0), default_text(None), default_text({})
    ('true', '"local[*]"', '900.0', '', '{}')
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value)


def field_default(cls: type, name: str) -> Any:
    """The default of dataclass `cls`'s field `name` (its factory's value), or None when it has none."""
    found = {f.name: f for f in dataclasses.fields(cls)}[name]
    if found.default is not dataclasses.MISSING:
        return found.default
    if found.default_factory is not dataclasses.MISSING:
        return found.default_factory()
    return None


def from_field(cls: type, name: str, doc: str, type_: str | None = None) -> KeyDoc:
    """A `KeyDoc` whose type (unless given) and default are those of dataclass `cls`'s field `name`."""
    hint = type_ or type_text(typing.get_type_hints(cls)[name])
    return KeyDoc(hint, default_text(field_default(cls, name)), doc)


# `RETRY_KEYS` -> description (their fields' types and defaults are RetryPolicy's)
RETRY_DOCS = {
    "retry_attempts": "Attempts of one bucket operation, the first included (1 = no retry).",
    "retry_initial_backoff": "Seconds to wait before the first retry; doubled for each further one.",
    "retry_max_backoff": "The longest wait between two attempts, in seconds.",
    "retry_jitter": "Fraction (0 to 1) by which each wait is shortened at random.",
    "connect_timeout": "Seconds one attempt may wait for the connection to the store.",
    "read_timeout": "Seconds one attempt may wait for the store's answer.",
    "unreachable_timeout": "Seconds after which a store that does not answer at all fails the operation.",
}


def retry_key_docs() -> dict[str, KeyDoc]:
    """The retry keys of a `[destination.<name>]` section, typed and defaulted from `RetryPolicy`'s fields."""
    return {key: from_field(RetryPolicy, name, RETRY_DOCS[key]) for key, name in RETRY_KEYS.items()}


# credential field -> description (types and defaults: the typed credential dataclasses)
CREDENTIAL_DOCS = {
    # s3
    "aws_access_key_id": "Access key id; without one, botocore's default chain (env, ~/.aws, instance role) is used.",
    "aws_secret_access_key": "Secret access key of `aws_access_key_id`.",
    "aws_session_token": "Session token of temporary (STS) credentials.",
    "profile_name": "A profile of ~/.aws/credentials to use instead of keys.",
    "region_name": "The bucket's region.",
    "endpoint_url": "Endpoint of an S3-compatible store (MinIO, R2, ...).",
    "s3_url_style": "`path` or `vhost`: botocore's addressing style.",
    "aws_sts_token_expiration_hours": "Lifetime in hours of STS tokens minted for engines that need them.",
    # gs
    "project_id": "The Google Cloud project.",
    "private_key": "A service account's private key (PEM).",
    "private_key_id": "The id of the service account's key.",
    "client_email": "The service account's e-mail.",
    "type": "The kind of Google credentials (`service_account`).",
    "token_uri": "Google's OAuth token endpoint.",
    "auth_uri": "Google's OAuth authorization endpoint.",
    "client_id": "OAuth client id (installed app), or the service account's client id.",
    "client_secret": "OAuth client secret (installed app).",
    "refresh_token": "OAuth refresh token (installed app).",
    "scopes": "OAuth scopes to request.",
    "token": "An OAuth access token used as it is.",
    "client_type": "The kind of OAuth client (`installed`).",
    "auth_provider_x509_cert_url": "Certificate URL of the auth provider (from a service account's JSON file).",
    "client_x509_cert_url": "Certificate URL of the service account (from its JSON file).",
    "universe_domain": "Google Cloud universe domain (from a service account's JSON file).",
    # az
    "azure_storage_account_name": "The storage account.",
    "azure_account_host": "Host of the storage account's endpoint, when it is not the default one.",
    "azure_storage_account_key": "The storage account's key.",
    "azure_storage_sas_token": "A SAS token for the account or container.",
    "azure_sas_token_permissions": "Permissions of SAS tokens minted from the account key for engines that need one.",
    "azure_sas_token_expiration_hours": "Lifetime in hours of SAS tokens minted from the account key.",
    "azure_tenant_id": "Tenant of a service principal.",
    "azure_client_id": "Client (application) id of a service principal.",
    "azure_client_secret": "Secret of the service principal.",
    "azure_connection_string": "A whole connection string (the native form); fills account name, key and SAS.",
    # sftp
    "sftp_port": "Port of the SFTP server (the host comes from the bucket URL).",
    "sftp_username": "User name.",
    "sftp_password": "Password (or the passphrase paramiko tries for keys).",
    "sftp_key_filename": "Path of a private key file.",
    "sftp_key_passphrase": "Passphrase of the private key.",
    "sftp_timeout": "Seconds to wait for the TCP connection.",
    "sftp_banner_timeout": "Seconds to wait for the SSH banner.",
    "sftp_auth_timeout": "Seconds to wait for authentication.",
    "sftp_channel_timeout": "Seconds to wait for the SFTP channel to open.",
    "sftp_allow_agent": "Try the keys of a running SSH agent.",
    "sftp_look_for_keys": "Try the private keys found in ~/.ssh.",
    "sftp_compress": "Compress the SSH connection.",
    "sftp_gss_auth": "Authenticate with GSS-API (Kerberos).",
    "sftp_gss_kex": "Exchange keys with GSS-API.",
    "sftp_gss_deleg_creds": "Delegate GSS-API credentials to the server.",
    "sftp_gss_host": "The host name GSS-API authenticates against.",
    "sftp_gss_trust_dns": "Trust DNS to canonicalize the GSS-API host name.",
    "sftp_known_hosts": "known_hosts file the server's host key is checked against (unset: ~/.ssh/known_hosts).",
    "sftp_verify_host_key": "Refuse a server whose host key is not in the known_hosts file.",
}


def credential_key_docs() -> dict[str, KeyDoc]:
    """Every credential field of every bucket protocol, typed and defaulted from its dataclass."""
    from lakeload.config.bucket_credentials import credential_classes

    return {
        name: from_field(cls, name, CREDENTIAL_DOCS[name])
        for cls in credential_classes() for name in cls.field_names()
    }

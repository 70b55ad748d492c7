"""SFTP credentials for paramiko, opened through `VerifiedSFTPFileSystem` (see `sftp_fs.py`).

The seventeen `sftp_*` fields of dlt's `SFTPCredentials` with its defaults, plus lakeload's host-key
settings `sftp_known_hosts` (default `~/.ssh/known_hosts`) and `sftp_verify_host_key` (default True).
The host comes from the bucket URL (`sftp://host/path`).

>>> creds = SFTPCredentials(sftp_username="foo", sftp_password="pass")
>>> {k: creds.fsspec_kwargs()[k] for k in ("port", "username", "verify_host_key")}
{'port': 22, 'username': 'foo', 'verify_host_key': True}
>>> creds.auth_methods()
['agent', 'look_for_keys', 'password']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from lakeload.config.bucket_credentials.base import (
    TypedCredentials,
    not_secret,
    secret,
    without_none,
)
from lakeload.config.open_types import FsspecOptions
from lakeload.errors import ConfigurationError

# typed field -> paramiko SSHClient.connect / VerifiedSFTPFileSystem argument
FIELD_TO_OPTION = {
    "sftp_port": "port",
    "sftp_username": "username",
    "sftp_password": "password",
    "sftp_key_filename": "key_filename",
    "sftp_key_passphrase": "passphrase",
    "sftp_timeout": "timeout",
    "sftp_banner_timeout": "banner_timeout",
    "sftp_auth_timeout": "auth_timeout",
    "sftp_channel_timeout": "channel_timeout",
    "sftp_allow_agent": "allow_agent",
    "sftp_look_for_keys": "look_for_keys",
    "sftp_compress": "compress",
    "sftp_gss_auth": "gss_auth",
    "sftp_gss_kex": "gss_kex",
    "sftp_gss_deleg_creds": "gss_deleg_creds",
    "sftp_gss_host": "gss_host",
    "sftp_gss_trust_dns": "gss_trust_dns",
    "sftp_known_hosts": "known_hosts",
    "sftp_verify_host_key": "verify_host_key",
}


@dataclass(repr=False)
class SFTPCredentials(TypedCredentials):
    """dlt's SFTP fields and defaults; authentication priority: key file, agent, password, GSS-API.

    >>> SFTPCredentials(sftp_verify_host_key=False).fsspec_kwargs()["verify_host_key"]
    False
    """

    backend: ClassVar[str] = "sftp"
    protocols: ClassVar[tuple[str, ...]] = ("sftp", "ssh")

    sftp_port: int = 22
    sftp_username: str | None = None
    sftp_password: str | None = secret()
    sftp_key_filename: str | None = not_secret(None)
    sftp_key_passphrase: str | None = secret()
    sftp_timeout: float | None = None
    sftp_banner_timeout: float | None = None
    sftp_auth_timeout: float | None = None
    sftp_channel_timeout: float | None = None
    sftp_allow_agent: bool = True
    sftp_look_for_keys: bool = True
    sftp_compress: bool = False
    sftp_gss_auth: bool = False
    sftp_gss_kex: bool = False
    sftp_gss_deleg_creds: bool = True
    sftp_gss_host: str | None = None
    sftp_gss_trust_dns: bool = True
    # lakeload: host-key verification (not in dlt, which accepts any host key)
    sftp_known_hosts: str | None = None
    sftp_verify_host_key: bool = not_secret(True)

    def validate(self) -> None:
        if not 0 < self.sftp_port < 65536:
            raise ConfigurationError(f"SFTPCredentials: sftp_port={self.sftp_port} is not a TCP port.")
        for name in ("sftp_timeout", "sftp_banner_timeout", "sftp_auth_timeout", "sftp_channel_timeout"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ConfigurationError(f"SFTPCredentials: {name}={value} must be positive.")

    def fsspec_kwargs(self) -> FsspecOptions:
        """`VerifiedSFTPFileSystem` arguments (paramiko `SSHClient.connect` plus host-key settings)."""
        return without_none({option: getattr(self, name) for name, option in FIELD_TO_OPTION.items()})

    def auth_methods(self) -> list[str]:
        """The enabled authentication methods in the order they are tried."""
        from lakeload.kernel.filesystem.sftp_fs import auth_methods

        return auth_methods(self.fsspec_kwargs())

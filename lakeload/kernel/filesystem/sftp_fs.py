"""Executor-safe: fsspec's paramiko SFTP filesystem with host-key verification and fast transfers.

Imports only fsspec, paramiko and the standard library, because Spark executors open it.

* Host keys are checked against a known_hosts file (`known_hosts`, default `~/.ssh/known_hosts`) with
  paramiko's `RejectPolicy`; `verify_host_key=False` accepts any key (`AutoAddPolicy`, nothing saved).
* Authentication follows dlt's documented priority: (1) the key file(s) in `key_filename`, (2) keys of
  the SSH agent and `~/.ssh/id_*`, (3) the password, (4) GSS-API (Kerberos). 1-3 are offered on one
  connection in that order; GSS-API, when enabled, on a second connection if they all fail.
* Writes are pipelined and parent folders are created on write (reads are not prefetched: with
  range reads, as DuckDB does them, a prefetching paramiko file can hang when it is closed).

>>> register_sftp()  # make fsspec's "sftp"/"ssh" protocols use VerifiedSFTPFileSystem
>>> import fsspec; fsspec.get_filesystem_class("sftp").__name__
'VerifiedSFTPFileSystem'
"""

from __future__ import annotations

import inspect
import os
import posixpath
from typing import Any

import fsspec
import paramiko
from fsspec.implementations.sftp import SFTPFileSystem

from lakeload.kernel.filesystem.protocols import SFTP_PROTOCOLS

DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"
GSS_OPTIONS = ("gss_auth", "gss_kex", "gss_deleg_creds", "gss_host", "gss_trust_dns")
# paramiko 5 dropped GSS-API: its SSHClient.connect has no gss_* arguments any more
PARAMIKO_HAS_GSS = "gss_auth" in inspect.signature(paramiko.SSHClient.connect).parameters
PROTOCOLS = SFTP_PROTOCOLS
SshOptions = dict[str, Any]
"""Keyword arguments of paramiko's `SSHClient.connect` (a subset of the sftp filesystem's options): paramiko's own
names (`password`, `key_filename`, `pkey`, `gss_auth`, ...), passed on as the user gave them."""


class HostKeyVerificationError(paramiko.SSHException):  # type: ignore[misc]  # paramiko has no type hints
    """The server's host key is unknown or differs from the one in known_hosts."""


def auth_methods(ssh_kwargs: SshOptions) -> list[str]:
    """The authentication methods the options enable, in the order they are tried.

    >>> auth_methods({"key_filename": "/k", "password": "p", "allow_agent": False, "look_for_keys": False})
    ['key_filename', 'password']
    """
    methods = []
    if ssh_kwargs.get("key_filename") or ssh_kwargs.get("pkey") is not None:
        methods.append("key_filename")
    if ssh_kwargs.get("allow_agent", True):
        methods.append("agent")
    if ssh_kwargs.get("look_for_keys", True):
        methods.append("look_for_keys")
    if ssh_kwargs.get("password") is not None:
        methods.append("password")
    if ssh_kwargs.get("gss_auth") or ssh_kwargs.get("gss_kex"):
        methods.append("gssapi")
    return methods


def auth_attempts(ssh_kwargs: SshOptions) -> list[tuple[str, SshOptions]]:
    """The `SSHClient.connect` arguments of each connection attempt, in priority order.

    The first attempt offers key file, agent, `~/.ssh` keys and password (paramiko tries them in that
    order) with GSS-API off; the second, only when `gss_auth`/`gss_kex` is set, uses GSS-API alone.

    >>> [name for name, _ in auth_attempts({"password": "p", "gss_auth": True})]
    ['key/agent/password', 'gssapi']
    """
    gss = {k: ssh_kwargs[k] for k in GSS_OPTIONS if k in ssh_kwargs}
    base = {k: v for k, v in ssh_kwargs.items() if k not in GSS_OPTIONS}
    methods = auth_methods(ssh_kwargs)
    attempts: list[tuple[str, SshOptions]] = []
    if set(methods) - {"gssapi"}:
        first = dict(base)
        if PARAMIKO_HAS_GSS:
            first.update(gss_auth=False, gss_kex=False)
        attempts.append(("key/agent/password", first))
    if "gssapi" in methods:
        second = {k: v for k, v in base.items() if k not in ("password", "key_filename", "pkey", "passphrase")}
        second.update(allow_agent=False, look_for_keys=False, **gss)
        attempts.append(("gssapi", second))
    return attempts


class VerifiedSFTPFileSystem(SFTPFileSystem):  # type: ignore[misc]  # fsspec's implementations have no type hints
    """fsspec's `SFTPFileSystem` that verifies host keys and tries auth methods in dlt's order.

    Example (connects to the server)::

        fs = VerifiedSFTPFileSystem("sftp.example.com", port=2222, username="u", password="p",
                                    known_hosts="/etc/lakeload/known_hosts")
    """

    protocol = PROTOCOLS

    def __init__(self, host: str, known_hosts: str | None = None, verify_host_key: bool = True,
                 **ssh_kwargs: Any) -> None:
        if self._cached:
            return
        if "host_key_policy" in ssh_kwargs:
            raise ValueError("VerifiedSFTPFileSystem: use verify_host_key/known_hosts instead of host_key_policy.")
        self.known_hosts = os.path.expanduser(known_hosts or DEFAULT_KNOWN_HOSTS)
        self.known_hosts_explicit = known_hosts is not None
        self.verify_host_key = bool(verify_host_key)
        if known_hosts is not None and self.verify_host_key and not os.path.isfile(self.known_hosts):
            raise HostKeyVerificationError(
                f"known_hosts file {self.known_hosts} does not exist; create it (ssh-keyscan -p PORT HOST > FILE) "
                "or set sftp_verify_host_key=false to accept any host key."
            )
        super().__init__(host, **ssh_kwargs)

    def _new_client(self) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        if self.verify_host_key:
            if os.path.isfile(self.known_hosts):
                # load_system_host_keys: never written back, unlike load_host_keys
                client.load_system_host_keys(self.known_hosts)
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
        else:
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        return client

    def _connect(self) -> None:
        port = self.ssh_kwargs.get("port", 22)
        attempts = auth_attempts(self.ssh_kwargs)
        if not attempts:
            raise paramiko.AuthenticationException(
                f"no SFTP authentication method enabled for {self.host}:{port}: give a key file, a password, "
                "or allow the SSH agent / ~/.ssh keys."
            )
        failure: Exception | None = None
        for name, kwargs in attempts:
            if name == "gssapi" and not PARAMIKO_HAS_GSS:
                note = f"GSS-API authentication needs paramiko < 5 (installed: {paramiko.__version__})"
                if failure is None:
                    raise paramiko.AuthenticationException(note)
                raise paramiko.AuthenticationException(f"{failure}; {note}") from failure
            client = self._new_client()
            try:
                client.connect(self.host, **kwargs)
            except paramiko.BadHostKeyException as exc:
                client.close()
                raise HostKeyVerificationError(
                    f"host key of {self.host}:{port} does not match {self.known_hosts} "
                    f"(got {exc.key.get_name()} {exc.key.fingerprint}): possible man-in-the-middle attack; "
                    "if the server's key changed, update known_hosts."
                ) from None
            except paramiko.AuthenticationException as exc:
                client.close()
                failure = exc
                continue
            except paramiko.SSHException as exc:
                client.close()
                if "known_hosts" in str(exc) or "not found in" in str(exc):
                    raise HostKeyVerificationError(
                        f"host key of {self.host}:{port} is not in {self.known_hosts}; add it "
                        f"(ssh-keyscan -p {port} {self.host} >> {self.known_hosts}) or set "
                        "sftp_verify_host_key=false to accept any host key."
                    ) from None
                raise
            self.client = client
            self.ftp = client.open_sftp()
            return
        assert failure is not None
        raise failure

    def makedirs(self, path: str, exist_ok: bool = False, mode: int = 511) -> None:
        """Create `path` and its parents; tolerates a folder another process creates concurrently."""
        path = self._strip_protocol(path)
        if self.exists(path):
            if not exist_ok:
                raise FileExistsError(f"File exists: {path}")
            return
        parent = posixpath.dirname(path.rstrip("/"))
        if parent and parent != path and not self.exists(parent):
            self.makedirs(parent, exist_ok=True, mode=mode)
        try:
            self.ftp.mkdir(path, mode)
        except OSError:
            if not self.isdir(path):
                raise

    def _open(self, path: str, mode: str = "rb", block_size: int | None = None, **kwargs: Any) -> Any:
        writing = any(c in mode for c in "wax+")
        if writing and kwargs.get("autocommit", True):
            parent = self._parent(path)
            if parent:
                self.makedirs(parent, exist_ok=True)
        f = super()._open(path, mode=mode, block_size=block_size, **kwargs)
        if writing:
            f.set_pipelined(True)  # don't wait for every write's acknowledgement
        # no prefetch() on reads: with range reads (DuckDB) a prefetching file can hang in close()
        return f


def register_sftp() -> None:
    """Make fsspec's `sftp` and `ssh` protocols open `VerifiedSFTPFileSystem` in this process."""
    for protocol in PROTOCOLS:
        fsspec.register_implementation(protocol, VerifiedSFTPFileSystem, clobber=True)

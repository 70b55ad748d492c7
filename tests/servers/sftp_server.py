"""A small SFTP server for the tests (asyncssh, pure Python), run as its own process by fixtures.py.

    python sftp_server.py DIR       (password in $LAKELOAD_SFTP_PASSWORD, key passphrase in
                                     $LAKELOAD_SFTP_KEY_PASSPHRASE, user name in $LAKELOAD_SFTP_USERNAME)

It makes in DIR: ``host_key`` (the server's ed25519 key), ``client_key`` (+ ``.pub``, ed25519, no
passphrase), ``client_key_passphrase`` (+ ``.pub``, ed25519, encrypted with the passphrase), ``root/``
(the folder it serves), then listens on 127.0.0.1 on a free port, writes ``known_hosts`` (the host key
for ``127.0.0.1`` and ``[127.0.0.1]:PORT``) and last ``ready.json`` (``{"port": PORT}``, renamed into
place so it is never seen half written). One user, who logs in with the password or either key.

The server is not chrooted: the client sees the real file system, so ``DIR/root`` (an absolute path) is
also the path to use in sftp:// URLs. It stops on SIGTERM/SIGINT and when its parent dies (fixtures.py
sets PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import os
import signal
import sys
from pathlib import Path

import asyncssh


class _Server(asyncssh.SSHServer):
    def __init__(self, username: str, password: str) -> None:
        self._username = username
        self._password = password

    def begin_auth(self, username: str) -> bool:
        return True  # always require authentication

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return username == self._username and hmac.compare_digest(password.encode(), self._password.encode())


def _write_private(key: asyncssh.SSHKey, path: Path, passphrase: str | None = None) -> None:
    # few bcrypt rounds: paramiko derives the key more than once per login, and strength is no goal here
    path.write_bytes(key.export_private_key("openssh", passphrase=passphrase, rounds=4))
    path.chmod(0o600)
    key.write_public_key(str(path) + ".pub")


async def _main(workdir: Path) -> None:
    username = os.environ.get("LAKELOAD_SFTP_USERNAME", "lakeload")
    password = os.environ["LAKELOAD_SFTP_PASSWORD"]
    passphrase = os.environ["LAKELOAD_SFTP_KEY_PASSPHRASE"]

    host_key = asyncssh.generate_private_key("ssh-ed25519")
    _write_private(host_key, workdir / "host_key")
    plain = asyncssh.generate_private_key("ssh-ed25519", comment="lakeload-test")
    _write_private(plain, workdir / "client_key")
    encrypted = asyncssh.generate_private_key("ssh-ed25519", comment="lakeload-test-passphrase")
    _write_private(encrypted, workdir / "client_key_passphrase", passphrase)
    authorized = asyncssh.import_authorized_keys(
        plain.export_public_key().decode() + encrypted.export_public_key().decode()
    )

    server = await asyncssh.listen(
        "127.0.0.1",
        0,
        server_factory=lambda: _Server(username, password),
        server_host_keys=[host_key],
        authorized_client_keys=authorized,
        sftp_factory=True,  # asyncssh.SFTPServer on the real file system, not chrooted
        allow_scp=False,
        login_timeout=30,
    )
    port = server.sockets[0].getsockname()[1]
    public = host_key.export_public_key().decode().split()
    line = f"{public[0]} {public[1]}"
    (workdir / "known_hosts").write_text(f"127.0.0.1 {line}\n[127.0.0.1]:{port} {line}\n")
    tmp = workdir / "ready.json.tmp"
    tmp.write_text(json.dumps({"port": port, "pid": os.getpid()}))
    tmp.replace(workdir / "ready.json")

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()
    await server.wait_closed()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    workdir = Path(sys.argv[1]).resolve()
    (workdir / "root").mkdir(parents=True, exist_ok=True)
    os.chdir(workdir / "root")  # relative sftp paths resolve here
    asyncio.run(_main(workdir))

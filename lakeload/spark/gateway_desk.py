"""The supervisor's desk that hands a kept JVM's py4j gateway to later runs of the same user (`attach`).

The gateway's secret never lands in a file, an argument or the environment: the supervisor got it through a pipe
(`handover`) and answers on a Unix socket of its own (`desk_path()`, mode 0600, in `~/.lakeload/spark`), to
processes of the same user only (the peer's uid is checked where the OS tells it), with the gateway's port and
secret and the id of the code the JVM's Python workers run (`code_id`). Imports nothing of pyspark: the
supervisor stays small.

>>> DeskAnswer(4242, "s3cret", "c0de")
DeskAnswer(port=4242, code='c0de')
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import struct
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import Any

from lakeload.about import PACKAGE_DIR, VERSION

DESK_FILE = os.path.join("~", ".lakeload", "spark", "engine.sock")
ASK_TIMEOUT = 5.0
MAX_SOCKET_PATH = 100  # bytes; the OS limit is 104-108


def desk_path() -> str:
    """Where the supervisor of a kept JVM hands out its gateway: `~/.lakeload/spark/engine.sock`, or, when that path
    is too long for a Unix socket (~100 bytes), a socket named after it in `<tmp>/lakeload-<uid>` (mode 0700)."""
    path = os.path.expanduser(DESK_FILE)
    if len(path.encode()) <= MAX_SOCKET_PATH:
        return path
    folder = os.path.join(tempfile.gettempdir(), f"lakeload-{os.getuid()}")
    return os.path.join(folder, f"engine-{hashlib.sha256(path.encode()).hexdigest()[:16]}.sock")


def _make_folder(folder: str) -> None:
    """Make the socket's folder; in the shared temp folder, one (0700) that is this user's and no one else's."""
    if folder.startswith(os.path.expanduser("~") + os.sep):
        os.makedirs(folder, exist_ok=True)
        return
    os.makedirs(folder, mode=0o700, exist_ok=True)
    info = os.stat(folder)
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise OSError(f"{folder} is not private to this user")


def code_id() -> str:
    """What identifies the lakeload code and Python of this process (the interpreter, the package's folder, and each
    module's name, size and modification time): a run attaches to a JVM only when its workers run the same.

    >>> len(code_id())
    16
    """
    digest = hashlib.sha256(f"{os.path.realpath(sys.executable)}\0{PACKAGE_DIR}\0{VERSION}".encode())
    for folder, dirs, files in os.walk(PACKAGE_DIR):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(folder, name))
                digest.update(f"{os.path.relpath(os.path.join(folder, name), PACKAGE_DIR)}\0{stat.st_size}\0"
                              f"{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class DeskAnswer:
    """What the desk tells a run: the gateway's port and secret, and the code its JVM's Python workers run."""

    port: int
    secret: str
    code: str

    def __repr__(self) -> str:  # the secret never shows
        return f"DeskAnswer(port={self.port}, code={self.code!r})"


class GatewayDesk:
    """The supervisor's side: a Unix socket answering each connection of this user with the gateway of the kept JVM."""

    def __init__(self, port: int, secret: str, code: str | None = None) -> None:
        self._answer = json.dumps({"port": port, "secret": secret, "code": code or code_id()}).encode()
        self._server: socket.socket | None = None
        self.path = desk_path()

    def open(self) -> str:
        """Start answering (a daemon thread); returns the socket's path."""
        _make_folder(os.path.dirname(self.path))
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.path)  # left by a supervisor that died
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            server.bind(self.path)  # created 0600: only this user may connect
        finally:
            os.umask(old)
        server.listen(16)
        self._server = server
        threading.Thread(target=self._serve, name="lakeload-gateway-desk", daemon=True).start()
        return self.path

    def _serve(self) -> None:
        while self._server is not None:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return  # closed
            with conn:
                if _same_user(conn):
                    with contextlib.suppress(OSError):
                        conn.sendall(self._answer)

    def close(self) -> None:
        """Stop answering and remove the socket."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.path)


def _same_user(conn: socket.socket) -> bool:
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:  # no peer credentials here (macOS): the socket's mode 0600 is the check
        return True
    try:
        _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    except OSError:
        return False
    return bool(uid == os.getuid())


def ask_desk(path: str, timeout: float = ASK_TIMEOUT) -> DeskAnswer | None:
    """The gateway the desk at `path` hands out, or None when none answers."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(timeout)
            client.connect(path)
            chunks = []
            while chunk := client.recv(4096):
                chunks.append(chunk)
        given = json.loads(b"".join(chunks))
        return DeskAnswer(int(given["port"]), str(given["secret"]), str(given["code"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def gateway_client(port: int, secret: str) -> Any:
    """A py4j client of the gateway at 127.0.0.1:`port`, of the kind pyspark itself connects with."""
    if os.environ.get("PYSPARK_PIN_THREAD", "true").lower() == "true":
        from py4j.clientserver import ClientServer, JavaParameters, PythonParameters

        return ClientServer(java_parameters=JavaParameters(port=port, auth_token=secret, auto_convert=True),
                            python_parameters=PythonParameters(port=0, eager_load=False))
    from py4j.java_gateway import GatewayParameters, JavaGateway

    return JavaGateway(gateway_parameters=GatewayParameters(port=port, auth_token=secret, auto_convert=True))

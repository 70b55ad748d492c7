"""A fault-injecting TCP proxy on 127.0.0.1, for tests of lakeload's retries of transient storage faults.

Put it in front of a storage server (moto S3) and point the client's endpoint at `proxy.endpoint`. Each
accepted connection is, with probability `drop_share` (a seeded RNG decides, in accept order), cut with
a TCP reset after forwarding between 1 and `max_bytes` bytes of the request or of the response (which of
the two is drawn too); the other connections are forwarded untouched. Counters say what really happened:
`connections` accepted, `resets` performed (a connection closed by either end before its budget ran out
is not counted).

>>> with FaultProxy("127.0.0.1", 9000, drop_share=0.3, seed=7) as proxy:   # doctest: +SKIP
...     client(endpoint_url=proxy.endpoint)
...     assert proxy.resets > 0

Threads only (one accept thread, one per connection); `stop()` closes every socket and joins them.
"""

from __future__ import annotations

import contextlib
import random
import select
import socket
import struct
import threading
from types import TracebackType

HOST = "127.0.0.1"
CHUNK = 65536


class FaultProxy:
    """A TCP forwarder from `endpoint` to `target_host:target_port` that resets a share of connections."""

    def __init__(
        self, target_host: str, target_port: int, drop_share: float = 0.0, seed: int = 0, max_bytes: int = 256
    ) -> None:
        self.target = (target_host, target_port)
        self.drop_share = drop_share
        self.max_bytes = max_bytes
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sockets: set[socket.socket] = set()
        self.connections = 0
        self.resets = 0
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((HOST, 0))
        self._listener.listen(64)
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    def set_drop_share(self, share: float) -> None:
        with self._lock:
            self.drop_share = share

    def start(self) -> FaultProxy:
        thread = threading.Thread(target=self._accept_loop, name="fault-proxy-accept", daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            _close(sock)
        for thread in list(self._threads):
            thread.join(timeout=5)
        self._listener.close()

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def _plan(self) -> tuple[int, int] | None:
        """(direction, bytes) of this connection's fault, or None: 0 = request, 1 = response."""
        with self._lock:
            self.connections += 1
            if self._rng.random() >= self.drop_share:
                return None
            return self._rng.randrange(2), self._rng.randint(1, self.max_bytes)

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            thread = threading.Thread(target=self._serve, args=(client,), name="fault-proxy-conn", daemon=True)
            thread.start()
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]

    def _serve(self, client: socket.socket) -> None:
        plan = self._plan()
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError:
            _reset(client)
            return
        with self._lock:
            self._sockets.update((client, upstream))
        try:
            self._pump(client, upstream, plan)
        finally:
            with self._lock:
                self._sockets.difference_update((client, upstream))
            _close(client)
            _close(upstream)

    def _pump(self, client: socket.socket, upstream: socket.socket, plan: tuple[int, int] | None) -> None:
        budget = plan[1] if plan else -1
        pairs = {client: (upstream, 0), upstream: (client, 1)}
        while not self._stop.is_set():
            try:
                readable, _, _ = select.select(list(pairs), [], [], 0.2)
            except (OSError, ValueError):
                return
            for source in readable:
                destination, direction = pairs[source]
                try:
                    data = source.recv(CHUNK)
                except OSError:
                    return
                if not data:
                    return
                if plan is not None and direction == plan[0]:
                    if len(data) >= budget:
                        _send(destination, data[:budget])
                        with self._lock:
                            self.resets += 1
                        _reset(client)
                        _reset(upstream)
                        return
                    budget -= len(data)
                if not _send(destination, data):
                    return


def _send(sock: socket.socket, data: bytes) -> bool:
    try:
        sock.sendall(data)
    except OSError:
        return False
    return True


def _reset(sock: socket.socket) -> None:
    """Close with a TCP RST (SO_LINGER 0), as a crashing server or a middlebox does."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    _close(sock)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.close()


class Blackhole:
    """A listening socket on 127.0.0.1 that accepts connections and never answers (held until `stop()`)."""

    def __init__(self) -> None:
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind((HOST, 0))
        self._listener.listen(64)
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept_loop, name="blackhole", daemon=True)

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            self._held.append(conn)

    def __enter__(self) -> Blackhole:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for conn in self._held:
            _close(conn)
        self._listener.close()


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released: connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])

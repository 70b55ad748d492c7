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

The proxy runs in its own process (spawned; it dies with the test process): delta-rs holds the GIL
while it waits for the network, so a proxy thread inside the test process would never get to answer.
Inside that process, one thread accepts and one thread per connection forwards; `stop()` ends it.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import random
import select
import socket
import struct
import sys
import threading
from multiprocessing.sharedctypes import Synchronized
from types import TracebackType
from typing import Any

HOST = "127.0.0.1"
CHUNK = 65536


class FaultProxy:
    """A TCP forwarder from `endpoint` to `target_host:target_port` that resets a share of connections."""

    def __init__(
        self, target_host: str, target_port: int, drop_share: float = 0.0, seed: int = 0, max_bytes: int = 256
    ) -> None:
        context = multiprocessing.get_context("spawn")
        self._drop_share: Synchronized[float] = context.Value("d", drop_share)
        self._connections: Synchronized[int] = context.Value("i", 0)
        self._resets: Synchronized[int] = context.Value("i", 0)
        self._port: Synchronized[int] = context.Value("i", 0)
        self._stop = context.Event()
        self._ready = context.Event()
        shared = (self._drop_share, self._connections, self._resets, self._port, self._stop, self._ready)
        self._process = context.Process(
            target=_serve_forever, args=((target_host, target_port), seed, max_bytes, shared),
            name="fault-proxy", daemon=True,
        )

    @property
    def port(self) -> int:
        return int(self._port.value)

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def connections(self) -> int:
        """Connections accepted so far."""
        return int(self._connections.value)

    @property
    def resets(self) -> int:
        """Connections cut with a reset so far (faults that really happened)."""
        return int(self._resets.value)

    def set_drop_share(self, share: float) -> None:
        self._drop_share.value = share

    def start(self) -> FaultProxy:
        self._process.start()
        if not self._ready.wait(30):
            self.stop()
            raise RuntimeError("the fault proxy did not start within 30 s")
        return self

    def stop(self) -> None:
        self._stop.set()
        self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(timeout=5)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL


def _serve_forever(target: tuple[str, int], seed: int, max_bytes: int, shared: tuple[Any, ...]) -> None:
    """The proxy process: forward until the stop event is set."""
    _die_with_parent()
    drop_share, connections, resets, port, stop, ready = shared
    server = _ProxyServer(target, seed, max_bytes, drop_share, connections, resets)
    port.value = server.port
    ready.set()
    server.run(stop)


class _ProxyServer:
    """The forwarding loop of the proxy process; counters live in shared memory (see `FaultProxy`)."""

    def __init__(self, target: tuple[str, int], seed: int, max_bytes: int, drop_share: Any, connections: Any,
                 resets: Any) -> None:
        self.target = target
        self.max_bytes = max_bytes
        self.drop_share = drop_share
        self.connections = connections
        self.resets = resets
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._sockets: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((HOST, 0))
        self._listener.listen(64)
        self._listener.settimeout(0.2)
        self.port = int(self._listener.getsockname()[1])

    def run(self, stop: Any) -> None:
        while not stop.is_set():
            try:
                client, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            thread = threading.Thread(target=self._serve, args=(client,), name="fault-proxy-conn", daemon=True)
            thread.start()
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        self._stopping.set()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            _close(sock)
        for thread in self._threads:
            thread.join(timeout=5)
        self._listener.close()

    def _plan(self) -> tuple[int, int] | None:
        """(direction, bytes) of this connection's fault, or None: 0 = request, 1 = response."""
        with self._lock:
            with self.connections.get_lock():
                self.connections.value += 1
            if self._rng.random() >= self.drop_share.value:
                return None
            return self._rng.randrange(2), self._rng.randint(1, self.max_bytes)

    def _count_reset(self) -> None:
        with self.resets.get_lock():
            self.resets.value += 1

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
        while not self._stopping.is_set():
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
                        self._count_reset()
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

    @property
    def connections(self) -> int:
        """Connections accepted so far (each attempt of a client opens at least one)."""
        return len(self._held)

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

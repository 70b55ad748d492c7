"""One process at a time per pipeline working folder: an OS file lock that goes away with its process.

Steps that change packages or state (`run()`, `extract()`, `normalize()`, `load()`, `drop()`,
`drop_pending_packages()`, and `sync_destination()` when it restores the folder) hold an exclusive lock on
`<pipelines_dir>/<pipeline_name>/.lakeload.lock` (`flock` on POSIX, `msvcrt.locking` on Windows). The kernel
drops it when the process ends, however it ends (`kill -9` included), so there is never a stale lock to
clean up. The holder writes its pid, host and start time to `.lakeload.lock.json` for the messages of others.

Another process waits for the lock (`[pipeline] lock = "wait"`, the default, at most `lock_timeout` seconds,
default 600) or fails at once (`lock = "fail"`), with `PipelineLockedError` either way when it does not get it.
Threads of one process share the lock: one thread at a time, and re-entrant, so `run()` can call `load()`.

>>> lock = PipelineLock("/tmp/pipelines/quick_start", "quick_start")
>>> with lock.hold() as first:
...     pass  # first: this call took the lock (it was not held by this thread already)
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import orjson
import pendulum

from lakeload.config.resolver import resolve
from lakeload.errors import ConfigurationError, PipelineLockedError

logger = logging.getLogger("lakeload.pipeline")

LOCK_FILE = ".lakeload.lock"
HOLDER_FILE = ".lakeload.lock.json"
WAIT, FAIL = "wait", "fail"
DEFAULT_LOCK_TIMEOUT = 600.0
POLL_SECONDS = 0.1


@dataclass(frozen=True)
class LockPolicy:
    """What a step does when another process holds the pipeline: `wait` (up to `timeout` seconds) or `fail`."""

    mode: str = WAIT
    timeout: float = DEFAULT_LOCK_TIMEOUT

    @classmethod
    def resolve(cls, pipeline_name: str) -> LockPolicy:
        """`[pipeline] lock` and `lock_timeout` (env `PIPELINE__LOCK`, `<PIPELINE>__PIPELINE__LOCK`, ...).

        >>> LockPolicy.resolve("quick_start")
        LockPolicy(mode='wait', timeout=600.0)
        """
        mode = resolve(("pipeline",), "lock", pipeline_name, hint=str)
        timeout = resolve(("pipeline",), "lock_timeout", pipeline_name, hint=float)
        value = str(mode.value).strip().lower() if mode.value is not None else WAIT
        if value not in (WAIT, FAIL):
            raise ConfigurationError(f"{mode.source} = {mode.value!r}: [pipeline] lock is 'wait' or 'fail'.")
        seconds = DEFAULT_LOCK_TIMEOUT if timeout.value is None else timeout.value
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
            raise ConfigurationError(
                f"{timeout.source} = {timeout.value!r}: [pipeline] lock_timeout is a number of seconds >= 0."
            )
        return cls(value, float(seconds))


def _try_lock(fd: int) -> bool:
    """One non-blocking attempt at the exclusive OS lock on `fd`."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):  # EWOULDBLOCK/EAGAIN, or EACCES on some file systems
        return False
    return True


def _unlock(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)


def _names_file(fd: int, path: str) -> bool:
    """False when `path` was deleted or replaced after `fd` was opened (the lock would then guard nothing)."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)


class _Wait:
    """One attempt to get the lock: its deadline, and the single log line that says it waits."""

    def __init__(self, lock: PipelineLock, policy: LockPolicy) -> None:
        self.lock, self.policy = lock, policy
        self.started = time.monotonic()
        self.announced = False

    def remaining(self) -> float:
        return self.started + self.policy.timeout - time.monotonic()

    def refuse(self, holder: dict[str, object]) -> PipelineLockedError:
        waited = time.monotonic() - self.started if self.policy.mode == WAIT else None
        return PipelineLockedError(self.lock.pipeline_name, self.lock.lock_path, holder, waited)

    def announce(self, holder: dict[str, object]) -> None:
        if not self.announced:
            self.announced = True
            logger.warning(
                "Pipeline %r is in use by %s; waiting up to %.0f s for it to finish ([pipeline] lock_timeout; "
                "lock = \"fail\" fails at once instead).",
                self.lock.pipeline_name, PipelineLockedError.describe(holder), self.policy.timeout,
            )


class _FolderLock:
    """The lock of one folder in this process: a re-entrant thread lock, and the OS lock while it is held."""

    def __init__(self) -> None:
        self.threads = threading.RLock()
        self.depth = 0
        self.fd: int | None = None


_FOLDER_LOCKS: dict[str, _FolderLock] = {}
_FOLDER_LOCKS_GUARD = threading.Lock()


def _folder_lock(folder: str) -> _FolderLock:
    key = os.path.normcase(os.path.realpath(folder))
    with _FOLDER_LOCKS_GUARD:
        return _FOLDER_LOCKS.setdefault(key, _FolderLock())


class PipelineLock:
    """The lock on the working folder `folder` of pipeline `pipeline_name` (see the module docstring)."""

    def __init__(self, folder: str, pipeline_name: str) -> None:
        self.folder = os.path.abspath(folder)
        self.pipeline_name = pipeline_name
        self.lock_path = os.path.join(self.folder, LOCK_FILE)
        self.holder_path = os.path.join(self.folder, HOLDER_FILE)

    @contextlib.contextmanager
    def hold(self, policy: LockPolicy | None = None) -> Iterator[bool]:
        """Hold the lock for the `with` block; yields True when this call took it (False: re-entered).

        Raises `PipelineLockedError` when another process (or thread) keeps it (`fail`) or keeps it too long (`wait`).
        """
        shared = _folder_lock(self.folder)
        wait = None
        if not shared.threads.acquire(blocking=False):
            wait = _Wait(self, policy or LockPolicy.resolve(self.pipeline_name))
            self._wait_for_threads(shared, wait)
        try:
            if shared.depth == 0:
                shared.fd = self._lock_file(wait or _Wait(self, policy or LockPolicy.resolve(self.pipeline_name)))
            shared.depth += 1
        except BaseException:
            shared.threads.release()
            raise
        try:
            yield shared.depth == 1
        finally:
            shared.depth -= 1
            if shared.depth == 0 and shared.fd is not None:
                self._unlock_file(shared.fd)
                shared.fd = None
            shared.threads.release()

    def holder(self) -> dict[str, object]:
        """What the holder wrote about itself (`pid`, `host`, `started_at`); empty when unknown. Untrusted JSON
        another process wrote (perhaps another version): its values are checked where they are used."""
        try:
            with open(self.holder_path, "rb") as f:
                value = orjson.loads(f.read())
        except (OSError, orjson.JSONDecodeError):
            return {}
        return value if isinstance(value, dict) else {}

    def _wait_for_threads(self, shared: _FolderLock, wait: _Wait) -> None:
        """Another thread of this process holds the lock: fail, or wait for it (the same deadline)."""
        this_process = {"pid": os.getpid(), "host": socket.gethostname(), "thread": True}
        if wait.policy.mode == FAIL:
            raise wait.refuse(this_process)
        wait.announce(this_process)
        if not shared.threads.acquire(timeout=max(wait.remaining(), 0.0)):
            raise wait.refuse(this_process)

    def _lock_file(self, wait: _Wait) -> int:
        os.makedirs(self.folder, exist_ok=True)
        while True:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            if _try_lock(fd):
                if _names_file(fd, self.lock_path):
                    self._write_holder()
                    return fd
                _unlock(fd)  # the file was deleted (drop()) while we waited: lock the new one
                os.close(fd)
                continue
            os.close(fd)
            holder = self.holder()
            if wait.policy.mode == FAIL or wait.remaining() <= 0:
                raise wait.refuse(holder)
            wait.announce(holder)
            time.sleep(min(POLL_SECONDS, max(wait.remaining(), 0.0)))

    def _write_holder(self) -> None:
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "started_at": pendulum.now("UTC").isoformat(),
                  "pipeline_name": self.pipeline_name}
        tmp = f"{self.holder_path}.tmp"
        with open(tmp, "wb") as f:
            f.write(orjson.dumps(holder))
        os.replace(tmp, self.holder_path)

    def _unlock_file(self, fd: int) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.holder_path)
        try:
            _unlock(fd)
        finally:
            os.close(fd)


F = TypeVar("F", bound=Callable[..., Any])


def holds_lock(method: F) -> F:
    """Run a pipeline method inside `self._holding_lock()` (the working folder's lock, re-entrant).

    >>> from lakeload.runtime.pipeline import Pipeline
    >>> class P(Pipeline):
    ...     @holds_lock
    ...     def load(self): ...
    """

    @functools.wraps(method)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._holding_lock():
            return method(self, *args, **kwargs)

    return cast(F, locked)

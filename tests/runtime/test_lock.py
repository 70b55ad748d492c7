"""The lock on a pipeline's working folder: another process fails or waits, a killed holder frees it, threads
of one process take turns, and the settings come from the resolver."""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lakeload.errors import ConfigurationError, LakeloadError, PipelineLockedError
from lakeload.runtime import lock as lock_module
from lakeload.runtime.lock import FAIL, HOLDER_FILE, LOCK_FILE, POLL_SECONDS, WAIT, LockPolicy, PipelineLock

CHILD = Path(__file__).with_name("lock_child.py")


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Another process that holds the lock of pipeline `p` in `tmp_path / "p"` until it is killed."""
    ready = tmp_path / "ready"
    child = subprocess.Popen([sys.executable, str(CHILD), str(tmp_path / "p"), "p", str(ready)],
                             stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert child.poll() is None and time.monotonic() < deadline, child.stderr.read() if child.stderr else ""
        time.sleep(0.05)
    yield child
    if child.poll() is None:
        child.kill()
        child.wait()


@pytest.fixture
def attempts(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every attempt this process makes at the OS lock and whether it got it (the real `_try_lock`, counted):
    what the tests assert instead of seconds on a shared machine."""
    made: list[bool] = []
    real = lock_module._try_lock

    def counted(fd: int) -> bool:
        made.append(real(fd))
        return made[-1]

    monkeypatch.setattr(lock_module, "_try_lock", counted)
    return made


def test_policy_comes_from_the_resolver(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert LockPolicy.resolve("p") == LockPolicy(WAIT, 600.0)
    monkeypatch.setenv("PIPELINE__LOCK", "FAIL")
    monkeypatch.setenv("P__PIPELINE__LOCK_TIMEOUT", "2.5")
    assert LockPolicy.resolve("p") == LockPolicy(FAIL, 2.5)
    assert LockPolicy.resolve("other") == LockPolicy(FAIL, 600.0)
    monkeypatch.delenv("PIPELINE__LOCK")
    (Path(".lakeload")).mkdir()
    Path(".lakeload/config.toml").write_text('[pipeline]\nlock = "wait"\nlock_timeout = 30\n[q.pipeline]\nlock = "fail"\n')
    assert LockPolicy.resolve("other") == LockPolicy(WAIT, 30.0)
    assert LockPolicy.resolve("q") == LockPolicy(FAIL, 30.0)
    monkeypatch.setenv("PIPELINE__LOCK", "sometimes")
    with pytest.raises(ConfigurationError, match=r"PIPELINE__LOCK = 'sometimes': \[pipeline\] lock is 'wait' or 'fail'"):
        LockPolicy.resolve("other")
    monkeypatch.setenv("PIPELINE__LOCK", "wait")
    monkeypatch.setenv("PIPELINE__LOCK_TIMEOUT", "-1")
    with pytest.raises(ConfigurationError, match="lock_timeout is a number of seconds >= 0"):
        LockPolicy.resolve("other")


def test_another_process_holds_it_fail_wait_and_kill(
    holder: subprocess.Popen[bytes], tmp_path: Path, caplog: pytest.LogCaptureFixture, attempts: list[bool]
) -> None:
    lock = PipelineLock(str(tmp_path / "p"), "p")
    assert lock.holder()["pid"] == holder.pid
    with pytest.raises(PipelineLockedError) as failed, lock.hold(LockPolicy(FAIL)):
        pass
    error = failed.value
    assert isinstance(error, LakeloadError) and error.holder_pid == holder.pid and error.waited is None
    message = str(error)
    assert f"Pipeline 'p' is in use by another process (pid {holder.pid} on host " in message
    assert str(tmp_path / "p" / LOCK_FILE) in message and 'lock = "wait"' in message
    assert attempts == [False]  # `fail`: one attempt, no wait

    with caplog.at_level(logging.WARNING, "lakeload.pipeline"), pytest.raises(PipelineLockedError) as timed_out, \
            lock.hold(LockPolicy(WAIT, 0.6)):
        pass
    waiting_attempts = attempts[1:]
    # `wait`: polled every POLL_SECONDS until its timeout, then stopped (sleeps never end early: at most one more)
    assert 2 <= len(waiting_attempts) <= 0.6 / POLL_SECONDS + 2 and not any(waiting_attempts)
    assert timed_out.value.waited is not None and timed_out.value.waited >= 0.6
    assert "still in use by another process" in str(timed_out.value) and "lock_timeout" in str(timed_out.value)
    waiting = [r.getMessage() for r in caplog.records if "waiting up to" in r.getMessage()]
    assert len(waiting) == 1 and f"pid {holder.pid}" in waiting[0] and "waiting up to 1 s" in waiting[0]

    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=30)
    with lock.hold(LockPolicy(FAIL)) as first:  # the kernel dropped the dead holder's lock
        assert first and lock.holder()["pid"] == os.getpid()
    assert not (tmp_path / "p" / HOLDER_FILE).exists()


def test_waiting_process_gets_it_when_the_holder_ends(
    holder: subprocess.Popen[bytes], tmp_path: Path, attempts: list[bool]
) -> None:
    killed = threading.Event()

    def kill() -> None:
        killed.set()  # before the kill, so that it is set whenever the lock can be free
        holder.kill()

    timer = threading.Timer(0.5, kill)
    timer.start()
    with PipelineLock(str(tmp_path / "p"), "p").hold(LockPolicy(WAIT, 600)) as first:
        assert first and killed.is_set()  # got it only once the holder was killed
    timer.join()
    assert len(attempts) >= 2 and attempts[-1] and not any(attempts[:-1])  # refused while held, then taken


def test_threads_of_one_process_take_turns(tmp_path: Path) -> None:
    lock = PipelineLock(str(tmp_path / "p"), "p")
    other = PipelineLock(str(tmp_path / "p"), "p")  # another pipeline object on the same folder shares it
    order: list[str] = []
    refused: list[PipelineLockedError] = []

    def try_once() -> None:
        try:
            with other.hold(LockPolicy(FAIL)):
                order.append("never")
        except PipelineLockedError as exc:
            refused.append(exc)

    def wait_for_it() -> None:
        with other.hold(LockPolicy(WAIT, 30)) as first:
            order.append(f"thread first={first}")

    with lock.hold(LockPolicy(FAIL)) as first:
        with lock.hold(LockPolicy(FAIL)) as again:  # re-entrant: run() calls load()
            assert first and not again
        failing = threading.Thread(target=try_once)
        failing.start()
        failing.join(timeout=30)
        assert len(refused) == 1 and f"another thread of this process (pid {os.getpid()})" in str(refused[0])
        waiting = threading.Thread(target=wait_for_it)
        waiting.start()
        time.sleep(0.3)
        order.append("main")
    waiting.join(timeout=30)
    assert order == ["main", "thread first=True"] and not waiting.is_alive()


def test_lock_file_deleted_while_held_is_not_shared(tmp_path: Path) -> None:
    """A holder deletes the folder (drop()) and ends: the waiter holds the lock of the file at the path, not of a deleted one."""
    folder = tmp_path / "p"
    folder.mkdir()
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # an OS lock on its own open file, as another process holds it
    exclusive: list[bool] = []

    def wait_for_it() -> None:
        with PipelineLock(str(folder), "p").hold(LockPolicy(WAIT, 30)):
            probe = os.open(folder / LOCK_FILE, os.O_RDWR)
            try:  # a third party opening the lock file now must find it locked
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
                exclusive.append(False)
            except BlockingIOError:
                exclusive.append(True)
            finally:
                os.close(probe)

    waiter = threading.Thread(target=wait_for_it)
    waiter.start()
    time.sleep(0.3)
    assert not exclusive
    os.remove(folder / LOCK_FILE)
    os.close(fd)  # the holder ends
    waiter.join(timeout=30)
    assert exclusive == [True]

"""dlt's `signals` (`from dlt.common.runtime import signals`) for user code: a `sleep` that wakes when SIGINT or
SIGTERM arrives, and `raise_if_signalled()` to stop cleanly at a point of the code's choosing.

Inside `intercepted_signals()` the first SIGINT or SIGTERM is recorded rather than acted on: sleeping threads
wake, `was_signal_received()` is true and `raise_if_signalled()` raises `SignalReceivedException` (a
`KeyboardInterrupt`); a second one of the same signal goes to the handler that was there before (Ctrl-C twice
stops at once). Outside it, signals act as usual. (dlt's pipeline steps run inside it; lakeload's do not, so in a
lakeload pipeline Ctrl-C stops the run at once unless the script intercepts signals itself.)

>>> with intercepted_signals():
...     set_received_signal(15)
...     was_signal_received()
True
>>> was_signal_received()
False
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Any

__all__ = [
    "SignalReceivedException",
    "exception_for_signal",
    "exit_event",
    "intercepted_signals",
    "raise_if_signalled",
    "set_received_signal",
    "sleep",
    "wake_all",
    "was_signal_received",
]

_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None
_INTERCEPTED = (signal.SIGINT, signal.SIGTERM)

exit_event = threading.Event()
"""Set when an intercepted signal arrives (and by `wake_all`): what `sleep` waits on."""

_received: list[int] = []  # the signal recorded (one at most)
_counts: dict[int, int] = {}
_previous: dict[int, _Handler] = {}


class SignalReceivedException(KeyboardInterrupt):
    """A signal was received inside `intercepted_signals()` (a `BaseException`: `except Exception` lets it by)."""

    def __init__(self, signal_code: int) -> None:
        self.signal_code = signal_code
        super().__init__(f"Received `signal_code={signal_code}`")


def set_received_signal(sig: int) -> None:
    """Record `sig` as received."""
    _received[:] = [sig]


def was_signal_received() -> bool:
    """Whether a signal was recorded."""
    return bool(_received and _received[0])


def exception_for_signal() -> BaseException:
    """The `SignalReceivedException` for the recorded signal (RuntimeError when none was)."""
    if not was_signal_received():
        raise RuntimeError("no signal received")
    return SignalReceivedException(_received[0])


def raise_if_signalled() -> None:
    """Raise `SignalReceivedException` if a signal was recorded."""
    if was_signal_received():
        raise exception_for_signal()


def sleep(sleep_seconds: float) -> None:
    """Sleep `sleep_seconds`, waking early (without raising) when a signal arrives or `wake_all` is called."""
    exit_event.clear()
    exit_event.wait(sleep_seconds)


def wake_all() -> None:
    """Wake every thread in `sleep`."""
    exit_event.set()


def _receive(sig: int, frame: FrameType | None) -> None:
    _counts[sig] = _counts.get(sig, 0) + 1
    if _counts[sig] == 1:
        set_received_signal(sig)
        if sys.stdin is not None and sys.stdin.isatty():
            note = f"{'CTRL-C' if sig == signal.SIGINT else f'Signal {sig}'} received: stopping gracefully; send it again to stop at once.\n"
            with suppress(OSError, ValueError):
                os.write(sys.stderr.fileno(), note.encode())
    else:
        previous = _previous.get(sig, signal.SIG_DFL)
        if callable(previous):
            previous(sig, frame)
        elif previous == signal.SIG_DFL:
            signal.signal(sig, signal.SIG_DFL)
            signal.raise_signal(sig)
    exit_event.set()


@contextmanager
def intercepted_signals() -> Iterator[None]:
    """Record SIGINT and SIGTERM while the block runs (see the module); nested use and use off the main thread
    change nothing. Leaving the block restores the handlers and forgets the recorded signal."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is _receive:
        yield
        return
    _previous.update({sig: signal.getsignal(sig) for sig in _INTERCEPTED})
    try:
        for sig in _INTERCEPTED:
            signal.signal(sig, _receive)
        yield
    finally:
        for sig in _INTERCEPTED:
            signal.signal(sig, _previous[sig] if _previous[sig] is not None else signal.SIG_DFL)
        _received.clear()
        _counts.clear()
        _previous.clear()

"""Driver side: a Delta commit retried through transient storage faults, never committed twice.

delta-rs reads and writes through Rust's object_store, which retries its requests itself (bounded by
lakeload's retry policy, see `storage.retry_storage_options`), except the conditional PUT of a commit
file: a connection reset there fails the commit at once. delta-rs reports every object-store failure as
a bare `OSError` (a reset and a 403 look alike), so lakeload retries a commit that failed with one,
within the policy's attempts. Before each retry, and after any failure, the table's log is read again:
when it already holds this load's application transaction, the commit landed and only its answer was
lost, so it counts as done (never committed twice).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from lakeload.kernel.filesystem.retry import call_with_retry

if TYPE_CHECKING:
    from lakeload.delta.marks import LoadMark
    from lakeload.kernel.filesystem.retry import RetryPolicy

logger = logging.getLogger("lakeload.load")
T = TypeVar("T")


class RetriedTable(Protocol):
    """What a retried read or commit needs of its table (`commit.DeltaTarget`)."""

    name: str
    uri: str
    storage_options: dict[str, str]
    retry: RetryPolicy


class DeltaStorageFault(ConnectionError):
    """A delta-rs object-store failure during a commit (classified transient: retried within the policy)."""


def read_with_retry(target: RetriedTable, read: Callable[[], T]) -> T:
    """`read()` (opening the table's log) under `target.retry`: object_store does not retry a request
    whose connection broke while it was sent, so a bare `OSError` of delta-rs is retried here."""

    def once() -> T:
        try:
            return read()
        except Exception as exc:
            if type(exc) is OSError:
                raise DeltaStorageFault(f"delta-rs could not read the table's storage ({target.uri})") from exc
            raise

    return call_with_retry(target.retry, once, f"open Delta table '{target.name}'")


def _landed(target: RetriedTable, mark: LoadMark) -> bool:
    """Whether the table's log holds `mark`, read afresh; False when it cannot be read."""
    from deltalake import DeltaTable

    try:
        return mark.found_in(DeltaTable(target.uri, storage_options=target.storage_options))
    except Exception:  # the table is not there (yet) or not readable now: not landed as far as we know
        return False


def commit_with_retry(target: RetriedTable, attempt: Callable[[], None], mark: LoadMark | None) -> None:
    """Run one commit `attempt` under `target.retry`; a commit whose answer was lost counts as done.

    >>> from types import SimpleNamespace
    >>> from lakeload.delta.marks import LoadMark
    >>> from lakeload.kernel.filesystem.retry import RetryPolicy
    >>> target = SimpleNamespace(name="users", uri="/data/lake/users", storage_options={},  # a DeltaTarget
    ...                          retry=RetryPolicy(attempts=3, initial_backoff=0.01))
    >>> answers = [OSError("connection reset by peer"), None]      # the first commit fails, the second succeeds
    >>> def attempt():
    ...     answer = answers.pop(0)
    ...     if answer is not None:
    ...         raise answer
    >>> commit_with_retry(target, attempt, LoadMark("quick_start", "1795290972.5"))
    >>> answers     # both attempts ran
    []
    """

    def once() -> None:
        try:
            attempt()
        except Exception as exc:
            if mark is not None and _landed(target, mark):
                logger.info("Delta table '%s': the commit of load %s landed although delta-rs reported %s",
                            target.name, mark.load_id, type(exc).__name__)
                return
            if type(exc) is OSError:
                raise DeltaStorageFault(f"delta-rs could not reach the table's storage ({target.uri})") from exc
            raise

    call_with_retry(target.retry, once, f"commit to Delta table '{target.name}'")

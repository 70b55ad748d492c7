"""Executor-safe: retrying bucket operations through transient storage faults, on any process.

One `RetryPolicy` (resolved on the driver, shipped to executors inside the task payloads) bounds every
retry of a bucket operation lakeload makes while loading. Each operation is a whole-file step (a PUT of
a file whose name was fixed at normalize time, a read, a listing), so running it again is safe.

Faults are told apart by exception *type* (and HTTP status / error code where the type carries one),
never by message text; the `__cause__`/`__context__` chain is followed, because s3fs wraps botocore's
`ClientError` in `OSError`s:
- `TERMINAL`: retrying cannot help (403/401, 404 `NoSuchBucket`, bad requests, missing credentials,
  local file errors, anything unknown); raised at once.
- `TRANSIENT`: the store answered badly or broke the connection (5xx, 429/throttling, 408, reset or
  closed connection, truncated body); retried up to `attempts` times with exponential backoff.
- `NO_ANSWER`: nothing answered (connection refused, DNS failure, connect or read time-out); retried
  only while a further attempt could still time out within `unreachable_timeout` seconds of the
  operation's start, so that a wrong endpoint fails fast.

The client libraries' own retries are switched off where lakeload retries (`bounded_options`), so the
attempts never multiply. Imports only the standard library and `kernel.contracts` (client libraries are looked up in
`sys.modules`: an exception of a library that was never imported cannot occur).

>>> classify(ConnectionResetError()), classify(ConnectionRefusedError()), classify(PermissionError())
('transient', 'no_answer', 'terminal')
"""

from __future__ import annotations

import logging
import random
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from lakeload.kernel.contracts import TFsOptions

logger = logging.getLogger("lakeload.storage")
T = TypeVar("T")

TERMINAL = "terminal"
TRANSIENT = "transient"
NO_ANSWER = "no_answer"
# HTTP statuses worth another attempt: time-out, throttling, server errors
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
# botocore error codes of throttling and server-side trouble (S3 and S3-compatible stores)
TRANSIENT_CODES = frozenset({
    "Throttling", "ThrottlingException", "ThrottledException", "SlowDown", "RequestLimitExceeded",
    "TooManyRequestsException", "RequestThrottled", "RequestThrottledException", "BandwidthLimitExceeded",
    "RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete", "InternalError", "InternalFailure",
    "ServiceUnavailable", "ServiceUnavailableException", "503", "500", "502", "504",
})
_TERMINAL_OS_ERRORS = (PermissionError, FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError)


@dataclass(frozen=True)
class RetryPolicy:
    """How bucket operations are retried and how long one attempt may wait (seconds).

    `attempts` counts the first try (1 = no retry). The wait before retry n is
    `min(max_backoff, initial_backoff * 2**(n-1))`, shortened by up to `jitter` (a fraction) at random.

    >>> RetryPolicy(attempts=3, initial_backoff=1.0, jitter=0.0).backoff(2)
    2.0
    """

    attempts: int = 4
    initial_backoff: float = 0.5
    max_backoff: float = 5.0
    jitter: float = 0.5
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    unreachable_timeout: float = 15.0

    def backoff(self, retry: int, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number `retry` (1-based)."""
        base = min(self.max_backoff, self.initial_backoff * 2.0 ** (retry - 1))
        return base * (1.0 - self.jitter * (rng or random).random())


class StorageRetriesExhausted(OSError):
    """A transient storage fault outlasted every attempt of the retry policy (the last fault is the cause)."""


def _module(name: str) -> Any:
    return sys.modules.get(name)


def _status_kind(status: Any) -> str:
    return TRANSIENT if isinstance(status, int) and status in TRANSIENT_STATUSES else TERMINAL


def _botocore(exc: BaseException) -> str | None:
    errors = _module("botocore.exceptions")
    if errors is None:
        return None
    if isinstance(exc, errors.ClientError):
        response = getattr(exc, "response", None) or {}
        code = str((response.get("Error") or {}).get("Code", ""))
        status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
        return TRANSIENT if code in TRANSIENT_CODES else _status_kind(status)
    if isinstance(exc, (errors.EndpointConnectionError, errors.ConnectTimeoutError, errors.ReadTimeoutError)):
        return NO_ANSWER
    if isinstance(exc, (errors.HTTPClientError, errors.IncompleteReadError)):
        return TRANSIENT  # ConnectionClosedError, ResponseStreamingError: the connection broke mid-way
    if isinstance(exc, errors.ConnectionError):
        return NO_ANSWER  # proxy and TLS failures while connecting
    if isinstance(exc, errors.BotoCoreError):
        return TERMINAL  # NoCredentialsError, ParamValidationError, ...
    return None


def _aiohttp(exc: BaseException) -> str | None:
    aiohttp = _module("aiohttp")
    if aiohttp is None:
        return None
    if isinstance(exc, (aiohttp.ClientConnectorError, aiohttp.ServerTimeoutError)):
        return NO_ANSWER
    if isinstance(exc, (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)):
        return TRANSIENT
    if isinstance(exc, aiohttp.ClientResponseError):
        return _status_kind(exc.status)
    return None


def _azure(exc: BaseException) -> str | None:
    errors = _module("azure.core.exceptions")
    if errors is None:
        return None
    if isinstance(exc, (errors.ServiceRequestError, errors.ServiceResponseTimeoutError)):
        return NO_ANSWER  # the request could not be sent (connect failed), or no answer in time
    if isinstance(exc, errors.ServiceResponseError):
        return TRANSIENT
    if isinstance(exc, errors.IncompleteReadError):
        return TRANSIENT
    if isinstance(exc, errors.HttpResponseError):
        return _status_kind(getattr(exc, "status_code", None))
    if isinstance(exc, errors.AzureError):
        return TERMINAL
    return None


def _builtin(exc: BaseException) -> str | None:
    if isinstance(exc, ConnectionRefusedError):
        return NO_ANSWER
    if isinstance(exc, (ConnectionError, EOFError)):
        return TRANSIENT  # reset, aborted, broken pipe, remote closed (http.client.RemoteDisconnected)
    if isinstance(exc, TimeoutError):
        return NO_ANSWER  # socket.timeout, asyncio and fsspec time-outs
    if isinstance(exc, socket.gaierror):
        return NO_ANSWER  # name resolution failed
    if isinstance(exc, _TERMINAL_OS_ERRORS):
        return TERMINAL
    http_client = _module("http.client")
    if http_client is not None and isinstance(exc, http_client.IncompleteRead):
        return TRANSIENT
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    node: BaseException | None = exc
    while node is not None and node not in chain:
        chain.append(node)
        node = node.__cause__ or node.__context__
    return chain


def classify(exc: BaseException) -> str:
    """`TERMINAL`, `TRANSIENT` or `NO_ANSWER` for a failed bucket operation, by exception type.

    The outermost exception that a rule recognizes decides; generic wrappers (`OSError(EIO)` of s3fs)
    defer to their cause, and "no answer" yields to a broken connection further down the chain.
    Unknown exceptions are terminal.
    """
    if isinstance(exc, StorageRetriesExhausted):
        return classify(exc.__cause__) if exc.__cause__ is not None else TRANSIENT
    kinds = [kind for kind in map(_node_kind, _chain(exc)) if kind is not None]
    if not kinds:
        return TERMINAL
    if kinds[0] == NO_ANSWER and TRANSIENT in kinds:
        return TRANSIENT  # botocore reports a reset mid-request as EndpointConnectionError: its cause tells
    return kinds[0]


def _node_kind(node: BaseException) -> str | None:
    for rule in (_botocore, _azure, _aiohttp, _builtin):
        kind = rule(node)
        if kind is not None:
            return kind
    return None


def call_with_retry(policy: RetryPolicy, operation: Callable[[], T], what: str) -> T:
    """`operation()`, retried through transient faults as `policy` says.

    A terminal fault is raised as it is, at once. A transient fault that is still there after the last
    allowed attempt raises `StorageRetriesExhausted` naming `what`, the attempts and the time spent, with
    the last fault as its cause.

    >>> call_with_retry(RetryPolicy(), lambda: 42, "put s3://bucket/key")
    42
    """
    started = time.monotonic()
    rng = random.Random()
    attempt = 1
    while True:
        try:
            return operation()
        except Exception as exc:
            kind = classify(exc)
            if kind == TERMINAL:
                raise
            delay = policy.backoff(attempt, rng)
            elapsed = time.monotonic() - started
            worst = max(policy.connect_timeout, policy.read_timeout)
            if attempt >= policy.attempts or (kind == NO_ANSWER and elapsed + delay + worst > policy.unreachable_timeout):
                reason = "no answer" if kind == NO_ANSWER else "transient faults"
                raise StorageRetriesExhausted(
                    f"{what}: {reason} through {attempt} attempt(s) in {elapsed:.1f} s; last: {type(exc).__name__}: {exc}"
                ) from exc
            logger.info("%s: %s (%s), attempt %d of %d; retrying in %.2f s",
                        what, type(exc).__name__, kind, attempt, policy.attempts, delay)
            time.sleep(delay)
            attempt += 1


def bounded_options(protocol: str, options: TFsOptions, policy: RetryPolicy) -> TFsOptions:
    """fsspec constructor arguments with the policy's time-outs and the library's own retries off
    (lakeload retries the whole operation). Options the user set stay as they are.

    >>> bounded_options("s3", {}, RetryPolicy())["config_kwargs"]["retries"]
    {'total_max_attempts': 1}
    """
    bounded = dict(options)
    if protocol in ("s3", "s3a"):
        config = dict(bounded.get("config_kwargs") or {})
        config.setdefault("connect_timeout", policy.connect_timeout)
        config.setdefault("read_timeout", policy.read_timeout)
        config.setdefault("retries", {"total_max_attempts": 1})
        bounded["config_kwargs"] = config
    elif protocol in ("az", "abfs", "abfss", "adl", "azure"):
        bounded.setdefault("connection_timeout", policy.connect_timeout)
        bounded.setdefault("read_timeout", policy.read_timeout)
    return bounded


def bound_client(fs: Any, policy: RetryPolicy) -> None:
    """Switch off the retries a client library runs inside one call, on an opened filesystem.

    s3fs retries some errors itself (`retries`, 5 by default) on top of botocore; adlfs gives no way to
    pass azure-storage-blob's retry settings (3 retries, 15 s initial backoff: ~85 s on a wrong endpoint)
    or its connection time-outs for every call, so they are set on the opened client.
    """
    if type(fs).__module__.startswith("s3fs"):
        fs.retries = 1
        return
    config = getattr(getattr(fs, "service_client", None), "_config", None)
    retry = getattr(config, "retry_policy", None)
    if retry is not None and hasattr(retry, "total_retries"):
        for name in ("total_retries", "connect_retries", "read_retries", "status_retries"):
            setattr(retry, name, 0)
    connection = getattr(getattr(config, "transport", None), "connection_config", None)
    if connection is not None:
        connection.timeout = getattr(fs, "_timeout_kwargs", {}).get("connection_timeout", policy.connect_timeout)
        connection.read_timeout = getattr(fs, "_timeout_kwargs", {}).get("read_timeout", policy.read_timeout)

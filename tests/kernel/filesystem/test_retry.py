"""The retry policy of bucket operations: classification by exception type, bounded attempts, configuration."""

from __future__ import annotations

import errno
import socket
import time

import aiohttp
import pytest
from azure.core.exceptions import HttpResponseError, ServiceRequestError, ServiceResponseError
from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError, ReadTimeoutError
from servers.fault_proxy import closed_port

from lakeload.delta.storage import retry_storage_options
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration, resolve_configuration
from lakeload.errors import ConfigurationError
from lakeload.kernel.filesystem.retry import (
    NO_ANSWER,
    TERMINAL,
    TRANSIENT,
    RetryPolicy,
    StorageRetriesExhausted,
    bounded_options,
    call_with_retry,
    classify,
)

FAST = RetryPolicy(attempts=3, initial_backoff=0.01, max_backoff=0.02)


def client_error(code: str, status: int) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}}, "PutObject")


def wrapped(cause: BaseException) -> OSError:
    """What s3fs raises for a ClientError it has no Python exception for: OSError(EIO) caused by it."""
    error = OSError(errno.EIO, "wrapped")
    error.__cause__ = cause
    return error


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (client_error("SlowDown", 503), TRANSIENT),
        (client_error("InternalError", 500), TRANSIENT),
        (client_error("ThrottlingException", 400), TRANSIENT),
        (client_error("AccessDenied", 403), TERMINAL),
        (client_error("NoSuchBucket", 404), TERMINAL),
        (client_error("InvalidAccessKeyId", 403), TERMINAL),
        (wrapped(client_error("ServiceUnavailable", 503)), TRANSIENT),
        (PermissionError("403"), TERMINAL),
        (FileNotFoundError("NoSuchBucket"), TERMINAL),
        (ConnectionResetError(), TRANSIENT),
        (ConnectionRefusedError(), NO_ANSWER),
        (TimeoutError(), NO_ANSWER),
        (socket.gaierror(), NO_ANSWER),
        (EndpointConnectionError(endpoint_url="http://127.0.0.1:1"), NO_ANSWER),
        (ConnectionClosedError(endpoint_url="http://127.0.0.1:1"), TRANSIENT),
        (ReadTimeoutError(endpoint_url="http://127.0.0.1:1"), NO_ANSWER),
        (aiohttp.ServerDisconnectedError(), TRANSIENT),
        (aiohttp.ClientPayloadError("truncated"), TRANSIENT),
        (HttpResponseError(message="busy", response=None), TERMINAL),  # no status: nothing says it will pass
        (ServiceRequestError("connect failed"), NO_ANSWER),
        (ServiceResponseError("reset"), TRANSIENT),
        (ValueError("bad"), TERMINAL),
        (OSError(errno.ENOSPC, "disk full"), TERMINAL),
    ],
)
def test_classify_by_type_and_code(exc: BaseException, kind: str) -> None:
    assert classify(exc) == kind


def test_reset_reported_as_endpoint_error_is_transient() -> None:
    """aiobotocore reports a reset mid-request as EndpointConnectionError; the chain shows the reset."""
    error = EndpointConnectionError(endpoint_url="http://127.0.0.1:1")
    error.__cause__ = ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")
    assert classify(error) == TRANSIENT


def test_azure_status_codes() -> None:
    class Response:
        reason = "r"
        headers: dict[str, str] = {}

        def __init__(self, status: int) -> None:
            self.status_code = status

        def text(self) -> str:
            return ""

    assert classify(HttpResponseError(response=Response(503))) == TRANSIENT
    assert classify(HttpResponseError(response=Response(429))) == TRANSIENT
    assert classify(HttpResponseError(response=Response(403))) == TERMINAL


def test_transient_faults_are_retried_until_success() -> None:
    calls: list[float] = []

    def flaky() -> str:
        calls.append(time.monotonic())
        if len(calls) < 3:
            raise ConnectionResetError(errno.ECONNRESET, "reset")
        return "done"

    assert call_with_retry(FAST, flaky, "put x") == "done"
    assert len(calls) == 3


def test_persistent_transient_fault_fails_after_the_attempts() -> None:
    calls = []

    def broken() -> None:
        calls.append(1)
        raise wrapped(client_error("SlowDown", 503))

    with pytest.raises(StorageRetriesExhausted, match="put x: transient faults through 3 attempt") as info:
        call_with_retry(FAST, broken, "put x")
    assert len(calls) == 3
    assert classify(info.value) == TRANSIENT


def test_terminal_fault_is_raised_at_once() -> None:
    calls = []

    def refused() -> None:
        calls.append(1)
        raise PermissionError("Access Denied")

    with pytest.raises(PermissionError):
        call_with_retry(RetryPolicy(attempts=5, initial_backoff=10), refused, "put x")
    assert calls == [1]


def test_no_answer_stops_within_unreachable_timeout() -> None:
    """A real refused connection: retried only while another attempt could time out within the bound.

    Counted, not timed: every wait is 0.2 s and at least that, so after 7 waits (>= 1.4 s) a further attempt
    (0.2 s wait + 0.5 s time-out) could end past 2.0 s: at most 8 attempts of the 50 allowed."""
    port = closed_port()
    policy = RetryPolicy(attempts=50, initial_backoff=0.2, max_backoff=0.2, jitter=0, connect_timeout=0.5,
                         read_timeout=0.5, unreachable_timeout=2.0)
    calls = []

    def connect() -> None:
        calls.append(1)
        socket.create_connection(("127.0.0.1", port), timeout=1).close()

    with pytest.raises(StorageRetriesExhausted, match="no answer") as info:
        call_with_retry(policy, connect, "connect")
    assert 2 <= len(calls) <= 8
    assert f"through {len(calls)} attempt(s)" in str(info.value)


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(initial_backoff=0.5, max_backoff=3.0, jitter=0.0)
    assert [policy.backoff(n) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    jittered = RetryPolicy(initial_backoff=1.0, jitter=0.5)
    assert all(0.5 <= jittered.backoff(1) <= 1.0 for _ in range(50))


def test_library_retries_off_and_timeouts_set_unless_the_user_set_them() -> None:
    options = bounded_options("s3", {"config_kwargs": {"read_timeout": 99}}, RetryPolicy(connect_timeout=2))
    assert options["config_kwargs"] == {"read_timeout": 99, "connect_timeout": 2, "retries": {"total_max_attempts": 1}}
    azure = bounded_options("az", {"connection_string": "x"}, RetryPolicy(connect_timeout=2, read_timeout=7))
    assert (azure["connection_timeout"], azure["read_timeout"]) == (2, 7)
    assert bounded_options("file", {"auto_mkdir": True}, RetryPolicy()) == {"auto_mkdir": True}


def test_object_store_options_follow_the_policy_and_yield_to_the_user() -> None:
    policy = RetryPolicy(attempts=3, initial_backoff=0.25, connect_timeout=2, unreachable_timeout=12)
    options = retry_storage_options({"timeout": "120s"}, policy, "s3")
    assert options["max_retries"] == "2"
    assert options["retry_timeout"] == "12000ms"
    assert options["backoff_config.init_backoff"] == "250ms"
    assert options["connect_timeout"] == "2000ms"
    assert options["timeout"] == "120s"
    assert retry_storage_options({}, policy, "file") == {}


def test_policy_resolved_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__FILESYSTEM__RETRY_ATTEMPTS", "7")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CONNECT_TIMEOUT", "2.5")
    monkeypatch.setenv("MY_PIPE__DESTINATION__FILESYSTEM__UNREACHABLE_TIMEOUT", "30")
    config = resolve_configuration({"bucket_url": "s3://b"}, "filesystem", "my_pipe")
    assert config.retry == RetryPolicy(attempts=7, connect_timeout=2.5, unreachable_timeout=30.0)
    assert FilesystemConfiguration("s3://b").retry == RetryPolicy()


def test_policy_resolved_from_toml() -> None:
    from pathlib import Path

    Path(".lakeload").mkdir()
    Path(".lakeload/config.toml").write_text("[destination.filesystem]\nretry_max_backoff = 2\nretry_jitter = 0\n")
    config = resolve_configuration({"bucket_url": "s3://b"}, "filesystem", None)
    assert (config.retry.max_backoff, config.retry.jitter) == (2.0, 0.0)


@pytest.mark.parametrize(("name", "value"), [("RETRY_ATTEMPTS", "0"), ("RETRY_JITTER", "1.5"), ("READ_TIMEOUT", "-1"),
                                             ("RETRY_ATTEMPTS", "2.5")])
def test_invalid_policy_values(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(f"DESTINATION__FILESYSTEM__{name}", value)
    with pytest.raises(ConfigurationError, match="DESTINATION__FILESYSTEM__" + name):
        resolve_configuration({"bucket_url": "s3://b"}, "filesystem", None)

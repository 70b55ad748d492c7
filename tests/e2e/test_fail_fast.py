"""A wrong endpoint fails fast: a closed port, or a socket that accepts and never answers, for s3:// and
az:// buckets, fails the run with a clear lakeload error after few attempts, and prints no secret. (Before the
bounded time-outs and retries, an unreachable Azure endpoint took ~85 s: the client library's own retries.)

"Fast" is asserted by counting, not by seconds (a bound in seconds flakes on a shared machine): the attempts
lakeload's retry policy made (named in the error) and the connections the endpoint saw (one per attempt: no
client library retries inside an attempt). With the default policy (read time-out 10 s, unreachable time-out
15 s) an endpoint that never answers gets one attempt, a refused one at most `attempts` (4).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from servers.fault_proxy import Blackhole, closed_port
from servers.fixtures import AZURITE_ACCOUNT, AZURITE_KEY

import lakeload
from lakeload.errors import StorageUnavailableError

S3_SECRET = "s3-secret-that-must-not-show"


@contextlib.contextmanager
def endpoint(kind: str) -> Iterator[tuple[int, Blackhole | None]]:
    if kind == "closed":
        yield closed_port(), None
        return
    with Blackhole() as hole:
        yield hole.port, hole


def attempts_of(error: BaseException) -> int:
    """The attempts the retry policy made, as its error names them."""
    found = re.search(r"through (\d+) attempt\(s\)", str(error))
    assert found, str(error)
    return int(found.group(1))


def destination(backend: str, port: int) -> tuple[Any, str, str]:
    """(destination, bucket URL, secret) for a bucket whose endpoint is 127.0.0.1:`port`."""
    if backend == "s3":
        credentials = {"aws_access_key_id": "AKIAFAILFAST", "aws_secret_access_key": S3_SECRET,
                       "endpoint_url": f"http://127.0.0.1:{port}", "region_name": "us-east-1"}
        url = "s3://failfast-bucket/data"
        return lakeload.destinations.filesystem(bucket_url=url, credentials=credentials), url, S3_SECRET
    connection = (f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
                  f"BlobEndpoint=http://127.0.0.1:{port}/{AZURITE_ACCOUNT};")
    url = "az://failfast/data"
    return lakeload.destinations.filesystem(bucket_url=url, credentials=connection), url, AZURITE_KEY


@pytest.mark.parametrize("kind", ["closed", "blackhole"])
@pytest.mark.parametrize("backend", ["s3", "az"])
def test_wrong_endpoint_fails_fast_and_clearly(
    backend: str, kind: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    with endpoint(kind) as (port, hole):
        dest, url, secret = destination(backend, port)
        pipeline = lakeload.pipeline(f"failfast_{backend}", destination=dest, pipelines_dir=str(tmp_path / "p"))
        with pytest.raises(StorageUnavailableError) as info:
            pipeline.run([{"id": 1}], table_name="t")
        attempts = attempts_of(info.value)
        if hole is not None:  # one read time-out (10 s) leaves no room for another within 15 s
            assert attempts == 1 and hole.connections == attempts
        else:
            assert 2 <= attempts <= 4  # refused at once: retried, but only the policy's attempts
    message = str(info.value)
    assert url in message  # names the bucket
    assert "check bucket_url, endpoint_url and the network" in message and "connect_timeout" in message
    assert "no answer" in message
    output = capfd.readouterr()
    assert secret not in message + output.out + output.err
    assert not list((tmp_path / "p").rglob("*.jsonl*"))  # failed at the first contact: nothing extracted


def test_time_outs_are_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted, not timed: with a 2 s read time-out and 8 s to give up, an endpoint that never answers gets exactly
    two attempts (the first ends at ~2 s, a second fits: 2 + backoff <= 2 + 2 s; a third cannot: it would start
    after >= 5 s). With the default read time-out (10 s) it would get one, without the 8 s bound four."""
    monkeypatch.setenv("DESTINATION__FILESYSTEM__READ_TIMEOUT", "2")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CONNECT_TIMEOUT", "2")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__UNREACHABLE_TIMEOUT", "8")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__RETRY_INITIAL_BACKOFF", "2")
    with endpoint("blackhole") as (port, hole):
        pipeline = lakeload.pipeline("failfast_conf", destination=destination("s3", port)[0],
                                     pipelines_dir=str(tmp_path / "p"))
        with pytest.raises(StorageUnavailableError) as info:
            pipeline.run([{"id": 1}], table_name="t")
        assert hole is not None and attempts_of(info.value) == hole.connections == 2


def test_unreachable_bucket_at_load_is_caught_as_storage_unavailable_and_as_step_failed(tmp_path: Path) -> None:
    """`except StorageUnavailableError:` around `load()` catches a bucket that stopped answering, as does dlt's
    `except PipelineStepFailed:`; the error survives pickling (a process pool, a Dagster op) with its classes."""
    import pickle

    from lakeload.errors import LoadError, LoadStepFailed, PipelineStepFailed

    with endpoint("closed") as (port, _):
        pipeline = lakeload.pipeline("failfast_load", destination=destination("s3", port)[0],
                                     pipelines_dir=str(tmp_path / "p"))
        load_id = pipeline.extract([{"id": 1}], table_name="t").loads_ids[0]
        pipeline.normalize()
        with pytest.raises(StorageUnavailableError) as info:
            pipeline.load()
    error = info.value
    assert isinstance(error, LoadStepFailed) and isinstance(error, PipelineStepFailed) and isinstance(error, LoadError)
    assert error.step == "load" and error.load_id == load_id
    assert isinstance(error.__cause__, StorageUnavailableError) and str(error.__cause__) in str(error)
    assert "drop-pending-packages" in str(error) and S3_SECRET not in str(error)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and str(again) == str(error) and again.load_id == load_id
    assert pipeline.storage.list_packages("normalized") == [load_id]  # pending for the next load()

"""A wrong endpoint fails fast: a closed port, or a socket that accepts and never answers, for s3:// and
az:// buckets, fails the run with a clear lakeload error within the default bound (~15 s), and prints
no secret. (Before the bounded time-outs and retries, an unreachable Azure endpoint took ~85 s.)
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from servers.fault_proxy import Blackhole, closed_port
from servers.fixtures import AZURITE_ACCOUNT, AZURITE_KEY

import lakeload
from lakeload.errors import StorageUnavailableError

S3_SECRET = "s3-secret-that-must-not-show"
BOUND = 20.0


@contextlib.contextmanager
def endpoint(kind: str) -> Iterator[int]:
    if kind == "closed":
        yield closed_port()
        return
    with Blackhole() as hole:
        yield hole.port


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
    with endpoint(kind) as port:
        dest, url, secret = destination(backend, port)
        pipeline = lakeload.pipeline(f"failfast_{backend}", destination=dest, pipelines_dir=str(tmp_path / "p"))
        started = time.monotonic()
        with pytest.raises(StorageUnavailableError) as info:
            pipeline.run([{"id": 1}], table_name="t")
        elapsed = time.monotonic() - started
    assert elapsed < BOUND, elapsed
    message = str(info.value)
    assert url in message  # names the bucket
    assert "check bucket_url, endpoint_url and the network" in message and "connect_timeout" in message
    assert "no answer" in message
    output = capfd.readouterr()
    assert secret not in message + output.out + output.err
    assert not list((tmp_path / "p").rglob("*.jsonl*"))  # failed at the first contact: nothing extracted


def test_time_outs_are_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__FILESYSTEM__READ_TIMEOUT", "2")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__UNREACHABLE_TIMEOUT", "3")
    with endpoint("blackhole") as port:
        pipeline = lakeload.pipeline("failfast_conf", destination=destination("s3", port)[0],
                                     pipelines_dir=str(tmp_path / "p"))
        started = time.monotonic()
        with pytest.raises(StorageUnavailableError):
            pipeline.run([{"id": 1}], table_name="t")
    assert time.monotonic() - started < 5


def test_unreachable_bucket_at_load_is_caught_as_storage_unavailable_and_as_step_failed(tmp_path: Path) -> None:
    """`except StorageUnavailableError:` around `load()` catches a bucket that stopped answering, as does dlt's
    `except PipelineStepFailed:`; the error survives pickling (a process pool, a Dagster op) with its classes."""
    import pickle

    from lakeload.errors import LoadError, LoadStepFailed, PipelineStepFailed

    with endpoint("closed") as port:
        pipeline = lakeload.pipeline("failfast_load", destination=destination("s3", port)[0],
                                     pipelines_dir=str(tmp_path / "p"))
        load_id = pipeline.extract([{"id": 1}], table_name="t")
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

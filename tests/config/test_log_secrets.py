"""Credentials never reach a log line: the masking patterns, the handler filter, the record factory for botocore
& co. (child loggers included), a real S3 load (moto) with botocore at DEBUG, and the trace of a failed step."""

from __future__ import annotations

import io
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from servers.fixtures import S3Server, fresh_prefix

import lakeload
from lakeload.config.log_secrets import SecretMaskingFilter, install_secret_masking, mask_secrets
from lakeload.runtime.trace import RunTrace

KEY_ID = "AKIAIOSFODNN7EXAMPLE"


@pytest.mark.parametrize(("text", "masked"), [
    ("headers={'Authorization': b'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/s3/aws4_request, "
     "SignedHeaders=host, Signature=5d672d79'}", "headers={'Authorization': b'***'}"),
    ("Authorization: SharedKey devstoreaccount1:c2lnbmF0dXJl\nx-ms-date: now", "Authorization: ***\nx-ms-date: now"),
    ("x-amz-security-token:FQoGZXIvYXdzEJr\nhost:127.0.0.1", "x-amz-security-token:***\nhost:127.0.0.1"),
    ("GET https://acct.blob.core.windows.net/c/f?sv=2024-01-01&se=2026&sig=abc%2Bdef%3D HTTP/1.1",
     "GET https://acct.blob.core.windows.net/c/f?sv=2024-01-01&se=2026&sig=*** HTTP/1.1"),
    ("DefaultEndpointsProtocol=http;AccountName=dev;AccountKey=Eby8vdM02x/K1SZ==;BlobEndpoint=http://h/dev;",
     "DefaultEndpointsProtocol=http;AccountName=dev;AccountKey=***;BlobEndpoint=http://h/dev;"),
    ("https://h/o?X-Amz-Credential=AKID%2F2026&X-Amz-Signature=abc&X-Amz-Date=1",
     "https://h/o?X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Date=1"),
    ("{'aws_secret_access_key': 'wJalr XUtn', 'aws_session_token': \"tok\", 'region_name': 'eu'}",
     "{'aws_secret_access_key': '***', 'aws_session_token': \"***\", 'region_name': 'eu'}"),
    ("{'sftp_password': 'pw', 'azure_client_secret': 'cs', 'key': 'ds/t/1.parquet', 'Bucket': 'b'}",
     "{'sftp_password': '***', 'azure_client_secret': '***', 'key': 'ds/t/1.parquet', 'Bucket': 'b'}"),
    ("CALL: put_object - () - {'Key': 'ds/x.jsonl', 'SSECustomerKey': 'k3y'}",
     "CALL: put_object - () - {'Key': 'ds/x.jsonl', 'SSECustomerKey': '***'}"),
    (f"using key {KEY_ID} now", "using key *** now"),
    ("open sftp://me:pa55@host:22/data and s3://bucket/x", "open sftp://me:***@host:22/data and s3://bucket/x"),
    ("Found credentials in environment variables.", "Found credentials in environment variables."),
    ("Sending http request: <AWSPreparedRequest method=PUT, url=http://127.0.0.1:5/b/ds/init>",
     "Sending http request: <AWSPreparedRequest method=PUT, url=http://127.0.0.1:5/b/ds/init>"),
])
def test_patterns(text: str, masked: str) -> None:
    assert mask_secrets(text) == masked
    assert mask_secrets(masked) == masked


def test_handler_filter_masks_message_args_and_traceback() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    install_secret_masking([handler])
    install_secret_masking([handler])  # idempotent
    assert sum(isinstance(f, SecretMaskingFilter) for f in handler.filters) == 1
    logger = logging.getLogger("some_app.storage")  # not a logger lakeload masks at creation
    logger.addHandler(handler)
    try:
        logger.warning("connecting to %s with secret=%s", "sftp://u:hunter2@h/x", "s3cr3t")
        try:
            raise ValueError(f"refused AccountKey=abc123==; key {KEY_ID}")
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    out = stream.getvalue()
    assert "connecting to sftp://u:***@h/x with secret=***" in out and "ValueError: refused AccountKey=***;" in out
    assert "hunter2" not in out and "s3cr3t" not in out and "abc123" not in out and KEY_ID not in out


def test_storage_library_records_are_masked_whichever_handler_and_child_logger(caplog: pytest.LogCaptureFixture) -> None:
    install_secret_masking()
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("botocore.endpoint.deep.child").debug("headers=%s", {"Authorization": f"AWS4 Credential={KEY_ID}/x"})
        logging.getLogger("paramiko.transport").debug("auth with password=%s", "pw-123")
        logging.getLogger("azurefake").debug("untouched sig=%s", "keep")  # not a library lakeload knows
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ["headers={'Authorization': '***'}", "auth with password=***", "untouched sig=keep"]


def test_s3_load_with_botocore_debug_logs_no_credentials(
    s3_server: S3Server, pipelines_dir: Path, spark: Any, caplog: pytest.LogCaptureFixture
) -> None:
    s = s3_server
    credentials = s.credentials()
    destination = lakeload.destinations.filesystem(f"s3://{s.bucket}/{fresh_prefix('debug-logs')}", credentials=credentials)
    p = lakeload.pipeline("debug_logs", destination=destination, dataset_name="ds", pipelines_dir=str(pipelines_dir),
                          spark=spark)
    with caplog.at_level(logging.DEBUG, "botocore"), caplog.at_level(logging.DEBUG, "s3fs"), \
            caplog.at_level(logging.DEBUG, "urllib3"):
        info = p.run([{"id": i} for i in range(3)], table_name="rows")
    assert info.row_counts == {"rows": 3}
    text = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    assert "Authorization': b'***'" in text  # botocore did log the signed request headers...
    assert s.access_key not in text and s.secret_key not in text  # ...without the key id or the secret


def test_cli_logging_masks_every_record() -> None:
    """The handler `lakeload demo` installs masks records of any logger (its own process: basicConfig)."""
    script = (
        "import logging\n"
        "from lakeload.cli.demo import configure_logging\n"
        "configure_logging('log')\n"
        f"logging.getLogger('any.app').warning('to sftp://u:pw-9@h/x as %s', '{KEY_ID}')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "to sftp://u:***@h/x as ***" in done.stderr and "pw-9" not in done.stderr and KEY_ID not in done.stderr


def test_trace_stores_a_failed_step_masked() -> None:
    trace = RunTrace("p", "filesystem", "filesystem")
    with pytest.raises(OSError), trace.step("load"):
        raise OSError("cannot write sftp://me:hunter2@host/x")
    assert trace.steps[0].error == "OSError: cannot write sftp://me:***@host/x"
    assert trace.steps[0].finished_at is not None and "hunter2" not in str(trace.asdict())


def test_records_without_a_logger_name_pass_through() -> None:
    """Frameworks such as Dagster build records with `name=None`; the masking factory must let them be."""
    install_secret_masking()
    record = logging.getLogRecordFactory()(None, logging.INFO, __file__, 1, "plain %s", ("message",), None)
    assert record.getMessage() == "plain message"

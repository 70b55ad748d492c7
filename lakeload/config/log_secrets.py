"""Credentials never reach a log line: masking of log records.

botocore's DEBUG records carry the access key id (`Authorization: AWS4-HMAC-SHA256 Credential=AKIA.../...`)
and session tokens, urllib3's carry SAS tokens (`sig=`), connection strings carry `AccountKey=`, URLs carry
passwords (`sftp://user:pw@host`). Two pieces mask them:

- `SecretMaskingFilter` on the handlers lakeload installs (the CLI's), masking every record they emit;
- a log record factory that masks the records of lakeload and of the storage libraries (`botocore`, `s3fs`,
  `azure`, `paramiko`, ... and their child loggers) as they are created, whichever handler they reach.
  A filter on the `botocore` logger would not do: Python applies a logger's filters only to records logged
  on that very logger, not to those of `botocore.endpoint` that propagate through it.

`install_secret_masking()` sets up both; the pipeline calls it, and so does the CLI for its handler.

>>> mask_secrets("headers={'Authorization': b'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/x'}")
"headers={'Authorization': b'***'}"
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable
from typing import Any

from lakeload.config.credentials import MASK, url_without_password

# Loggers whose records are masked when they are created (each name with its child loggers).
MASKED_LOGGERS = (
    "lakeload", "botocore", "boto3", "s3fs", "aiobotocore", "azure", "adlfs", "gcsfs", "google", "paramiko",
    "asyncssh", "sshfs", "urllib3", "aiohttp", "fsspec",
)
_SECRET_NAMES = (
    "aws_secret_access_key", "aws_access_key_id", "aws_session_token", "secret_access_key", "access_key_id",
    "secret_key", "access_key", "session_token", "security_token", "x-amz-security-token", "credential",
    "signature", "sig", "accountkey", "account_key", "sharedaccesssignature", "sas_token", "sas_key",
    "client_secret", "secret", "password", "passphrase", "private_key", "private_key_id", "token",
    "access_token", "refresh_token", "id_token", "ssecustomerkey", "sse_customer_key",
)
# `name=value`, `name: value`, `'name': 'value'`, `"name": b"value"`, also with a prefix (`sftp_password`,
# `X-Amz-Credential`); a quoted value ends at its quote, another one at a blank or , ; & } ] ) or a quote
_NAMED = re.compile(
    r"(?i)(?<![\w-])([\w-]*?(?:" + "|".join(re.escape(n) for n in _SECRET_NAMES) + r")['\"]?\s*[:=]\s*)"
    r"(?!b?['\"]?\*\*\*)(?:(b?')[^'\n]*'|(b?\")[^\"\n]*\"|[^\s'\",;&}\])]+)"
)
_AUTHORIZATION = re.compile(r"(?i)(?<![\w-])(authorization['\"]?\s*[:=]\s*)(?!b?['\"]?\*\*\*)(b?['\"])?([^'\"\s][^'\"\r\n]*)")
_AWS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA|AIDA|AROA|AGPA|ANPA)[A-Z0-9]{16}\b")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>]+")


def mask_secrets(text: str) -> str:
    """`text` with credentials masked: secret-named values, Authorization headers, AWS key ids, URL passwords.

    >>> mask_secrets("GET https://a.blob/c?sv=2024&sig=abc%2F HTTP; AccountKey=k1==;BlobEndpoint=x")
    'GET https://a.blob/c?sv=2024&sig=*** HTTP; AccountKey=***;BlobEndpoint=x'
    >>> mask_secrets("open sftp://me:pa55@host:22/data")
    'open sftp://me:***@host:22/data'
    """
    text = _AUTHORIZATION.sub(lambda m: m.group(1) + (m.group(2) or "") + MASK, text)
    text = _NAMED.sub(_mask_named, text)
    text = _AWS_KEY_ID.sub(MASK, text)
    if "@" in text:
        text = _URL.sub(lambda m: url_without_password(m.group(0)), text)
    return text


def _mask_named(match: re.Match[str]) -> str:
    quote = match.group(2) or match.group(3)
    return match.group(1) + (f"{quote}{MASK}{quote[-1]}" if quote else MASK)


class SecretMaskingFilter(logging.Filter):
    """A logging filter that masks credentials in the message and the traceback of each record.

    >>> handler = logging.StreamHandler()
    >>> handler.addFilter(SecretMaskingFilter())
    """

    def filter(self, record: logging.LogRecord) -> bool:
        mask_record(record)
        return True


def mask_record(record: logging.LogRecord) -> None:
    """Mask `record` in place: its message is formatted (once) and masked, its traceback text too."""
    try:
        message = record.getMessage()
    except Exception:  # a malformed record: logging reports it when it is emitted
        return
    masked = mask_secrets(message)
    if masked != message:
        record.msg, record.args = masked, ()
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = mask_secrets(record.exc_text)
    if record.stack_info:
        record.stack_info = mask_secrets(record.stack_info)


def _is_masked_logger(name: object) -> bool:
    if not isinstance(name, str):  # some frameworks (Dagster) make records without a logger name
        return False
    return any(name == root or name.startswith(root + ".") for root in MASKED_LOGGERS)


_install_lock = threading.Lock()


def _masking_factory(previous: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    def make_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if _is_masked_logger(record.name):
            mask_record(record)
        return record

    make_record.lakeload_masking = True  # type: ignore[attr-defined]
    return make_record


def install_secret_masking(handlers: Iterable[logging.Handler] = ()) -> None:
    """Mask credentials in the records of lakeload and the storage libraries, and in all that `handlers` emit.

    Idempotent. A record factory that another library installs later keeps masking when it wraps this one.

    >>> install_secret_masking(logging.getLogger().handlers)
    """
    with _install_lock:
        current = logging.getLogRecordFactory()
        if not getattr(current, "lakeload_masking", False):
            logging.setLogRecordFactory(_masking_factory(current))
        for handler in handlers:
            if not any(isinstance(f, SecretMaskingFilter) for f in handler.filters):
                handler.addFilter(SecretMaskingFilter())

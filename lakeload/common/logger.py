"""dlt's `logger` (`from dlt.common import logger`) for user code: `logger.info(...)`, `logger.warning(...)`, ...
log to the `lakeload` logger of Python's `logging` (where dlt's go to its `dlt` logger), attributed to the line
that called them. With no logging configured, warnings and errors reach stderr, as with dlt's default level.

>>> from lakeload.common import logger
>>> logger.LOGGER.name
'lakeload'
>>> logger.log_level() in ("WARNING", "INFO", "DEBUG", "ERROR", "CRITICAL", "NOTSET")
True
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Mapping
from typing import Any

__all__ = [
    "LOGGER",
    "critical",
    "debug",
    "error",
    "exception",
    "fatal",
    "info",
    "is_logging",
    "log",
    "log_level",
    "metrics",
    "pretty_format_exception",
    "warn",
    "warning",
]

LOGGER: logging.Logger = logging.getLogger("lakeload")


def _at_caller(kwargs: dict[str, Any]) -> dict[str, Any]:
    kwargs.setdefault("stacklevel", 2)  # the record names the caller of this module's function
    return kwargs


def debug(msg: object, *args: Any, **kwargs: Any) -> None:
    """Log `msg % args` at DEBUG."""
    LOGGER.debug(msg, *args, **_at_caller(kwargs))


def info(msg: object, *args: Any, **kwargs: Any) -> None:
    """Log `msg % args` at INFO."""
    LOGGER.info(msg, *args, **_at_caller(kwargs))


def warning(msg: object, *args: Any, **kwargs: Any) -> None:
    """Log `msg % args` at WARNING."""
    LOGGER.warning(msg, *args, **_at_caller(kwargs))


warn = warning


def error(msg: object, *args: Any, **kwargs: Any) -> None:
    """Log `msg % args` at ERROR."""
    LOGGER.error(msg, *args, **_at_caller(kwargs))


def exception(msg: object, *args: Any, **kwargs: Any) -> None:
    """Log `msg % args` at ERROR with the exception being handled."""
    kwargs.setdefault("exc_info", True)
    LOGGER.error(msg, *args, **_at_caller(kwargs))


def critical(msg: object, *args: Any, **kwargs: Any) -> None:
    """Log `msg % args` at CRITICAL."""
    LOGGER.critical(msg, *args, **_at_caller(kwargs))


fatal = critical


def log(level: int, msg: object, *args: Any, **kwargs: Any) -> None:
    """Log `msg % args` at `level`."""
    LOGGER.log(level, msg, *args, **_at_caller(kwargs))


def metrics(name: str, extra: Mapping[str, Any], stacklevel: int = 1) -> None:
    """Log `name` at INFO with `extra` as the record's extra fields."""
    LOGGER.info(name, extra=extra, stacklevel=stacklevel)


def is_logging() -> bool:
    """Whether log calls go somewhere: always, to the `lakeload` logger."""
    return True


def log_level() -> str:
    """The name of the level the `lakeload` logger logs at (its own, else its parent's)."""
    return logging.getLevelName(LOGGER.getEffectiveLevel())


def pretty_format_exception() -> str:
    """The exception being handled, with its traceback, as text."""
    return traceback.format_exc()

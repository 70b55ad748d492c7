"""Spark's failures as lakeload errors: one line that says what went wrong, the full cause chained.

A Spark job fails with `AnalysisException`, `PythonException` (an executor's Python task raised),
`Py4JJavaError` and friends, whose text runs to pages of JVM stack. The user meets a `LakeloadError`
of the failing step instead, whose message is the Spark cause in one line; the original exception stays
in `__cause__` for debugging, and Spark's own log of it goes to the Spark log file (see `session.py`).

>>> from pyspark.errors import AnalysisException
>>> from lakeload.errors import LoadError
>>> try:
...     with spark_errors(LoadError, "Loading package 1795296531.14"):
...         raise AnalysisException(message="[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function "
...             "parameter with name `deleted` cannot be resolved. SQLSTATE: 42703")   # e.g. frame.collect()
... except LoadError as exc:
...     print(exc)
...     print(type(exc.__cause__).__name__)
Loading package 1795296531.14 failed in Spark: [UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with name `deleted` cannot be resolved.
AnalysisException
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping
from typing import Any

import lakeload.errors
from lakeload.errors import LakeloadError, PipelineStepFailed

_PYTHON_ERROR = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Failed)\b.*)$")
_SQLSTATE = re.compile(r"\s*SQLSTATE: \w+[.;]?\s*$")
MAX_SUMMARY = 500


def spark_exception_types() -> tuple[type[BaseException], ...]:
    """The exception types Spark and py4j raise into the driver."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JError)


def is_spark_error(exc: BaseException) -> bool:
    """An exception raised by Spark or py4j, not by lakeload or the user's code."""
    return isinstance(exc, spark_exception_types())


def summarize(exc: BaseException) -> str:
    """The Spark cause of a failure in one line: an executor task's own Python error, else Spark's error class and message.

    >>> from pyspark.errors import AnalysisException
    >>> summarize(AnalysisException(message="[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function "
    ...     "parameter with name `deleted` cannot be resolved. SQLSTATE: 42703;"))
    '[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with name `deleted` cannot be resolved.'
    """
    text = str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    python_errors = [m.group(1) for line in lines if (m := _PYTHON_ERROR.match(line))]
    if "Traceback (most recent call last)" in text and python_errors:
        ours = [error for error in python_errors if error.startswith("lakeload.")]
        line = (ours or python_errors)[-1]  # the task's own exception (lakeload's, when it raised one)
    elif lines:
        line = lines[0]
        if line.startswith("An error occurred while calling") and len(lines) > 1:
            line = lines[1].removeprefix(": ")
    else:
        line = type(exc).__name__
    line = _SQLSTATE.sub("", line).strip()
    return line if len(line) <= MAX_SUMMARY else line[: MAX_SUMMARY - 3] + "..."


@contextlib.contextmanager
def spark_errors(error: type[LakeloadError], what: str, hint: str = "") -> Iterator[None]:
    """Turn a Spark or py4j exception raised inside into `error("<what> failed: <one line>. <hint>")`, chained."""
    try:
        yield
    except LakeloadError:
        raise
    except spark_exception_types() as exc:
        from lakeload.spark.connect_shipping import missing_module_hint

        summary = summarize(exc)
        message = f"{what} failed in Spark: {summary}{'' if summary.endswith(('.', '...')) else '.'}"
        hint = missing_module_hint(str(exc)) or hint
        raise error(f"{message} {hint}".strip()) from exc


def task_error(failure: Mapping[str, Any], what: str, fallback: type[LakeloadError], hint: str = "") -> LakeloadError:
    """The error a failed Spark task reported (`kernel.spark.runner.lakeload_failure`): the class of `lakeload.errors` it
    named, made again with the task's message (after `what`) and plain attributes, so that `except SchemaError:`
    catches a normalize task's `IntegerOutOfRangeError`; else `fallback` with the task's one-line error.

    Only `lakeload.errors` is searched, by name: a task cannot make the driver build any other class.
    """
    kind = getattr(lakeload.errors, str(failure.get("lakeload_error")), None)
    if not isinstance(kind, type) or not issubclass(kind, LakeloadError) or issubclass(kind, PipelineStepFailed) \
            or "lakeload_message" not in failure:
        return fallback(f"{what}: {failure['error']} {hint}".strip())
    error = kind.__new__(kind)
    Exception.__init__(error, f"{what}: {failure['lakeload_message']} {hint}".strip())  # its own __init__ takes parts
    error.__dict__.update(failure.get("lakeload_attributes") or {})
    return error

"""How a failing pipeline step reaches the user: one `PipelineStepFailed` of the step's kind, never a raw error.

- A `LakeloadError` keeps its message; a Spark/py4j exception becomes the step's error (`ExtractError`,
  `NormalizeError`, `LoadError`) with Spark's cause in one line; an `OSError` in load (a bucket that went away)
  likewise. The original is chained as `__cause__`.
- The raised error is a `PipelineStepFailed` (as in dlt) and an instance of the step's error class, so
  `except LoadError` catches a failed load; it is also an instance of a lakeload cause's own class, so
  `except DeltaConflictError` or `except StorageUnavailableError` around `run()` catches what it names.
- When a package is pending after the failure, the message names it, how to retry it and how to drop it if
  it can never succeed, so that one bad package never blocks a pipeline without a way out.

>>> try:
...     with failing_step("load", "quick_start", "1795296531.14"):
...         raise OSError("[Errno 5] Input/output error")   # e.g. loader.load("1795296531.14") on a bucket gone away
... except LoadError as exc:
...     print(type(exc).__name__, isinstance(exc, PipelineStepFailed))
...     print(exc)
LoadStepFailed True
Pipeline step 'load' failed (load package 1795296531.14): Load failed (OSError): [Errno 5] Input/output error Load package 1795296531.14 stays pending: the next run() or pipeline.load() retries it. If it can never succeed, drop it with pipeline.drop_pending_packages() or `lakeload pipeline quick_start drop-pending-packages` (its data is then not loaded).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from lakeload.errors import (
    ExtractError,
    LakeloadError,
    LoadError,
    NormalizeError,
    PipelineStepFailed,
    step_failed,
)
from lakeload.spark.errors import spark_exception_types, summarize

STEP_ERRORS: dict[str, type[LakeloadError]] = {"extract": ExtractError, "normalize": NormalizeError, "load": LoadError}


def pending_package_help(step: str, pipeline_name: str, load_id: str) -> str:
    """What to do with a package left pending by a failed step: retry, or drop it.

    >>> pending_package_help("load", "quick_start", "1795296531.14")
    'Load package 1795296531.14 stays pending: the next run() or pipeline.load() retries it. ...'
    """
    retry = "pipeline.load()" if step == "load" else "pipeline.normalize()"
    return (
        f"Load package {load_id} stays pending: the next run() or {retry} retries it. If it can never succeed, "
        f"drop it with pipeline.drop_pending_packages() or `lakeload pipeline {pipeline_name} drop-pending-packages` "
        "(its data is then not loaded)."
    )


def _typed(step: str, exc: BaseException) -> LakeloadError:
    """A non-lakeload exception as the step's error, with its cause in one line."""
    kind = "in Spark" if isinstance(exc, spark_exception_types()) else f"({type(exc).__name__})"
    error = STEP_ERRORS[step](f"{step.capitalize()} failed {kind}: {summarize(exc)}")
    error.__cause__ = exc
    return error


@contextlib.contextmanager
def failing_step(step: str, pipeline_name: str, load_id: str | None = None, pending: bool = True) -> Iterator[None]:
    """Raise whatever fails inside as `step_failed(step, ...)`; `pending`: the package stays for a retry."""
    caught: tuple[type[BaseException], ...] = spark_exception_types()
    if step == "load":
        caught += (OSError,)
    try:
        yield
    except PipelineStepFailed:
        raise
    except LakeloadError as exc:
        raise step_failed(step, load_id, _message(str(exc), step, pipeline_name, load_id, pending), exc) from exc
    except caught as exc:
        typed = _typed(step, exc)
        raise step_failed(step, load_id, _message(str(typed), step, pipeline_name, load_id, pending)) from typed


def _message(text: str, step: str, pipeline_name: str, load_id: str | None, pending: bool) -> str:
    if load_id is None or not pending:
        return text
    return f"{text.rstrip()} {pending_package_help(step, pipeline_name, load_id)}"

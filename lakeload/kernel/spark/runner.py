"""Executor-safe: runs one lakeload task per Spark partition and returns its JSON metadata.

The driver builds `sparkContext.parallelize(range(n), n)` and maps it with `partition_mapper` (classic
sessions), or `spark.range(n, numPartitions=n)` with `task_mapper` (Spark Connect, which has no RDDs):
partition `i` runs `task(payload, items[i])` and yields one JSON string (in an Arrow batch for `task_mapper`). Errors raised by
the task are returned as data (`{"error": ...}`) so the driver can raise a clean lakeload error
instead of a JVM stack trace, and deterministic failures are not retried by Spark. A `lakeload.errors` class
travels by name with its message and plain attributes (`TaskFailure`), so that the driver raises that class again.
"""

from __future__ import annotations

import gc
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson
import pyarrow as pa

from lakeload.errors import LakeloadError
from lakeload.kernel.contracts import TLakeloadFailure, TTaskError, TTaskOk
from lakeload.kernel.spark.working import WorkingStore, use

RESULT_SCHEMA = "result string"


def task_mapper(
    task: Callable[[Any, Any], Any], payload: Any, items: list[Any], working: WorkingStore | None = None
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A `mapInArrow` function over a `range` DataFrame: runs `task(payload, items[id])` per id.

    `working` (the bucket of package data URLs, see `kernel.spark.working`) is installed in the task's process.
    """

    run_one = task_runner(task, payload, items, working)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                yield pa.RecordBatch.from_pydict({"result": [run_one(index)]})

    return run


def partition_mapper(
    task: Callable[[Any, Any], Any], payload: Any, items: list[Any], working: WorkingStore | None = None
) -> Callable[[Iterable[int]], Iterable[str]]:
    """The same as `task_mapper` for an RDD of indexes (`parallelize(range(n), n)`, classic sessions): no SQL
    plan for Spark to make, which in a fresh JVM is most of its first job's cost."""
    run_one = task_runner(task, payload, items, working)

    def run(indexes: Iterable[int]) -> Iterable[str]:
        for index in indexes:
            yield run_one(index)

    return run


def task_runner(
    task: Callable[[Any, Any], Any], payload: Any, items: list[Any], working: WorkingStore | None
) -> Callable[[int], str]:
    """Runs `task(payload, items[index])` (with `working` installed) and returns its JSON result, or the error it
    raised as data (`{"error": ...}`)."""

    def run_one(index: int) -> str:
        use(working)
        _freeze_imports()
        result: TTaskOk | TTaskError
        try:
            result = {"ok": task(payload, items[index]), "index": index}
        except Exception as exc:  # returned to the driver, which raises a lakeload error
            result = {
                "error": f"{type(exc).__name__}: {exc}",
                "error_type": type(exc).__name__,
                "trace": traceback.format_exc(limit=8),
                "index": index,
                **lakeload_failure(exc),
            }
        return orjson.dumps(result, default=str).decode()

    return run_one


PLAIN = (str, int, float, bool, type(None))


def lakeload_failure(exc: BaseException) -> TLakeloadFailure:
    """What the driver needs to raise `exc`'s class again: its name when it is one of `lakeload.errors` (user
    code's own exception classes are not rebuilt), its message and its plain attributes (`table_name`, `path`...:
    text and numbers only, never an item or a client); {} for any other exception.

    >>> from lakeload.errors import DamagedPackageFileError
    >>> lakeload_failure(DamagedPackageFileError("/p/x.parquet", "users", "1.5", "truncated"))["lakeload_error"]
    'DamagedPackageFileError'
    """
    if not isinstance(exc, LakeloadError) or type(exc).__module__ != LakeloadError.__module__:
        return {}
    attributes = {k: v for k, v in vars(exc).items() if isinstance(v, PLAIN) and not k.startswith("_")}
    return {"lakeload_error": type(exc).__name__, "lakeload_message": str(exc), "lakeload_attributes": attributes}


_FROZEN = False


def _freeze_imports() -> None:
    """Moves what the worker process holds before its first lakeload task (pyspark's, pyarrow's, pandas' and
    lakeload's modules) out of the cycle collector's reach, once per process.

    pyspark's daemon runs a full `gc.collect()` after every task of a reused worker; with those modules loaded,
    each walked all their objects (0.04-0.09 s per task here, ~8% of the workers' CPU in a 1M-event load).
    Frozen objects are still freed by reference counting; only cycles among them would be kept, and modules live
    as long as the process anyway.
    """
    global _FROZEN
    if not _FROZEN:
        _FROZEN = True
        gc.freeze()

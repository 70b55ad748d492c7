"""Executor-safe: runs one lakeload task per Spark partition and returns its JSON metadata.

The driver builds `spark.range(n, numPartitions=n)` and maps it with `task_mapper`: partition `i`
runs `task(payload, items[i])` and yields one Arrow batch with one JSON string. Errors raised by
the task are returned as data (`{"error": ...}`) so the driver can raise a clean lakeload error
instead of a JVM stack trace, and deterministic failures are not retried by Spark.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pyarrow as pa

from lakeload.spark.executor_working import WorkingStore, use

RESULT_SCHEMA = "result string"


def _encode(value: Any) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"result": [orjson.dumps(value, default=str).decode()]})


def task_mapper(
    task: Callable[[Any, Any], Any], payload: Any, items: list[Any], working: WorkingStore | None = None
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A `mapInArrow` function over a `range` DataFrame: runs `task(payload, items[id])` per id.

    `working` (the bucket of package data URLs, see `executor_working`) is installed in the task's process.
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        use(working)
        for batch in batches:
            for index in batch.column(0).to_pylist():
                try:
                    result = {"ok": task(payload, items[index]), "index": index}
                except Exception as exc:  # returned to the driver, which raises a lakeload error
                    result = {
                        "error": f"{type(exc).__name__}: {exc}",
                        "error_type": type(exc).__name__,
                        "trace": traceback.format_exc(limit=8),
                        "index": index,
                    }
                yield _encode(result)

    return run

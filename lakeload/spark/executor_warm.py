"""Executor-safe: the warm-up task of the local engine's shared session (`lakeload.spark.shared_session.warm_up`).

Each Python worker that runs it imports what a normalize task of a small run imports (pyarrow, orjson and
lakeload's executor modules from the session's zip), so the first run on a new engine finds its workers started
and those modules loaded.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

WARM_MODULES = (
    "lakeload.spark.executor_runner",
    "lakeload.normalize.executor_tasks",
    "lakeload.normalize.executor_arrow",
    "lakeload.normalize.executor_relational",
    "lakeload.normalize.executor_writers",
    "lakeload.load.executor_copy",
)


def warm_worker(batches: Iterator[Any]) -> Iterator[Any]:
    """A `mapInArrow` function: import the modules, then pass the batches through."""
    for name in WARM_MODULES:
        importlib.import_module(name)
    yield from batches

"""Executor-safe: the warm-up task of the local engine's shared session (`lakeload.spark.shared_session.warm_up`).

Each Python worker that runs it imports what a normalize task of a small run imports (pyarrow, orjson and
lakeload's executor modules from the session's zip), so the first run on a new engine finds its workers started
and those modules loaded.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Iterator
from typing import Any

WARM_MODULES = (
    "lakeload.kernel.spark.runner",
    "lakeload.kernel.normalize.tasks",
    "lakeload.kernel.normalize.arrow",
    "lakeload.kernel.normalize.relational",
    "lakeload.kernel.normalize.writers",
    "lakeload.kernel.load.copy",
)


def warm_worker(batches: Iterator[Any]) -> Iterator[Any]:
    """A `mapInArrow` function: import the modules, then pass the batches through."""
    for name in WARM_MODULES:
        importlib.import_module(name)
    yield from batches


def probe(payload: tuple[int, float] | None, item: int) -> int:
    """A `run_tasks` task that checks the task plumbing end to end: `item` times the payload's factor (2 without
    one), after its delay in seconds (long enough for a progress report to see the job running).

    >>> probe((3, 0.0), 5)
    15
    """
    factor, delay = payload if payload is not None else (2, 0.0)
    if delay:
        time.sleep(delay)
    return item * factor

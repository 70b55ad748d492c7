"""Python's cycle collector kept to young objects while extract runs.

A generator's pages are plain dicts and lists, freed by reference counting as soon as they are written; the
cycle collector finds nothing in them. It still runs every few hundred allocations, and its full passes
walk every object the process holds (pyspark's, pyarrow's and pandas' modules: ~100k objects). Measured on
1M nested events in pages of 1,000: half of extract's time (19-20 s, ~10 s without it). During extract, the
objects that exist before it are frozen (`gc.freeze()`: never walked) and the youngest generation collects
less often; both are undone afterwards, and garbage cycles made in between are still collected.
(Spark's Python workers gain nothing from the same around a normalize task: measured, its work is in Arrow.)
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 10_000  # allocations between collections of the youngest generation (Python's default: 700)
_lock = threading.Lock()
_depth = 0  # extracts running now (pipelines in threads): the last one to end restores the collector
_saved: tuple[int, int, int] | None = None


@contextmanager
def young_objects_only() -> Iterator[None]:
    """During the block the cycle collector leaves the objects that existed before it alone."""
    global _depth, _saved
    with _lock:
        _depth += 1
        if _depth == 1 and gc.isenabled():
            _saved = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(max(_saved[0], YOUNG_THRESHOLD), *_saved[1:])
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                gc.unfreeze()
                _saved = None

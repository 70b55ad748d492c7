"""Steps on a resource's item stream, as dlt's pipe: `add_map`, `add_filter`, `add_yield_map`, `add_limit`.

An *item* is what the resource yields: one record, a page (a list of records), an Arrow table or a DataFrame.
As in dlt, map/filter/yield-map functions get one record at a time when the item is a list (an empty page
passes unchanged, a page the filter empties is dropped), and the whole item otherwise; `add_limit` counts
yields (pages, empty ones included) or, with `count_rows`, rows, and closes the resource's generator when the
limit or `max_time` is reached, keeping the item that reached it. Steps run in the order they were added
(a new limit replaces an older one, at the end). Async generators are driven to completion on a private
event loop, one item at a time.

>>> from lakeload import resource
>>> numbers = resource(range(10), name="n").add_map(lambda n: {"n": n}).add_filter(lambda r: r["n"] % 2 == 0).add_limit(3)
>>> list(numbers)
[{'n': 0}, {'n': 2}, {'n': 4}]
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MapStep:
    """`add_map(f)`: every record (or whole item) replaced by `f(record)`."""

    f: Callable[[Any], Any]

    def apply(self, item: Any) -> Iterator[Any]:
        if isinstance(item, list):
            yield [self.f(i) for i in item] if item else item
        else:
            yield self.f(item)


@dataclass(frozen=True)
class FilterStep:
    """`add_filter(f)`: only records (or items) for which `f` is true go on."""

    f: Callable[[Any], bool]

    def apply(self, item: Any) -> Iterator[Any]:
        if isinstance(item, list):
            if not item:
                yield item
                return
            kept = [i for i in item if self.f(i)]
            if kept:
                yield kept
        elif self.f(item):
            yield item


@dataclass(frozen=True)
class YieldMapStep:
    """`add_yield_map(f)`: `f` is a generator; each record (or item) becomes what it yields."""

    f: Callable[[Any], Iterable[Any]]

    def apply(self, item: Any) -> Iterator[Any]:
        if isinstance(item, list):
            if not item:
                yield item
            for i in item:
                yield from self.f(i)
        else:
            yield from self.f(item)


@dataclass(frozen=True)
class LimitStep:
    """`add_limit(max_items, max_time, count_rows)`: stop the resource after so many yields/rows or seconds."""

    max_items: int | None = None
    max_time: float | None = None
    count_rows: bool = False


Step = MapStep | FilterStep | YieldMapStep | LimitStep


def rows_in(item: Any) -> int:
    """How many rows an item holds (a page's length, an Arrow table's or pandas frame's rows, else 1)."""
    if isinstance(item, list):
        return len(item)
    num_rows = getattr(item, "num_rows", None)
    if isinstance(num_rows, int):
        return num_rows
    if type(item).__module__.startswith("pandas"):
        return len(item)
    return 1


def sync_items(data: Any) -> Iterator[Any]:
    """`data` as a plain iterator; an async generator is driven on its own event loop."""
    if not inspect.isasyncgen(data):
        yield from data
        return
    loop = asyncio.new_event_loop()
    agen: AsyncIterator[Any] = data
    try:
        while True:
            try:
                yield loop.run_until_complete(agen.__anext__())
            except StopAsyncIteration:
                return
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def _limited(items: Iterator[Any], limit: LimitStep) -> Iterator[Any]:
    if limit.max_items == 0:
        _close(items)
        return
    started, count = time.monotonic(), 0
    for item in items:
        count += rows_in(item) if limit.count_rows else 1
        yield item
        over_count = limit.max_items is not None and limit.max_items >= 0 and count >= limit.max_items
        over_time = limit.max_time is not None and time.monotonic() - started > limit.max_time
        if over_count or over_time:
            _close(items)
            return


def _close(items: Iterator[Any]) -> None:
    close = getattr(items, "close", None)
    if callable(close):
        close()


def apply_steps(items: Iterator[Any], steps: tuple[Step, ...]) -> Iterator[Any]:
    """The item stream after every step, in order."""
    for step in steps:
        items = _limited(items, step) if isinstance(step, LimitStep) else _mapped(items, step)
    return items


def _mapped(items: Iterator[Any], step: MapStep | FilterStep | YieldMapStep) -> Iterator[Any]:
    for item in items:
        yield from step.apply(item)

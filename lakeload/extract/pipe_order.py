"""The order in which an extract takes items from its generators: dlt's (`PipeIterator`), so that rows reach their
tables, `list(source)` and `list(resource)` in the order dlt gives them.

The generators are kept in a list: the resources that feed none (the heads, added first), then each generator made
on the way: a transformer's call that returned one, and a *fork* per item of a resource that feeds transformers
(it hands the item to each of them, and to the resource's own table when that is selected). Each time an item is
needed, the next generator is taken:

- `round_robin` (dlt's default; `[extract] next_item_mode`, env `EXTRACT__NEXT_ITEM_MODE`): one step backwards
  through the list, wrapping around, so heads and open transformer calls take turns;
- `fifo`: always the newest generator, so a transformer's call is drained before its parent goes on; round robin
  also falls back to it while `max_parallel_items` (`[extract] max_parallel_items`, 20) or more generators were made.

A generator that ends leaves the list. Deferred calls (`lakeload.defer`) are not generators of the list: their
items come in the order the calls were made (dlt hands them out as they complete, an order that depends on timing).

>>> scheduler = Scheduler("round_robin")
>>> for name in ("b", "a"):   # dlt adds the heads last resource first, and starts with the last added
...     scheduler.add(name, iter([f"{name}1", f"{name}2"]), head=True)
>>> [scheduler.next()[1] for _ in range(4)]
['a1', 'b1', 'a2', 'b2']
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, cast

from lakeload.config.resolver import resolve
from lakeload.errors import ConfigurationError

NextItemMode = Literal["round_robin", "fifo"]
NEXT_ITEM_MODES = ("round_robin", "fifo")
MAX_PARALLEL_ITEMS = 20
T = TypeVar("T")


def next_item_mode(mode: str | None = None, pipeline_name: str | None = None) -> NextItemMode:
    """`mode`, else `[extract] next_item_mode` (env `EXTRACT__NEXT_ITEM_MODE`), else dlt's "round_robin"."""
    value = mode or resolve(("extract",), "next_item_mode", pipeline_name, hint=str).value or "round_robin"
    if value not in NEXT_ITEM_MODES:
        raise ConfigurationError(
            f"[extract] next_item_mode = {value!r} is not a mode: use 'round_robin' (dlt's default: resources and "
            "transformer calls take turns) or 'fifo' (each transformer call drained first). "
            "Fix it in .lakeload/config.toml or EXTRACT__NEXT_ITEM_MODE."
        )
    return cast(NextItemMode, value)


def max_parallel_items(pipeline_name: str | None = None) -> int:
    """`[extract] max_parallel_items`: with that many generators made, round robin takes the newest (dlt's 20)."""
    value = resolve(("extract",), "max_parallel_items", pipeline_name, hint=int).value
    return int(value) if value else MAX_PARALLEL_ITEMS


@dataclass
class _Generator(Generic[T]):
    owner: T
    items: Iterator[Any]


class Scheduler(Generic[T]):
    """dlt's choice of the next generator (see the module docstring); each generator has an `owner` (what its
    items belong to), returned with each item."""

    def __init__(self, mode: NextItemMode, max_parallel: int = MAX_PARALLEL_ITEMS) -> None:
        self.mode, self.max_parallel = mode, max_parallel
        self._generators: list[_Generator[T]] = []
        self._heads = 0  # generators added as heads and not ended yet
        self._index = 0

    def __bool__(self) -> bool:
        return bool(self._generators)

    def add(self, owner: T, items: Iterator[Any], head: bool = False) -> None:
        """A generator to take items from (`head`: a resource that feeds none, added before the extract starts)."""
        self._generators.append(_Generator(owner, items))
        self._heads += head

    def next(self) -> tuple[T, Any] | None:
        """The next item and its generator's owner; None when no generator is left or each gave None (dlt skips
        None items)."""
        while self._generators:
            count = len(self._generators)
            if self.mode == "fifo" or count - self._heads >= self.max_parallel:
                self._index = count - 1
            else:
                self._index = (self._index - 1) % count
            first: int | None = None
            while self._index != first:
                generator = self._generators[self._index]
                try:
                    item = next(generator.items)
                except StopIteration:
                    self._end(self._index)
                    break
                if item is not None:
                    return generator.owner, item
                first = self._index if first is None else first
                self._index = (self._index - 1) % count
            else:
                return None
        return None

    def remaining(self, owner: T) -> Iterator[Any]:
        """The rest of the only generator, taken out (for one resource alone: no turns to take)."""
        assert len(self._generators) == 1 and self._generators[0].owner is owner
        generator = self._generators.pop()
        self._heads = 0
        return generator.items

    def _end(self, index: int) -> None:
        self._generators.pop(index)
        if index < self._heads:
            self._heads -= 1

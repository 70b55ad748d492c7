"""One extract's resources evaluated as dlt's pipe graph.

Transformers hang under the resources that feed them. Every parent is iterated **once**, however many
transformers it feeds and whether or not it is selected itself; its items go to its own table (when selected)
and to each transformer. A parent is matched by name too: within one extract a name is one resource (as
in a dlt source), so `data_from=pages` and a selected `pages` share one iteration.

Calls deferred with `lakeload.defer` (and every call of a `parallelized` transformer) run in a thread
pool of `workers` threads; their items are written in the order the calls were made. `parallelized`
resources are iterated in their own threads while the others run. Items are only ever written from the
calling thread; `lakeload.current` state works in every thread.

>>> import lakeload
>>> @lakeload.resource
... def pages():
...     yield [{"id": 1}, {"id": 2}]
...     yield [{"id": 3}]
>>> @lakeload.transformer
... def details(page):
...     for row in page:
...         yield {"id": row["id"], "detail": row["id"] * 10}
>>> for res, item in evaluate([pages, pages | details]):   # pages is iterated once, for both
...     print(res.name, item)                              # extract writes `item` to `res`'s table here
pages [{'id': 1}, {'id': 2}]
details {'id': 1, 'detail': 10}
details {'id': 2, 'detail': 20}
pages [{'id': 3}]
details {'id': 3, 'detail': 30}
"""

from __future__ import annotations

import functools
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from lakeload.common.context import call_in, iterate_in
from lakeload.extract.context import ExtractContext
from lakeload.extract.incremental import Incremental
from lakeload.extract.incremental.binding import bind_resource, filter_items
from lakeload.extract.pipes import LimitStep, apply_steps
from lakeload.extract.resource import Resource, outputs

WORKERS = 5
_END = object()


@dataclass(frozen=True)
class Deferred:
    """A call to make later, in the extract's thread pool (what a `lakeload.defer` function returns)."""

    call: Callable[[], Any]

    def __call__(self) -> Any:
        return self.call()


def defer(f: Callable[..., Any]) -> Callable[..., Deferred]:
    """Make `f` deferred, as dlt's `@dlt.defer`: calling it returns a `Deferred` that the extract runs in its
    thread pool, so slow calls (an HTTP request per item) overlap.

    >>> import lakeload
    >>> @lakeload.resource
    ... def users():
    ...     yield {"id": 1}
    ...     yield {"id": 2}
    >>> @lakeload.transformer
    ... @lakeload.defer
    ... def details(user):
    ...     return {"id": user["id"], "name": f"user {user['id']}"}   # e.g. fetch(user["id"])
    >>> for res, item in evaluate([users | details]):
    ...     print(res.name, item)
    details {'id': 1, 'name': 'user 1'}
    details {'id': 2, 'name': 'user 2'}
    """

    @functools.wraps(f)
    def deferred(*args: Any, **kwargs: Any) -> Deferred:
        return Deferred(functools.partial(f, *args, **kwargs))

    return deferred


@dataclass
class _Node:
    resource: Resource
    selected: bool
    children: list[_Node] = field(default_factory=list)


@dataclass
class _Failed:
    error: BaseException


def plan(resources: list[Resource]) -> list[_Node]:
    """The roots of the graph of `resources` (selected) and their parents (only fed to transformers)."""
    by_name = {r.name: r for r in resources}
    nodes: dict[int, _Node] = {}
    roots: list[_Node] = []

    def node_for(res: Resource, selected: bool) -> _Node:
        found = nodes.get(id(res))
        if found is not None:
            found.selected |= selected
            return found
        node = nodes[id(res)] = _Node(res, selected)
        if not res.is_transformer:
            roots.append(node)
            return node
        parent = res.feeding_parent()
        same_name = by_name.get(parent.name)
        node_for(same_name if same_name is not None and same_name is not res else parent, False).children.append(node)
        return node

    for res in resources:
        node_for(res, True)
    return roots


def extracted(resources: list[Resource]) -> list[Resource]:
    """Every resource an extract of `resources` iterates: the selected ones and the parents that feed them."""
    found: list[Resource] = []

    def walk(node: _Node) -> None:
        found.append(node.resource)
        for child in node.children:
            walk(child)

    for root in plan(resources):
        walk(root)
    return found


@dataclass
class _Pending:
    node: _Node
    future: Future[list[Any]]
    stepped: bool  # a transformer's call: its items go through the transformer's steps


class _Run:
    def __init__(
        self, context_for: Callable[[Resource], ExtractContext | None], pool: ThreadPoolExecutor, workers: int
    ) -> None:
        self.context_for = context_for
        self.pool = pool
        self.max_pending = 4 * workers  # deferred calls waiting before the oldest is waited for
        self.pending: deque[_Pending] = deque()
        self.lives: dict[int, Incremental[Any] | None] = {}  # each transformer's live incremental, bound once

    def emit(self, node: _Node, item: Any) -> Iterator[tuple[Resource, Any]]:
        """`item` of `node` to its table and to each of its transformers."""
        if isinstance(item, Deferred):  # a resource yielded a deferred call: its items are the resource's
            self._submit(node, item, stepped=False)
            return
        if node.selected:
            yield node.resource, item
        for child in node.children:
            yield from self._feed(child, item)

    def _feed(self, child: _Node, item: Any) -> Iterator[tuple[Resource, Any]]:
        res = child.resource
        context = self.context_for(res)
        if res.parallelized:  # each call in the pool, as a deferred one
            self._submit(child, Deferred(functools.partial(res.call_transform, item)), stepped=True)
            return
        returned = call_in(context, res.call_transform, item)
        if isinstance(returned, Deferred):
            self._submit(child, returned, stepped=True)
            return
        yield from self._stepped(child, iterate_in(context, outputs(returned)))

    def _stepped(self, node: _Node, items: Iterator[Any]) -> Iterator[tuple[Resource, Any]]:
        """A transformer's items through its steps and its `incremental=` hint (it takes no `add_limit`)."""
        steps = tuple(s for s in node.resource.steps if not isinstance(s, LimitStep))
        stepped = apply_steps(items, steps)
        live = self._live(node.resource)
        for out in filter_items(stepped, live, None) if live is not None else stepped:
            yield from self.emit(node, out)

    def _live(self, res: Resource) -> Incremental[Any] | None:
        if id(res) not in self.lives:
            live = None
            if res.incremental_hint is not None:
                context = self.context_for(res) or ExtractContext(resource_name=res.name)
                live, _ = bind_resource(res.name, None, res.incremental_hint, res.hints.raw_primary_key, context.resource_state)
            self.lives[id(res)] = live
        return self.lives[id(res)]

    def _submit(self, node: _Node, deferred: Deferred, stepped: bool) -> None:
        context = self.context_for(node.resource)
        future = self.pool.submit(lambda: list(iterate_in(context, outputs(deferred))))
        self.pending.append(_Pending(node, future, stepped))

    def ready(self, block: bool) -> Iterator[tuple[Resource, Any]]:
        """Items of deferred calls that are done, in call order (all of them with `block`, or when too many wait)."""
        while self.pending and (block or self.pending[0].future.done() or len(self.pending) > self.max_pending):
            done = self.pending.popleft()
            items = done.future.result()
            if done.stepped:
                yield from self._stepped(done.node, iter(items))
            else:
                for item in items:
                    yield from self.emit(done.node, item)


def evaluate(
    resources: list[Resource], context_for: Callable[[Resource], ExtractContext | None] = lambda r: None,
    workers: int = WORKERS,
) -> Iterator[tuple[Resource, Any]]:
    """Every item of `resources` with the resource whose table it goes to (see the module docstring)."""
    roots = plan(resources)
    stop = threading.Event()
    with ThreadPoolExecutor(workers, thread_name_prefix="lakeload-extract") as pool:
        run = _Run(context_for, pool, workers)
        parallel = [r for r in roots if r.resource.parallelized]
        feed: queue.Queue[tuple[_Node, Any]] = queue.Queue(maxsize=64)
        threads = [_start(node, context_for, feed, stop) for node in parallel]
        try:
            for node in roots:
                if node.resource.parallelized:
                    continue
                context = context_for(node.resource)
                plain = node.selected and not node.children  # the common case, without per-item generators
                for item in iterate_in(context, node.resource.iterate(context)):
                    if plain and not isinstance(item, Deferred):
                        yield node.resource, item
                    else:
                        yield from run.emit(node, item)
                    if run.pending:
                        yield from run.ready(block=False)
            ended = 0
            while ended < len(threads):
                node, item = feed.get()
                if item is _END:
                    ended += 1
                elif isinstance(item, _Failed):
                    raise item.error
                else:
                    yield from run.emit(node, item)
                    yield from run.ready(block=False)
            yield from run.ready(block=True)
        finally:
            stop.set()
            for pending in run.pending:
                pending.future.cancel()


def _start(node: _Node, context_for: Callable[[Resource], ExtractContext | None],
           feed: queue.Queue[tuple[_Node, Any]], stop: threading.Event) -> threading.Thread:
    def produce() -> None:
        context = context_for(node.resource)
        try:
            for item in iterate_in(context, node.resource.iterate(context)):
                if not _put(feed, (node, item), stop):
                    return  # the extract stopped
        except BaseException as exc:  # handed to the extract, which raises it
            _put(feed, (node, _Failed(exc)), stop)
            return
        _put(feed, (node, _END), stop)

    thread = threading.Thread(target=produce, name=f"lakeload-resource-{node.resource.name}", daemon=True)
    thread.start()
    return thread


def _put(feed: queue.Queue[tuple[_Node, Any]], entry: tuple[_Node, Any], stop: threading.Event) -> bool:
    """Put `entry` (waiting while the queue is full); False when the extract stopped first."""
    while not stop.is_set():
        try:
            feed.put(entry, timeout=0.1)
            return True
        except queue.Full:
            continue
    return False

"""One extract's resources evaluated as dlt's pipe graph, in dlt's order.

Transformers hang under the resources that feed them. Every parent is iterated **once**, however many
transformers it feeds and whether or not it is selected itself; its items go to its own table (when selected)
and to each transformer. A parent is matched by name too: within one extract a name is one resource (as
in a dlt source), so `data_from=pages` and a selected `pages` share one iteration.

Items are taken from the resources, the transformers' calls and the forks (a parent's item handed to its table
and transformers) in dlt's order, round robin by default (`lakeload.extract.pipe_order`, `[extract]
next_item_mode`): the same rows reach a table in the same order as with dlt.

Calls deferred with `lakeload.defer` (and every call of a `parallelized` transformer) run in a thread
pool of `workers` threads; their items are written in the order the calls were made (dlt's as they complete).
`parallelized` resources are iterated in their own threads while the others run. Items are only ever written
from the calling thread; `lakeload.current` state works in every thread.

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
details {'id': 1, 'detail': 10}
pages [{'id': 1}, {'id': 2}]
details {'id': 3, 'detail': 30}
pages [{'id': 3}]
details {'id': 2, 'detail': 20}
"""

from __future__ import annotations

import functools
import inspect
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from lakeload.common.context import call_in, iterate_in
from lakeload.extract import pipe_order
from lakeload.extract.context import ExtractContext
from lakeload.extract.incremental import Incremental
from lakeload.extract.incremental.binding import bind_resource, filter_items
from lakeload.extract.pipe_order import Scheduler
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


@dataclass(eq=False)
class _Node:
    resource: Resource
    selected: bool
    children: list[_Node] = field(default_factory=list)
    parent: _Node | None = None


@dataclass
class _Failed:
    error: BaseException


def _nodes(resources: list[Resource]) -> tuple[list[_Node], dict[int, _Node]]:
    """The roots of the graph of `resources` (selected) and their parents (only fed to transformers), and the node
    of each resource given."""
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
        node.parent = node_for(same_name if same_name is not None and same_name is not res else parent, False)
        node.parent.children.append(node)
        return node

    for res in resources:
        node_for(res, True)
    return roots, nodes


def plan(resources: list[Resource]) -> list[_Node]:
    """The roots of the graph of `resources` (selected) and their parents (only fed to transformers)."""
    return _nodes(resources)[0]


def dlt_order(resources: list[Resource]) -> tuple[list[_Node], dict[int, list[_Node]]]:
    """dlt's heads (in the order its pipe iterator adds them) and the targets of each fork (by the feeding node's
    id, in dlt's order: the resources taken last first, a selected feeding resource itself after its first child)."""
    _, nodes = _nodes(resources)
    heads: list[_Node] = []
    forks: dict[int, list[_Node]] = {}
    for res in reversed(resources):
        node: _Node | None = nodes[id(res)]
        while node is not None and node.parent is not None:
            targets = forks.setdefault(id(node.parent), [])
            for target in (node, node.parent) if node.parent.selected else (node,):
                if target not in targets:
                    targets.append(target)
            node = node.parent
        if node is not None and node not in heads:
            heads.append(node)
    return heads, forks


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


def dag(resources: list[Resource]) -> list[tuple[str, str]]:
    """dlt's extract DAG of `resources`: `(parent, resource)` for each resource an extract iterates, a resource
    that is fed by none its own parent.

    >>> import lakeload
    >>> pages = lakeload.resource([[1, 2]], name="pages")
    >>> dag([pages, pages | lakeload.transformer(lambda page: page, name="rows")])
    [('pages', 'pages'), ('pages', 'rows')]
    """
    edges: list[tuple[str, str]] = []

    def walk(node: _Node, parent: str) -> None:
        edges.append((parent, node.resource.name))
        for child in node.children:
            walk(child, node.resource.name)

    for root in plan(resources):
        walk(root, root.resource.name)
    return edges


@dataclass
class _Pending:
    node: _Node
    future: Future[list[Any]]
    stepped: bool  # a transformer's call: its items go through the transformer's steps


@dataclass(frozen=True)
class _Fork:
    """A generator of items handed on from `node` (dlt's fork): each is `(target, item)`."""

    node: _Node


class _Run:
    """One evaluation: items taken from generators in dlt's order (`pipe_order.Scheduler`), handed to tables and
    transformers; deferred calls in the pool."""

    def __init__(
        self, context_for: Callable[[Resource], ExtractContext | None], pool: ThreadPoolExecutor, workers: int,
        scheduler: Scheduler[_Node | _Fork], forks: dict[int, list[_Node]],
    ) -> None:
        self.context_for = context_for
        self.pool = pool
        self.max_pending = 4 * workers  # deferred calls waiting before the oldest is waited for
        self.pending: deque[_Pending] = deque()
        self.lives: dict[int, Incremental[Any] | None] = {}  # each transformer's live incremental, bound once
        self.scheduler, self.forks = scheduler, forks

    def take(self, owner: _Node | _Fork, item: Any) -> Iterator[tuple[Resource, Any]]:
        """An item a generator gave: an item of a resource, or of a fork (`(target, item)`)."""
        if isinstance(owner, _Fork):
            target, item = item
            if target is owner.node:
                yield owner.node.resource, item
            else:
                yield from self._feed(target, item)
        else:
            yield from self.emit(owner, item)

    def emit(self, node: _Node, item: Any) -> Iterator[tuple[Resource, Any]]:
        """`item` of `node` to its table and to each of its transformers (through a fork, as dlt)."""
        if isinstance(item, Deferred):  # a resource yielded a deferred call: its items are the resource's
            self._submit(node, item, stepped=False)
            return
        targets = self.forks.get(id(node))
        if not targets:
            if node.selected:
                yield node.resource, item
        else:
            self.scheduler.add(_Fork(node), ((target, item) for target in targets))

    def _feed(self, child: _Node, item: Any) -> Iterator[tuple[Resource, Any]]:
        res = child.resource
        context = self.context_for(res)
        if res.parallelized:  # each call in the pool, as a deferred one
            self._submit(child, Deferred(functools.partial(res.call_transform, item)), stepped=True)
            return
        returned = call_in(context, res.call_transform, item)
        if isinstance(returned, Deferred):
            self._submit(child, returned, stepped=True)
        elif inspect.isgenerator(returned) or inspect.isasyncgen(returned):  # a generator of the scheduler, as dlt
            self.scheduler.add(child, self._stepped(child, iterate_in(context, outputs(returned))))
        else:
            for out in self._stepped(child, iterate_in(context, outputs(returned))):
                yield from self.emit(child, out)

    def _stepped(self, node: _Node, items: Iterator[Any]) -> Iterator[Any]:
        """A transformer's items through its steps and its `incremental=` hint (it takes no `add_limit`)."""
        steps = tuple(s for s in node.resource.steps if not isinstance(s, LimitStep))
        stepped = apply_steps(items, steps)
        live = self._live(node.resource)
        yield from filter_items(stepped, live, None) if live is not None else stepped

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
            for item in self._stepped(done.node, iter(items)) if done.stepped else items:
                yield from self.emit(done.node, item)

    def alone(self, node: _Node, scheduler: Scheduler[_Node | _Fork]) -> Iterator[tuple[Resource, Any]]:
        """The items of the one generator of `scheduler` (a resource feeding none), as `drain` takes them."""
        for item in scheduler.remaining(node):
            if item is None:  # dlt skips None items
                continue
            if isinstance(item, Deferred):
                self._submit(node, item, stepped=False)
            else:
                yield node.resource, item
            if self.pending:
                yield from self.ready(block=False)

    def drain(self) -> Iterator[tuple[Resource, Any]]:
        """Every item of the scheduler's generators and of the deferred calls, in dlt's order."""
        while True:
            taken = self.scheduler.next()
            if taken is not None:
                yield from self.take(*taken)
                if self.pending:
                    yield from self.ready(block=False)
            elif self.pending:
                yield from self.ready(block=True)
            elif not self.scheduler:
                return


def evaluate(
    resources: list[Resource], context_for: Callable[[Resource], ExtractContext | None] = lambda r: None,
    workers: int = WORKERS, next_item_mode: str | None = None,
) -> Iterator[tuple[Resource, Any]]:
    """Every item of `resources` with the resource whose table it goes to (see the module docstring), in dlt's
    order for `next_item_mode` (`[extract] next_item_mode` when None; see `lakeload.extract.pipe_order`)."""
    heads, forks = dlt_order(resources)
    scheduler: Scheduler[_Node | _Fork] = Scheduler(pipe_order.next_item_mode(next_item_mode),
                                                    pipe_order.max_parallel_items())
    stop = threading.Event()
    with ThreadPoolExecutor(workers, thread_name_prefix="lakeload-extract") as pool:
        run = _Run(context_for, pool, workers, scheduler, forks)
        feed: queue.Queue[tuple[_Node, Any]] = queue.Queue(maxsize=64)
        threads = [_start(node, context_for, feed, stop) for node in heads if node.resource.parallelized]
        try:
            for node in heads:
                if not node.resource.parallelized:
                    context = context_for(node.resource)
                    scheduler.add(node, iterate_in(context, node.resource.iterate(context)), head=True)
            if len(heads) == 1 and not forks and not threads:  # one plain resource: its order, without the turns
                yield from run.alone(heads[0], scheduler)
            yield from run.drain()
            ended = 0
            while ended < len(threads):
                node, item = feed.get()
                if item is _END:
                    ended += 1
                elif isinstance(item, _Failed):
                    raise item.error
                else:
                    yield from run.emit(node, item)
                    yield from run.drain()
            yield from run.drain()
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

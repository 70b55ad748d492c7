"""Resources: named streams of items with table hints and pipe steps, as dlt's `DltResource`.

Declare them with the decorators in `lakeload.extract.decorators` (`@lakeload.resource`, `@lakeload.transformer`).

>>> Resource("users", [{"id": 1}]).table_name
'users'
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from lakeload.errors import ExtractError
from lakeload.extract.context import ExtractContext
from lakeload.extract.hint_types import ColumnsHint, NestedHints
from lakeload.extract.hints import TableHints, TableNameHint, merged_hints
from lakeload.extract.incremental import Incremental
from lakeload.extract.incremental.binding import IncrementalCall, bind_resource, filter_items
from lakeload.extract.mark import MarkedItem
from lakeload.extract.pipes import FilterStep, LimitStep, MapStep, Step, YieldMapStep, apply_steps, sync_items
from lakeload.extract.validation import ModelValidator, model_contract
from lakeload.schema.typing import TColumnSchema

__all__ = ["Resource", "TableHints", "TableNameHint"]
logger = logging.getLogger("lakeload.extract")


@dataclass
class Resource:
    """A named stream of items (dicts, lists of dicts, Arrow tables, pandas or Spark DataFrames).

    With `takes_context=True`, `data` is a function called with the extract's `ExtractContext`
    (the resource's state, the pipeline's Spark session; see `lakeload.extract.context`).
    """

    name: str
    data: Any
    hints: TableHints = field(default_factory=TableHints)
    selected: bool = True
    takes_context: bool = False
    steps: tuple[Step, ...] = ()  # add_map, add_filter, add_yield_map, add_limit (see `lakeload.extract.pipes`)
    parent: Resource | None = None  # a transformer's `data_from`
    transform: Callable[[Any], Any] | None = None  # a transformer's function of one parent item
    parallelized: bool = False  # iterated in its own thread (a transformer: each call in the extract's pool)
    factory: Callable[..., Any] | None = field(default=None, repr=False, compare=False)  # a decorated function
    incremental_hint: Incremental[Any] | None = field(default=None, repr=False)  # `incremental=` of @resource/apply_hints
    section: str | None = None  # config section of a decorated function (its module's name): `sources.<section>`

    def __call__(self, *args: Any, **kwargs: Any) -> Resource:
        """A copy bound to these arguments of the decorated function (dlt's call of a parametrized resource).

        Hints and steps given to the decorated resource carry over to the copy.
        """
        fn = self.factory
        if fn is None:
            raise ExtractError(
                f"Resource '{self.name}' is already bound to its data and cannot be called again: call the decorated "
                "function once, or use the resource as it is."
            )
        if self.is_transformer:
            return replace(self, transform=lambda item: fn(item, *args, **kwargs), factory=None)
        if isinstance(self.data, IncrementalCall):  # the incremental argument is bound at extract
            return replace(self, data=IncrementalCall(fn, args, kwargs), factory=None)
        return replace(self, data=lambda: fn(*args, **kwargs), factory=None)

    @property
    def is_transformer(self) -> bool:
        return self.transform is not None

    def apply_hints(self, **hints: Any) -> Resource:
        """Change table hints in place (`table_name`, `write_disposition`, `primary_key`, `columns`, ...).

        `incremental=lakeload.sources.incremental(...)` (or a dict of its settings) makes the resource incremental.
        """
        if hints.get("incremental") is not None:
            self.incremental_hint = Incremental.ensure_instance(hints["incremental"])
        hints.pop("incremental", None)
        self.hints = merged_hints(self.hints, hints)
        return self

    def with_hints(self, **hints: Any) -> Resource:
        return replace(self, hints=self.hints).apply_hints(**hints)

    def with_name(self, name: str) -> Resource:
        """A copy under another name (dlt's `with_name`); the name keys the resource's state.

        >>> from lakeload import resource
        >>> resource([{"id": 1}], name="users").with_name("people").name
        'people'
        """
        return replace(self, name=name)

    @property
    def incremental(self) -> Incremental[Any] | None:
        """The resource's incremental: the `incremental=` hint, else its function argument's (None without one)."""
        if self.incremental_hint is not None or not isinstance(self.data, IncrementalCall):
            return self.incremental_hint
        return self.data.configured(None)

    @incremental.setter
    def incremental(self, value: Incremental[Any] | None) -> None:
        self.incremental_hint = None if value is None else Incremental.ensure_instance(value)

    @property
    def table_name(self) -> TableNameHint:
        """The table hint: a name, a function of the item, or the resource's name when none was given."""
        return self.hints.table_name if self.hints.table_name is not None else self.name

    @table_name.setter
    def table_name(self, value: TableNameHint) -> None:
        self.apply_hints(table_name=value)

    @property
    def write_disposition(self) -> str:
        return self.hints.write_disposition

    @write_disposition.setter
    def write_disposition(self, value: str) -> None:
        self.apply_hints(write_disposition=value)

    @property
    def columns(self) -> dict[str, TColumnSchema] | None:
        """The column hints, each with its `name`."""
        columns = self.hints.columns
        return None if columns is None else {name: {**c, "name": name} for name, c in columns.items()}

    @columns.setter
    def columns(self, value: ColumnsHint | None) -> None:
        self.apply_hints(columns=value)

    @property
    def primary_key(self) -> list[str] | None:
        return None if self.hints.primary_key is None else list(self.hints.primary_key)

    @primary_key.setter
    def primary_key(self, value: str | list[str] | None) -> None:
        self.apply_hints(primary_key=value if value is not None else "")

    @property
    def merge_key(self) -> list[str] | None:
        return None if self.hints.merge_key is None else list(self.hints.merge_key)

    @merge_key.setter
    def merge_key(self, value: str | list[str] | None) -> None:
        self.apply_hints(merge_key=value if value is not None else "")

    @property
    def nested_hints(self) -> dict[str | tuple[str, ...], NestedHints] | None:
        return self.hints.nested_hints

    @nested_hints.setter
    def nested_hints(self, value: dict[str | tuple[str, ...], NestedHints] | None) -> None:
        self.apply_hints(nested_hints=value if value is not None else {})

    @property
    def max_table_nesting(self) -> int | None:
        return self.hints.max_table_nesting

    @max_table_nesting.setter
    def max_table_nesting(self, value: int | None) -> None:
        self.apply_hints(max_table_nesting=value)

    def add_map(self, f: Callable[[Any], Any], insert_at: int | None = None) -> Resource:
        """Replace every record (or whole Arrow/DataFrame item) by `f(record)`; returns the resource."""
        return self._add_step(MapStep(f), insert_at)

    def add_filter(self, f: Callable[[Any], bool], insert_at: int | None = None) -> Resource:
        """Keep only the records (or items) for which `f` is true; returns the resource."""
        return self._add_step(FilterStep(f), insert_at)

    def add_yield_map(self, f: Callable[[Any], Iterable[Any]], insert_at: int | None = None) -> Resource:
        """Replace every record (or item) by what the generator `f(record)` yields; returns the resource."""
        return self._add_step(YieldMapStep(f), insert_at)

    def _add_step(self, step: MapStep | FilterStep | YieldMapStep, insert_at: int | None) -> Resource:
        """Add a step; `insert_at` counts as dlt's does, the resource's own data being step 0."""
        if insert_at is None or insert_at > len(self.steps):
            self.steps = (*self.steps, step)
        elif insert_at > 0:
            self.steps = (*self.steps[: insert_at - 1], step, *self.steps[insert_at - 1 :])
        elif self.is_transformer:  # before the transformer's function: on the items it is fed
            self.transform = _before(step, self.transform)  # type: ignore[arg-type]
        else:
            raise ExtractError(
                f"Resource '{self.name}': insert_at=0 would put a step before the data itself; use insert_at=1 or more "
                "(only a transformer can take a step before its function)."
            )
        return self

    def add_limit(self, max_items: int | None = None, max_time: float | None = None, count_rows: bool = False) -> Resource:
        """Stop after `max_items` yields (or rows, with `count_rows`) or `max_time` seconds, as dlt's `add_limit`.

        As in dlt a limit on a transformer has no effect (it must see all its parent's items): a warning says so.
        """
        if self.is_transformer:
            logger.warning("add_limit on transformer '%s' has no effect: set the limit on the resource that feeds it.", self.name)
            return self
        kept = tuple(s for s in self.steps if not isinstance(s, LimitStep))
        self.steps = (*kept, LimitStep(max_items, max_time, count_rows))
        return self

    def parallelize(self) -> Resource:
        """Iterate this resource in its own thread (a transformer: run each call in the extract's thread pool)."""
        self.parallelized = True
        return self

    def __or__(self, other: Any) -> Resource:
        """`resource | transformer` feeds the transformer; `resource | function` maps (or yield-maps) the items."""
        if isinstance(other, Resource):
            return other.fed_by(self)
        if callable(other):
            return self.add_yield_map(other) if inspect.isgeneratorfunction(other) else self.add_map(other)
        raise ExtractError(f"Cannot pipe resource '{self.name}' into {type(other).__name__}: use a transformer or a function.")

    def __ror__(self, data: Any) -> Resource:
        """`[items] | transformer`: the transformer fed by plain data."""
        return self.fed_by(Resource(f"iter_{self.name}", data))

    def fed_by(self, parent: Resource) -> Resource:
        """This transformer with `parent` as its `data_from`."""
        if not self.is_transformer:
            raise ExtractError(f"Resource '{self.name}' is not a transformer: only transformers take data from another resource.")
        return replace(self, parent=parent)

    def table_name_for(self, item: Any) -> str:
        hint = self.table_name
        return hint(item) if callable(hint) else hint  # type: ignore[return-value]

    def __iter__(self) -> Iterator[Any]:
        """The resource's items outside a pipeline, as dlt's `list(resource)`: each page (a list the resource or its
        steps yielded) gives its items one by one, a marked item its data; `add_limit` still counts pages.

        >>> from lakeload import resource
        >>> @resource
        ... def pages():
        ...     yield [{"id": 1}, {"id": 2}]
        ...     yield [{"id": 3}]
        >>> list(pages())
        [{'id': 1}, {'id': 2}, {'id': 3}]
        """
        if not self.is_transformer:
            for item in self.iterate():
                yield from page_items(item)
            return
        # the graph (`lakeload.extract.graph`) evaluates resources and is built on this module: found by name at
        # call time, as the job clients are (`destinations.reference.DEFAULT_JOB_CLIENTS`)
        evaluate = importlib.import_module("lakeload.extract.graph").evaluate
        for _res, item in evaluate([self]):  # dlt's order: its parents' items and its calls take turns
            yield from page_items(item)

    def iterate(self, context: ExtractContext | None = None) -> Iterator[Any]:
        """The resource's items; a resource that takes a context gets `context` (or an empty one).

        A transformer iterates its parent here; an extract instead evaluates the whole graph of its resources
        (`lakeload.extract.graph`), so that a parent feeding several transformers is iterated once.
        """
        if self.is_transformer:
            yield from apply_steps(self._transformed(), self.steps)
            return
        data = self.data
        context = context or ExtractContext(resource_name=self.name)
        live, data = bind_resource(self.name, data, self.incremental_hint, self.hints.raw_primary_key, context.resource_state)
        if self.takes_context:
            data = data(context)
        elif callable(data) and not inspect.isgenerator(data):
            data = data()
        if _is_single_item(data):
            data = iter([data])  # one item (a record, an Arrow table, a DataFrame), not a page
        elif not isinstance(data, Iterable) and not inspect.isasyncgen(data):
            raise ExtractError(f"Resource '{self.name}' produced {type(data).__name__}, which is not iterable.")
        items = sync_items(data)
        if self.hints.model is not None:  # validates before the pipe steps, as dlt's validator does
            contract = model_contract(self.hints.model, self.hints.schema_contract)
            table = self.hints.table_name if isinstance(self.hints.table_name, str) else self.name
            items = ModelValidator(self.hints.model, contract, table).validate(items)
        if live is None:
            yield from apply_steps(items, self.steps)
            return
        at = next((i for i, step in enumerate(self.steps) if isinstance(step, LimitStep)), len(self.steps))
        filtered = filter_items(apply_steps(items, self.steps[:at]), live, getattr(data, "close", None))
        yield from apply_steps(filtered, self.steps[at:])  # the incremental runs before add_limit, as in dlt

    def _transformed(self) -> Iterator[Any]:
        for item in self.feeding_parent().iterate():
            yield from outputs(self.call_transform(item))

    def feeding_parent(self) -> Resource:
        """The parent of this transformer; a clear error when it has none."""
        if self.parent is None:
            raise ExtractError(
                f"Transformer '{self.name}' has no data: pipe a resource into it (`resource | {self.name}`) "
                "or give it `data_from=`."
            )
        return self.parent

    def call_transform(self, item: Any) -> Any:
        """The transformer's function on one parent item: a generator, one item, None, or a deferred call."""
        assert self.transform is not None
        return self.transform(item)


def page_items(item: Any) -> Iterator[Any]:
    """The items of what a resource yielded, as dlt's iteration hands them out: a page's items (one level), a marked
    item's data (its marks are for extract), anything else as it is.

    >>> list(page_items([[1, 2], 3])), list(page_items({"id": 1}))
    ([[1, 2], 3], [{'id': 1}])
    """
    if isinstance(item, MarkedItem):
        item = item.data
    if isinstance(item, list):
        yield from item
    else:
        yield item


def _before(step: MapStep | FilterStep | YieldMapStep, transform: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def stepped(item: Any) -> Iterator[Any]:
        for one in step.apply(item):
            yield from outputs(transform(one))

    return stepped


def outputs(returned: Any) -> Iterator[Any]:
    """The items a transformer call gave: what its generator yields, its one returned item, or none for `None`.
    A deferred call (`lakeload.defer`) is evaluated in place."""
    while callable(returned) and not isinstance(returned, Resource):
        returned = returned()
    if inspect.isgenerator(returned) or inspect.isasyncgen(returned):
        yield from sync_items(returned)
    elif returned is not None:
        yield returned


def _is_single_item(data: Any) -> bool:
    if isinstance(data, (dict, str, bytes)):
        return True
    module = type(data).__module__
    return module.startswith(("pyspark", "pyarrow", "pandas"))

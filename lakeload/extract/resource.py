"""Resources: named streams of items with table hints and pipe steps, as dlt's `DltResource`.

Declare them with the decorators in `lakeload.extract.decorators` (`@lakeload.resource`, `@lakeload.transformer`).

>>> Resource("users", [{"id": 1}]).table_name
'users'
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from lakeload.errors import ExtractError
from lakeload.extract.context import ExtractContext
from lakeload.extract.hints import TableHints, TableNameHint
from lakeload.extract.incremental import Incremental
from lakeload.extract.incremental.binding import IncrementalCall, bind_resource, filter_items
from lakeload.extract.pipes import FilterStep, LimitStep, MapStep, Step, YieldMapStep, apply_steps, sync_items

__all__ = ["Resource", "TableHints", "TableNameHint"]

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
    incremental_hint: Incremental[Any] | None = field(default=None, repr=False)  # `incremental=` of @resource/apply_hints

    def apply_hints(self, **hints: Any) -> Resource:
        """Change table hints in place (`table_name`, `write_disposition`, `primary_key`, `columns`, ...).

        `incremental=lakeload.sources.incremental(...)` (or a dict of its settings) makes the resource incremental.
        """
        if hints.get("incremental") is not None:
            self.incremental_hint = Incremental.ensure_instance(hints["incremental"])
        hints.pop("incremental", None)
        merged = {k: v for k, v in vars(self.hints).items()}
        merged.update({k: v for k, v in hints.items() if v is not None})
        self.hints = TableHints(**merged)
        return self

    def with_hints(self, **hints: Any) -> Resource:
        return replace(self, hints=self.hints).apply_hints(**hints)

    def with_name(self, name: str) -> Resource:
        """A copy under another name (dlt's `with_name`); the name keys the resource's state.

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
    def columns(self) -> dict[str, dict[str, Any]] | None:
        """The column hints, each with its `name`."""
        columns = self.hints.columns
        return None if columns is None else {name: {**c, "name": name} for name, c in columns.items()}

    @columns.setter
    def columns(self, value: dict[str, dict[str, Any]] | None) -> None:
        self.apply_hints(columns=value)

    @property
    def max_table_nesting(self) -> int | None:
        return self.hints.max_table_nesting

    @max_table_nesting.setter
    def max_table_nesting(self, value: int | None) -> None:
        self.apply_hints(max_table_nesting=value)

    def add_map(self, f: Callable[[Any], Any]) -> Resource:
        """Replace every record (or whole Arrow/DataFrame item) by `f(record)`; returns the resource."""
        self.steps = (*self.steps, MapStep(f))
        return self

    def add_filter(self, f: Callable[[Any], bool]) -> Resource:
        """Keep only the records (or items) for which `f` is true; returns the resource."""
        self.steps = (*self.steps, FilterStep(f))
        return self

    def add_yield_map(self, f: Callable[[Any], Iterable[Any]]) -> Resource:
        """Replace every record (or item) by what the generator `f(record)` yields; returns the resource."""
        self.steps = (*self.steps, YieldMapStep(f))
        return self

    def add_limit(self, max_items: int | None = None, max_time: float | None = None, count_rows: bool = False) -> Resource:
        """Stop after `max_items` yields (or rows, with `count_rows`) or `max_time` seconds, as dlt's `add_limit`."""
        kept = tuple(s for s in self.steps if not isinstance(s, LimitStep))
        self.steps = (*kept, LimitStep(max_items, max_time, count_rows))
        return self

    def __or__(self, other: Any) -> Resource:
        """`resource | transformer` feeds the transformer; `resource | function` maps (or yield-maps) the items."""
        if getattr(other, "__lakeload_transformer__", False) and not isinstance(other, Resource):
            other = other()
        if isinstance(other, Resource):
            return other.fed_by(self)
        if callable(other):
            return self.add_yield_map(other) if inspect.isgeneratorfunction(other) else self.add_map(other)
        raise ExtractError(f"Cannot pipe resource '{self.name}' into {type(other).__name__}: use a transformer or a function.")

    def fed_by(self, parent: Resource) -> Resource:
        """This transformer with `parent` as its `data_from`."""
        feed = getattr(self.data, "__lakeload_feed__", None)
        if feed is None:
            raise ExtractError(f"Resource '{self.name}' is not a transformer: only transformers take data from another resource.")
        return replace(self, data=feed(parent))

    def table_name_for(self, item: Any) -> str:
        hint = self.hints.table_name
        if hint is None:
            return self.name
        return hint(item) if callable(hint) else hint

    def __iter__(self) -> Iterator[Any]:
        return self.iterate()

    def iterate(self, context: ExtractContext | None = None) -> Iterator[Any]:
        """The resource's items; a resource that takes a context gets `context` (or an empty one)."""
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
        if live is None:
            yield from apply_steps(sync_items(data), self.steps)
            return
        at = next((i for i, step in enumerate(self.steps) if isinstance(step, LimitStep)), len(self.steps))
        close = getattr(data, "close", None) if not hasattr(self.data, "__lakeload_feed__") else None  # not a transformer
        filtered = filter_items(apply_steps(sync_items(data), self.steps[:at]), live, close)
        yield from apply_steps(filtered, self.steps[at:])  # the incremental runs before add_limit, as in dlt


def _is_single_item(data: Any) -> bool:
    if isinstance(data, (dict, str, bytes)):
        return True
    module = type(data).__module__
    return module.startswith(("pyspark", "pyarrow", "pandas"))

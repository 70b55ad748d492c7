"""Resources and sources: what users declare, with dlt's decorators and hints.

>>> @resource(write_disposition="append", primary_key="id")
... def users():
...     yield [{"id": 1, "name": "Alice"}]
>>> users().name
'users'
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from lakeload.destinations.impl.filesystem.safe_paths import check_schema_name
from lakeload.errors import ExtractError
from lakeload.extract.context import ExtractContext
from lakeload.extract.pipes import FilterStep, LimitStep, MapStep, Step, YieldMapStep, apply_steps, sync_items

WRITE_DISPOSITIONS = ("append", "replace", "merge", "skip")
DELTA_MERGE_STRATEGIES = ("upsert", "insert-only")
TableNameHint = str | Callable[[Any], str] | None


@dataclass
class TableHints:
    """Hints a resource gives the table it fills (dlt's names)."""

    table_name: TableNameHint = None
    write_disposition: str = "append"
    primary_key: Sequence[str] | None = None
    merge_key: Sequence[str] | None = None
    columns: dict[str, dict[str, Any]] | None = None
    table_format: str | None = None
    file_format: str | None = None
    max_table_nesting: int | None = None
    merge_strategy: str | None = None

    def __post_init__(self) -> None:
        disposition = self.write_disposition
        if isinstance(disposition, dict):
            self.merge_strategy = disposition.get("strategy", self.merge_strategy)
            disposition = disposition.get("disposition", "append")
        if disposition not in WRITE_DISPOSITIONS:
            raise ExtractError(
                f"Unknown write_disposition {self.write_disposition!r}; use one of {', '.join(WRITE_DISPOSITIONS)}."
            )
        self.write_disposition = disposition
        if isinstance(self.primary_key, str):
            self.primary_key = [self.primary_key]
        if isinstance(self.merge_key, str):
            self.merge_key = [self.merge_key]
        if isinstance(self.columns, Sequence) and not isinstance(self.columns, (str, dict)):
            self.columns = {c["name"]: c for c in self.columns}
        self._check_table_format()

    def _check_table_format(self) -> None:
        if self.table_format not in (None, "delta"):
            raise ExtractError(f"Unknown table_format {self.table_format!r}; the filesystem destination supports 'delta'.")
        if self.write_disposition != "merge" or self.table_format != "delta":
            return
        strategy = self.merge_strategy or "upsert"
        if strategy not in DELTA_MERGE_STRATEGIES:
            raise ExtractError(
                f"'{strategy}' merge strategy is not supported for Delta tables. "
                f"Available strategies: {list(DELTA_MERGE_STRATEGIES)}."
            )


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

    def apply_hints(self, **hints: Any) -> Resource:
        """Change table hints in place (`table_name`, `write_disposition`, `primary_key`, `columns`, ...)."""
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
        if self.takes_context:
            data = data(context or ExtractContext(resource_name=self.name))
        elif callable(data) and not inspect.isgenerator(data):
            data = data()
        if _is_single_item(data):
            data = iter([data])  # one item (a record, an Arrow table, a DataFrame), not a page
        elif not isinstance(data, Iterable) and not inspect.isasyncgen(data):
            raise ExtractError(f"Resource '{self.name}' produced {type(data).__name__}, which is not iterable.")
        yield from apply_steps(sync_items(data), self.steps)


def _is_single_item(data: Any) -> bool:
    if isinstance(data, (dict, str, bytes)):
        return True
    module = type(data).__module__
    return module.startswith(("pyspark", "pyarrow", "pandas"))


def resource(
    data: Any = None,
    /,
    name: str | None = None,
    table_name: TableNameHint = None,
    write_disposition: str = "append",
    primary_key: str | Sequence[str] | None = None,
    merge_key: str | Sequence[str] | None = None,
    columns: dict[str, dict[str, Any]] | None = None,
    table_format: str | None = None,
    file_format: str | None = None,
    max_table_nesting: int | None = None,
    selected: bool = True,
) -> Any:
    """Declare a resource, as a decorator on a generator function or directly on data.

    >>> r = resource([{"id": 1}], name="users")
    >>> @resource(table_name="events", write_disposition="replace")
    ... def events(n=3):
    ...     yield from ({"id": i} for i in range(n))
    """
    hints = dict(
        table_name=table_name,
        write_disposition=write_disposition,
        primary_key=primary_key,
        merge_key=merge_key,
        columns=columns,
        table_format=table_format,
        file_format=file_format,
        max_table_nesting=max_table_nesting,
    )

    def decorate(fn: Callable[..., Any]) -> Callable[..., Resource]:
        resource_name = name or fn.__name__

        @functools.wraps(fn)
        def make(*args: Any, **kwargs: Any) -> Resource:
            return Resource(resource_name, lambda: fn(*args, **kwargs), TableHints(**hints), selected)  # type: ignore[arg-type]

        make.__lakeload_resource__ = True  # type: ignore[attr-defined]
        return make

    if data is None:
        return decorate
    if inspect.isfunction(data) and (inspect.isgeneratorfunction(data) or not inspect.signature(data).parameters):
        return decorate(data)
    resource_name = name or getattr(data, "__name__", None) or "content"
    return Resource(resource_name, data, TableHints(**hints), selected)  # type: ignore[arg-type]


def transformer(
    f: Callable[..., Any] | None = None,
    /,
    data_from: Any = None,
    name: str | None = None,
    selected: bool = True,
    **hints: Any,
) -> Any:
    """Declare a transformer: a function of each item another resource yields (dlt's `@transformer`).

    The function gets the parent's item (a record or a page, as yielded) and yields or returns new items; it
    takes the parent from `data_from=`, or from `parent | transformer`. Hints are `resource()`'s.

    >>> @transformer(data_from=users)
    ... def user_details(user):
    ...     yield {"id": user["id"], "details": fetch(user["id"])}
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Resource]:
        resource_name = name or fn.__name__

        @functools.wraps(fn)
        def make(*args: Any, **kwargs: Any) -> Resource:
            def feed(parent: Resource) -> Callable[[], Iterator[Any]]:
                def items() -> Iterator[Any]:
                    for item in parent.iterate():
                        out = fn(item, *args, **kwargs)
                        if inspect.isgenerator(out):
                            yield from out
                        elif out is not None:
                            yield out

                items.__lakeload_feed__ = feed  # type: ignore[attr-defined]
                return items

            def unfed() -> Iterator[Any]:
                raise ExtractError(
                    f"Transformer '{resource_name}' has no data: pipe a resource into it (`resource | {resource_name}`) "
                    "or give it `data_from=`."
                )

            unfed.__lakeload_feed__ = feed  # type: ignore[attr-defined]
            parent = data_from() if getattr(data_from, "__lakeload_resource__", False) else data_from
            data = feed(parent) if isinstance(parent, Resource) else unfed
            return Resource(resource_name, data, TableHints(**hints), selected)

        make.__lakeload_resource__ = True  # type: ignore[attr-defined]
        make.__lakeload_transformer__ = True  # type: ignore[attr-defined]
        return make

    return decorate(f) if f is not None else decorate


@dataclass
class Source:
    """A named group of resources; its name is the schema name."""

    name: str
    resources: dict[str, Resource]
    max_table_nesting: int | None = None

    def with_resources(self, *names: str) -> Source:
        """A copy with only the named resources selected."""
        unknown = [n for n in names if n not in self.resources]
        if unknown:
            raise ExtractError(f"Source '{self.name}' has no resources {unknown}; it has {list(self.resources)}.")
        picked = {n: replace(r, selected=n in names) for n, r in self.resources.items()}
        return Source(self.name, picked, self.max_table_nesting)

    @property
    def selected_resources(self) -> dict[str, Resource]:
        """The resources that extract runs, by name (dlt's mapping)."""
        return {name: r for name, r in self.resources.items() if r.selected}


def source(
    fn: Callable[..., Any] | None = None, /, name: str | None = None, max_table_nesting: int | None = None
) -> Any:
    """Declare a source: a function returning one or more resources.

    >>> @source
    ... def crm():
    ...     return [resource([{"id": 1}], name="users"), resource([{"id": 2}], name="deals")]
    """

    def decorate(f: Callable[..., Any]) -> Callable[..., Source]:
        source_name = check_schema_name(name or f.__name__)  # the schema name: part of file names in the bucket

        @functools.wraps(f)
        def make(*args: Any, **kwargs: Any) -> Source:
            returned = f(*args, **kwargs)
            single = isinstance(returned, Resource) or getattr(returned, "__lakeload_resource__", False)
            items = [returned] if single else list(returned)  # one resource, a list/tuple or a generator of them
            resources: dict[str, Resource] = {}
            for item in items:
                res = item() if callable(item) and getattr(item, "__lakeload_resource__", False) else item
                if not isinstance(res, Resource):
                    res = resource(res, name=f"{source_name}_{len(resources)}")
                resources[res.name] = res
            return Source(source_name, resources, max_table_nesting)

        return make

    return decorate(fn) if fn is not None else decorate


def resources_from(data: Any, default_name: str) -> tuple[list[Resource], str | None]:
    """The selected resources in what `run()`/`extract()` got, and the source name when it was a source.

    >>> resources_from([{"id": 1}], "users")[0][0].name
    'users'
    """
    if isinstance(data, Source):
        return list(data.selected_resources.values()), data.name
    if callable(data) and getattr(data, "__lakeload_resource__", False):
        data = data()
    if isinstance(data, Resource):
        return [data], None
    if isinstance(data, (list, tuple)) and data and all(isinstance(d, (Resource, Source)) for d in data):
        found: list[Resource] = []
        for item in data:
            found.extend(item.selected_resources.values() if isinstance(item, Source) else [item])
        return found, None
    return [resource(data, name=getattr(data, "__name__", None) or default_name)], None

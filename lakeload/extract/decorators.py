"""dlt's decorators: `@resource`, `@transformer` and `@source`.

>>> @resource(write_disposition="append", primary_key="id")
... def users():
...     yield [{"id": 1, "name": "Alice"}]
>>> users().name
'users'
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from lakeload.destinations.impl.filesystem.safe_paths import check_schema_name
from lakeload.errors import ExtractError
from lakeload.extract.hints import TableHints, TableNameHint
from lakeload.extract.incremental import Incremental
from lakeload.extract.incremental.binding import IncrementalCall, incremental_parameter
from lakeload.extract.resource import Resource
from lakeload.extract.source import Source


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
    incremental: Incremental[Any] | dict[str, Any] | None = None,
) -> Any:
    """Declare a resource, as a decorator on a generator function or directly on data.

    `incremental=lakeload.sources.incremental(...)` filters what it yields (and, when the function takes an
    incremental argument, is passed to it), as dlt's; see `lakeload.extract.incremental`.

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

        takes_incremental = incremental_parameter(fn) is not None

        @functools.wraps(fn)
        def make(*args: Any, **kwargs: Any) -> Resource:
            call = IncrementalCall(fn, args, kwargs) if takes_incremental else lambda: fn(*args, **kwargs)
            return Resource(resource_name, call, TableHints(**hints), selected, incremental_hint=hint)  # type: ignore[arg-type]

        make.__lakeload_resource__ = True  # type: ignore[attr-defined]
        return make

    hint = Incremental.ensure_instance(incremental) if incremental is not None else None
    if data is None:
        return decorate
    if inspect.isfunction(data) and (inspect.isgeneratorfunction(data) or not inspect.signature(data).parameters):
        return decorate(data)
    resource_name = name or getattr(data, "__name__", None) or "content"
    return Resource(resource_name, data, TableHints(**hints), selected, incremental_hint=hint)  # type: ignore[arg-type]


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

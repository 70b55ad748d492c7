"""dlt's decorators: `@resource`, `@transformer` and `@source`.

>>> @resource(write_disposition="append", primary_key="id")
... def users():
...     yield [{"id": 1, "name": "Alice"}]
>>> users().name
'users'
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from lakeload.config.inject import configurable_resource, configurable_source, default_section
from lakeload.errors import ExtractError
from lakeload.extract.hint_types import AdditionalTableHints, ColumnsHint, NestedHints, TableReference
from lakeload.extract.hints import TableHints, TableNameHint
from lakeload.extract.incremental import Incremental
from lakeload.extract.incremental.binding import IncrementalCall, incremental_parameter
from lakeload.extract.incremental.incremental import IncrementalArgs
from lakeload.extract.resource import Resource
from lakeload.extract.source import Source
from lakeload.kernel.filesystem.safe_paths import check_schema_name
from lakeload.schema.contract import check_contract
from lakeload.schema.schema import Schema


def resource(
    data: Any = None,
    /,
    name: str | None = None,
    table_name: TableNameHint = None,
    write_disposition: str = "append",
    primary_key: str | Sequence[str] | None = None,
    merge_key: str | Sequence[str] | None = None,
    columns: ColumnsHint | None = None,
    table_format: str | None = None,
    file_format: str | None = None,
    max_table_nesting: int | None = None,
    selected: bool = True,
    parallelized: bool = False,
    references: Sequence[TableReference] | None = None,
    nested_hints: dict[str | tuple[str, ...], NestedHints] | None = None,
    additional_table_hints: AdditionalTableHints | None = None,
    schema_contract: str | dict[str, str] | None = None,
    section: str | None = None,
    incremental: Incremental[Any] | IncrementalArgs | None = None,
    standalone: bool = False,
) -> Any:
    """Declare a resource, as a decorator on a generator function or directly on data.

    The function's arguments may come from configuration (see `lakeload.config.inject`), under
    `sources.<section>.<name>`; `section` defaults to the function's module name.
    `incremental=lakeload.sources.incremental(...)` filters what it yields (and, when the function takes an
    incremental argument, is passed to it), as dlt's; see `lakeload.extract.incremental`. dlt's `standalone=True`
    changes nothing: a decorated function is always called with its arguments to get the resource, as dlt's
    standalone ones are (`users(10)`, `read_json()`).

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
        references=references,
        nested_hints=nested_hints,
        additional_table_hints=additional_table_hints,
        schema_contract=schema_contract,
    )

    def decorate(fn: Callable[..., Any]) -> Resource:
        own_section = section or default_section(fn)
        fn = configurable_resource(fn, name or fn.__name__, section)  # its arguments may come from config
        data = IncrementalCall(fn, (), {}) if incremental_parameter(fn) is not None else fn
        return Resource(
            name or fn.__name__, data, TableHints(**hints), selected, parallelized=parallelized, factory=fn,  # type: ignore[arg-type]
            incremental_hint=hint, section=own_section,
        )

    hint = Incremental.ensure_instance(incremental) if incremental is not None else None
    if data is None:
        return decorate
    if inspect.isfunction(data) and (
        inspect.isgeneratorfunction(data) or inspect.isasyncgenfunction(data) or not inspect.signature(data).parameters
    ):
        return decorate(data)
    resource_name = name or getattr(data, "__name__", None) or "content"
    return Resource(resource_name, data, TableHints(**hints), selected, parallelized=parallelized, incremental_hint=hint)  # type: ignore[arg-type]


def transformer(
    f: Callable[..., Any] | None = None,
    /,
    data_from: Any = None,
    name: str | None = None,
    selected: bool = True,
    parallelized: bool = False,
    section: str | None = None,
    incremental: Incremental[Any] | IncrementalArgs | None = None,
    standalone: bool = False,
    **hints: Any,
) -> Any:
    """Declare a transformer: a function of each item another resource yields (dlt's `@transformer`).

    The function gets the parent's item (a record or a page, as yielded) and yields or returns new items; it
    takes the parent from `data_from=`, or from `parent | transformer`. Hints are `resource()`'s; `standalone` is
    dlt's and changes nothing, as for `resource()`.

    >>> @resource
    ... def users():
    ...     yield {"id": 1}
    ...     yield {"id": 2}
    >>> @transformer(data_from=users)
    ... def user_details(user):
    ...     yield {"id": user["id"], "details": f"details of {user['id']}"}   # e.g. fetch(user["id"])
    >>> list(user_details)
    [{'id': 1, 'details': 'details of 1'}, {'id': 2, 'details': 'details of 2'}]
    """

    unknown = sorted(set(hints) - {f.name for f in dataclasses.fields(TableHints)})
    if unknown:  # (as Python says it of resource(): the hints are resource()'s keyword arguments)
        raise TypeError(f"transformer() got an unexpected keyword argument {unknown[0]!r}")

    def decorate(fn: Callable[..., Any]) -> Resource:
        own_section = section or default_section(fn)
        fn = configurable_resource(fn, name or fn.__name__, section)  # its arguments may come from config
        parent = data_from
        if parent is not None and not isinstance(parent, Resource):
            parent = resource(parent, name=f"iter_{name or fn.__name__}")  # plain data as dlt's `data_from`
        return Resource(
            name or fn.__name__, None, TableHints(**hints), selected, parent=parent, transform=fn,
            parallelized=parallelized, factory=fn,
            incremental_hint=Incremental.ensure_instance(incremental) if incremental is not None else None,
            section=own_section,
        )

    return decorate(f) if f is not None else decorate


def source(
    fn: Callable[..., Any] | None = None, /, name: str | None = None, max_table_nesting: int | None = None,
    schema_contract: str | dict[str, str] | None = None, section: str | None = None,
    root_key: bool | None = None, schema: Schema | None = None,
) -> Any:
    """Declare a source: a function returning one or more resources.

    Its arguments may come from configuration when it is called (see `lakeload.config.inject`), under
    `sources.<section>.<name>`; `section` defaults to the function's module name.
    `schema=lakeload.Schema("crm")` gives the source that schema (and its name); `root_key=True` adds
    `_dlt_root_id` to every nested table, as dlt does.

    >>> @source
    ... def crm():
    ...     return [resource([{"id": 1}], name="users"), resource([{"id": 2}], name="deals")]
    """

    def decorate(f: Callable[..., Any]) -> Callable[..., Source]:
        if schema is not None and name and name != schema.name:
            raise ExtractError(f"Source name '{name}' differs from the name of its schema '{schema.name}': drop name= "
                               "(the schema's name is the source's) or give the Schema the same name.")
        source_name = check_schema_name(name or (schema.name if schema else f.__name__))  # part of bucket file names
        source_section = section or default_section(f)
        f = configurable_source(f, source_name, section)  # its arguments may come from config when it is called

        @functools.wraps(f)
        def make(*args: Any, **kwargs: Any) -> Source:
            returned = f(*args, **kwargs)
            single = isinstance(returned, Resource)
            items = [returned] if single else list(returned)  # one resource, a list/tuple or a generator of them
            resources: dict[str, Resource] = {}
            for item in items:  # a copy of each resource: changing the source's does not change the decorated one
                res = replace(item) if isinstance(item, Resource) else resource(item, name=f"{source_name}_{len(resources)}")
                resources[res.name] = res
            return Source(source_name, resources, max_table_nesting, check_contract(schema_contract), root_key,
                          schema.clone() if schema else None, source_section)

        return make

    return decorate(fn) if fn is not None else decorate


def resources_from(data: Any, default_name: str) -> tuple[list[Resource], str | None]:
    """The selected resources in what `run()`/`extract()` got, and the source name when it was a source.

    >>> resources_from([{"id": 1}], "users")[0][0].name
    'users'
    """
    if isinstance(data, Source):
        return list(data.selected_resources.values()), data.name
    if isinstance(data, Resource):
        return [data], None
    if isinstance(data, (list, tuple)) and data and all(isinstance(d, (Resource, Source)) for d in data):
        found: list[Resource] = []
        for item in data:
            found.extend(item.selected_resources.values() if isinstance(item, Source) else [item])
        return found, None
    return [resource(data, name=getattr(data, "__name__", None) or default_name)], None

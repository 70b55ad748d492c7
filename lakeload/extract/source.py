"""Sources: named groups of resources (the source name is the schema name), and what `run()` accepts as data.

>>> resources_from([{"id": 1}], "users")[0][0].name
'users'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from lakeload.errors import ExtractError
from lakeload.extract.resource import Resource
from lakeload.schema.schema import Schema


@dataclass
class Source:
    """A named group of resources; its name is the schema name."""

    name: str
    resources: dict[str, Resource]
    max_table_nesting: int | None = None
    root_key: bool | None = None  # `_dlt_root_id` in every nested table (stored in the schema, as dlt)
    schema: Schema | None = None  # the `Schema` given to `@source(schema=...)`

    def with_resources(self, *names: str) -> Source:
        """A copy with only the named resources selected."""
        unknown = [n for n in names if n not in self.resources]
        if unknown:
            raise ExtractError(f"Source '{self.name}' has no resources {unknown}; it has {list(self.resources)}.")
        picked = {n: replace(r, selected=n in names) for n, r in self.resources.items()}
        return replace(self, resources=picked)

    @property
    def selected_resources(self) -> dict[str, Resource]:
        """The resources that extract runs, by name (dlt's mapping)."""
        return {name: r for name, r in self.resources.items() if r.selected}


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
    from lakeload.extract.decorators import resource

    return [resource(data, name=getattr(data, "__name__", None) or default_name)], None

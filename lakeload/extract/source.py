"""Sources: named groups of resources (the source name is the schema name), and what `run()` accepts as data.

>>> from lakeload.extract.decorators import resources_from
>>> resources_from([{"id": 1}], "users")[0][0].name
'users'
"""

from __future__ import annotations

from collections.abc import Iterator
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
    schema_contract: str | dict[str, str] | None = None  # the schema's contract (`lakeload.schema.contract`)
    root_key: bool | None = None  # `_dlt_root_id` in every nested table (stored in the schema, as dlt)
    schema: Schema | None = None  # the `Schema` given to `@source(schema=...)`
    section: str | None = None  # config section (`@source(section=...)`, else its module's name): `sources.<section>`

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

    def __getattr__(self, name: str) -> Resource:
        """`source.users` is the source's resource `users`, as in dlt."""
        if name.startswith("__") or name == "resources":
            raise AttributeError(name)
        try:
            return self.resources[name]
        except KeyError:
            raise AttributeError(
                f"Source '{self.name}' has no resource '{name}'; it has {', '.join(self.resources) or 'none'}."
            ) from None

    def __iter__(self) -> Iterator[Any]:
        """The records of the selected resources (pages flattened), each parent iterated once, as dlt's `list(source)`,
        in dlt's order (`lakeload.extract.pipe_order`: by default resources and transformer calls take turns).

        >>> import lakeload
        >>> list(Source("s", {"a": lakeload.resource([1, 2], name="a"), "b": lakeload.resource([10, 20], name="b")}))
        [1, 10, 2, 20]
        """
        from lakeload.extract.graph import evaluate
        from lakeload.extract.resource import page_items

        for _res, item in evaluate(list(self.selected_resources.values())):
            yield from page_items(item)

    def __or__(self, other: Any) -> Resource:
        """`source | transformer`: the transformer is fed every record of the source's selected resources."""
        if not isinstance(other, Resource) or not other.is_transformer:
            raise ExtractError(f"Cannot pipe source '{self.name}' into {type(other).__name__}: use a transformer.")
        return other.fed_by(Resource(self.name, lambda: iter(self)))

    def add_limit(self, max_items: int | None = None, max_time: float | None = None, count_rows: bool = False) -> Source:
        """`add_limit` on every selected resource that is not a transformer (dlt's `DltSource.add_limit`)."""
        for res in self.selected_resources.values():
            if not res.is_transformer:
                res.add_limit(max_items, max_time, count_rows)
        return self

    def parallelize(self) -> Source:
        """Iterate every selected resource in parallel (dlt's `DltSource.parallelize`)."""
        for res in self.selected_resources.values():
            res.parallelize()
        return self

    def clone(self) -> Source:
        """A copy whose resources can be changed without changing this source's."""
        return replace(self, resources={n: replace(r) for n, r in self.resources.items()})

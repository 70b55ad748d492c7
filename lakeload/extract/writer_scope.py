"""Which source a resource's items belong to for dlt's writer settings (`lakeload.config.data_writer`).

dlt extracts each source under `sources.<section>.<source name>`: a `@source`'s own section and name; standalone
resources are gathered into one source named after the schema, in their section when they share one (a decorated
function's module), else in the pipeline's name; plain data (a list, a generator) in the pipeline's name.

>>> import lakeload
>>> users = lakeload.resource([{"id": 1}], name="users")
>>> source_scopes(users, "crm", "my_pipeline")
{'users': ('my_pipeline', 'crm')}
"""

from __future__ import annotations

from typing import Any

from lakeload.extract.resource import Resource
from lakeload.extract.source import Source

SourceScope = tuple[str, str]  # (section, source name): `sources.<section>.<source name>`


def source_scopes(data: Any, schema_name: str, pipeline_name: str) -> dict[str, SourceScope]:
    """Resource name -> the (section, source name) its items are extracted under, as dlt gives them."""
    items = list(data) if isinstance(data, (list, tuple)) and data and isinstance(data[0], (Resource, Source)) else [data]
    scopes: dict[str, SourceScope] = {}
    loose: list[Resource] = []
    for item in items:
        if isinstance(item, Source):
            scope = (item.section or item.name, item.name)
            scopes.update({name: scope for name in item.resources})
        elif isinstance(item, Resource):
            loose.append(item)
    sections = {res.section for res in loose}
    section = sections.pop() if len(sections) == 1 else None
    for res in loose:
        scopes[res.name] = (section or pipeline_name, schema_name)
    return scopes


def scope_of(scopes: dict[str, SourceScope], resource: Resource, schema_name: str, pipeline_name: str) -> SourceScope:
    """The scope of `resource`; one not named in `data` (plain data, a transformer's parent) is the pipeline's."""
    return scopes.get(resource.name, (pipeline_name, schema_name))

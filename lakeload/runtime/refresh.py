"""`refresh=` of `run()`/`extract()`/`pipeline()`: which tables a refresh drops or truncates, and its state reset.

The plan is made on the driver before the resources run, on working copies (the stored schema and the
extract's copy of `state["sources"]`), and travels in the package's manifest: normalize drops the tables from
the package's schema, and load (`lakeload.load.refresh`) empties the bucket before the new files go in. A
failed extract therefore changes nothing.

- `drop_sources`: every table of the source (schema) is dropped, its whole source state is reset;
- `drop_resources`: the tables of the resources being extracted are dropped and their resource state reset;
- `drop_data`: the tables of the resources being extracted are truncated (schema kept), their resource
  state (incremental cursors too) reset.

>>> schema = Schema("my_source")               # the stored schema: users and its nested pets have data
>>> schema.update_table({"name": "users", "resource": "users", "columns": {}, "x-normalizer": {"seen-data": True}})
>>> schema.update_table({"name": "users__pets", "parent": "users", "columns": {}, "x-normalizer": {"seen-data": True}})
>>> sources_state = {"my_source": {"resources": {"users": {"last_id": 10}}}}
>>> plan = plan_refresh(schema, sources_state, "drop_resources", "my_source", ["users"])
>>> [t["name"] for t in plan["dropped_tables"]]
['users__pets', 'users']
>>> sources_state                             # the resource's state is reset
{'my_source': {'resources': {}}}
"""

from __future__ import annotations

import copy
import logging

from lakeload.destinations.impl.filesystem.table_format import PLAIN, format_name
from lakeload.destinations.state_types import SourceState
from lakeload.errors import ConfigurationError
from lakeload.schema.schema import Schema
from lakeload.schema.typing import TTable
from lakeload.storage.manifest import RefreshPlan

logger = logging.getLogger("lakeload.pipeline")
REFRESH_MODES = ("drop_sources", "drop_resources", "drop_data")


def check_refresh(refresh: str | None) -> str | None:
    """`refresh` when it is one of dlt's modes (or None); a `ConfigurationError` naming them otherwise.

    >>> check_refresh("drop_data")
    'drop_data'
    """
    if refresh is not None and refresh not in REFRESH_MODES:
        raise ConfigurationError(
            f"Unknown refresh mode {refresh!r}: pass refresh='drop_sources', 'drop_resources' or 'drop_data' "
            "(or None for no refresh)."
        )
    return refresh


def tables_of_resources(schema: Schema, resource_names: list[str] | None) -> list[TTable]:
    """The data tables the resources made (all resources when `resource_names` is None), each root table followed
    by its nested tables.

    >>> schema = Schema("my_source")
    >>> schema.update_table({"name": "users", "resource": "users", "columns": {}})
    >>> schema.update_table({"name": "users__pets", "parent": "users", "columns": {}})
    >>> schema.update_table({"name": "orders", "resource": "orders", "columns": {}})
    >>> [t["name"] for t in tables_of_resources(schema, ["users"])]
    ['users', 'users__pets']
    """
    tables: list[TTable] = []
    for root in schema.data_tables():
        resource = root.get("resource")
        if root.get("parent") or not resource or (resource_names is not None and resource not in resource_names):
            continue
        tables.extend(schema.nested_tables_of(root["name"]))
    return tables


def _seen_data(table: TTable) -> bool:
    return bool(table.get("x-normalizer", {}).get("seen-data"))


def _reset_state(sources_state: dict[str, SourceState], source_name: str, resource_names: list[str] | None) -> None:
    """dlt's state reset: the named resources' state (all of it and every other source key when None)."""
    source = sources_state.get(source_name)
    if not source:
        return
    resources = source.get("resources", {})
    for name in list(resources) if resource_names is None else resource_names:
        resources.pop(name, None)
    if resource_names is None:
        for key in [k for k in source if k != "resources"]:
            del source[key]


def plan_refresh(
    schema: Schema, sources_state: dict[str, SourceState], refresh: str, source_name: str, resource_names: list[str]
) -> RefreshPlan:
    """The refresh of one extract; `sources_state` (the extract's working copy) is reset in place.

    `resource_names` are the resources being extracted; `drop_sources` drops every resource's tables.
    """
    everything = refresh == "drop_sources"
    tables = tables_of_resources(schema, None if everything else resource_names)
    _reset_state(sources_state, source_name, None if everything else resource_names)
    with_data = [copy.deepcopy(t) for t in reversed(tables) if _seen_data(t)]
    formats = {t["name"]: name for t in with_data if (name := format_name(schema, t["name"])) != PLAIN}
    delta = [n for n, name in formats.items() if name == "delta"]  # read by loads of earlier versions
    if refresh == "drop_data":
        return RefreshPlan(refresh=refresh, dropped_tables=[], truncated_tables=with_data, schema_drops=[],
                           delta_tables=delta, table_formats=formats)
    if not tables:
        logger.info("refresh=%r drops no tables of schema '%s': none is known yet", refresh, schema.name)
    return RefreshPlan(refresh=refresh, dropped_tables=with_data, truncated_tables=[],
                       schema_drops=[t["name"] for t in reversed(tables)], delta_tables=delta, table_formats=formats)


def apply_to_schema(schema: Schema, plan: RefreshPlan | None) -> Schema:
    """`schema` without the tables the plan drops (in place; returned for chaining)."""
    for name in plan["schema_drops"] if plan else []:
        schema.tables.pop(name, None)
    return schema

"""Driver side: the Delta table versions of each completed load, so lakeload's readers see whole loads.

A load commits its Delta tables one by one (`lakeload.delta.commit_order`); until its `_dlt_loads` record
is written, a reader of the latest versions can see part of it. Right before that record, the loader
writes `<dataset>/_lakeload_delta_versions/<schema>__<load_id>.json`: the version of every Delta table of
the schema at that moment, and its table id (`{"load_id": ..., "schema_name": ..., "versions": {"users": 4, ...},
"table_ids": {"users": "4aac0a58-...", ...}}`; the ids tell a table made again from the one recorded, see
`lakeload.delta.log_damage`). A table whose log cannot be read is left out (with a warning).
`pipeline.dataset()` and `pipeline.sql_client()` read each Delta table at the version recorded with the
last completed load of their schema (the greatest load id among the schema's `_dlt_loads` files); a table
without a record there (the last load was made by dlt or an older lakeload, or the table is new) is read
at its latest version.

With one pipeline loading into a dataset at a time these are the versions its load committed (and, for the
tables it did not touch, their last versions); when several pipelines load into one dataset at once, a record
can also hold commits another load made before it.

The record lives in a folder of its own, beside `_dlt_loads`, not in the `_dlt_loads` file: dlt 1.31 reads
that file as a table (an extra field would become an extra column of its `_dlt_loads` view) and never
lists other folders of the dataset than its tables' and its own.

>>> versions_path("events", "1795290972.5539668")
'_lakeload_delta_versions/events__1795290972.5539668.json'
"""

from __future__ import annotations

import json
import logging
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from lakeload.delta.tables import delta_table_names, open_delta_table
from lakeload.destinations.impl.filesystem.state_file_names import parse_loads_name
from lakeload.destinations.impl.filesystem.state_files import LOADS_TABLE, NAME_SEPARATOR
from lakeload.errors import DeltaLogDamagedError

if TYPE_CHECKING:
    from lakeload.destinations.impl.filesystem.client import FilesystemClient
    from lakeload.schema.schema import Schema

VERSIONS_FOLDER = "_lakeload_delta_versions"
logger = logging.getLogger("lakeload.delta")


def versions_path(schema_name: str, load_id: str) -> str:
    """The dataset-relative path of the versions record of one load."""
    return f"{VERSIONS_FOLDER}/{schema_name}{NAME_SEPARATOR}{load_id}.json"


def record_versions(client: FilesystemClient, schema: Schema, load_id: str) -> dict[str, int]:
    """Write the current version of every existing Delta table of `schema` as the record of `load_id`.

    Called by the loader right before the `_dlt_loads` record, so the versions are those the load ends
    with (written again, identically, when a rerun completes the load). Returns the versions recorded.

    >>> record_versions(fs_client, schema, "1795290972.5539668")
    {'users': 3, 'users__pets': 5}
    """
    versions: dict[str, int] = {}
    ids: dict[str, str] = {}
    for name in delta_table_names(schema):
        try:
            table = open_delta_table(client, name)
        except DeltaLogDamagedError as exc:  # not written by this load (it would have failed): it does not block it
            logger.warning("Delta table '%s' is left out of the versions recorded with load %s: %s", name, load_id, exc)
            continue
        if table is not None:
            versions[name] = table.version()
            ids[name] = str(table.metadata().id)
    if versions:
        record = {"load_id": load_id, "schema_name": schema.name, "versions": versions, "table_ids": ids}
        client.write_bytes(versions_path(schema.name, load_id), json.dumps(record, sort_keys=True).encode())
    return versions


def _load_key(load_id: str) -> Decimal:
    try:
        return Decimal(load_id)
    except InvalidOperation:
        return Decimal(-1)


def last_completed_load(client: FilesystemClient, schema_name: str) -> str | None:
    """The greatest load id among the `_dlt_loads` records of `schema_name`; None when it has none."""
    ids = [p.load_id for p in map(parse_loads_name, client.list_dir(LOADS_TABLE)) if p and p.schema_name == schema_name]
    return max(ids, key=_load_key) if ids else None


def _completed_record(client: FilesystemClient, schema_name: str) -> dict[str, Any]:
    """The versions record of the last completed load of `schema_name` (empty when there is none or it is malformed)."""
    load_id = last_completed_load(client, schema_name)
    if load_id is None:
        return {}
    path = versions_path(schema_name, load_id)
    if not client.exists(path):
        return {}
    try:
        record = json.loads(client.read_bytes(path))
        if not isinstance(record, dict) or not isinstance(record.get("versions"), dict):
            raise ValueError("no versions")
        return record
    except (ValueError, TypeError) as exc:
        logger.warning("Ignoring the malformed Delta versions record %s (%s): reading the latest versions", path, exc)
        return {}


def completed_versions(client: FilesystemClient, schema_name: str) -> dict[str, int]:
    """The Delta table versions recorded with the last completed load of `schema_name` (empty: read latest).

    >>> completed_versions(fs_client, "events")
    {'users': 3, 'users__pets': 5}
    """
    try:
        return {str(n): int(v) for n, v in _completed_record(client, schema_name).get("versions", {}).items()}
    except (ValueError, TypeError):
        return {}


def completed_tables(client: FilesystemClient, schema_name: str) -> dict[str, tuple[int, str]]:
    """The (version, table id) of each Delta table recorded with the last completed load of `schema_name`, for
    records that hold table ids (lakeload 0.x records before them hold versions only: left out).

    >>> completed_tables(fs_client, "events")
    {'users': (3, '4aac0a58-7c87-414e-bce6-edcff6166e0c')}
    """
    record = _completed_record(client, schema_name)
    ids = record.get("table_ids")
    if not isinstance(ids, dict):
        return {}
    try:
        return {str(n): (int(v), str(ids[n])) for n, v in record["versions"].items() if n in ids}
    except (ValueError, TypeError):
        return {}

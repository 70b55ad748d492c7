"""Driver side: the Delta table versions of each completed load, so lakeload's readers see whole loads.

A load commits its Delta tables one by one (`lakeload.delta.commit_order`); until its `_dlt_loads` record
is written, a reader of the latest versions can see part of it. Right before that record, the loader
writes `<dataset>/_lakeload_delta_versions/<schema>__<load_id>.json`: the version of every Delta table of
the schema at that moment, and its table id (`{"load_id": ..., "schema_name": ..., "versions": {"users": 4, ...},
"table_ids": {"users": "4aac0a58-...", ...}}`; the ids tell a table made again from the one recorded, see
`lakeload.delta.log_damage`). A table whose log cannot be read is left out (with a warning).
Right after the `_dlt_loads` record, the load merges its record into `<schema>__latest.json` beside them: each
table's greatest recorded version (of the same table id; a table made anew takes the newer id). Load ids order
loads only while clocks do (two hosts, a clock stepped back), table versions always do.
`pipeline.dataset()` and `pipeline.sql_client()` read each Delta table at the version of that latest record,
or of the record of the greatest completed load id when that one is newer (a load that stopped between its
`_dlt_loads` record and the latest record). When the load of the greatest completed id has no record (it was
made by dlt or an older lakeload), or a table is in no record (it is new), the latest version is read.

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
from typing import TYPE_CHECKING, TypedDict

from lakeload.delta.tables import delta_table_names, open_delta_table
from lakeload.destinations.impl.filesystem.state_file_names import parse_loads_name
from lakeload.destinations.impl.filesystem.state_files import LOADS_TABLE, NAME_SEPARATOR
from lakeload.errors import DeltaLogDamagedError

if TYPE_CHECKING:
    from lakeload.destinations.impl.filesystem.client import FilesystemClient
    from lakeload.schema.schema import Schema

VERSIONS_FOLDER = "_lakeload_delta_versions"
LATEST = "latest"  # the name, in place of a load id, of each schema's record of the latest versions
logger = logging.getLogger("lakeload.delta")


class VersionsRecord(TypedDict):
    """The Delta tables of a schema as one completed load left them (or, `latest`, as the latest ones did)."""

    load_id: str
    schema_name: str
    versions: dict[str, int]
    table_ids: dict[str, str]


def versions_path(schema_name: str, load_id: str, folder: str = VERSIONS_FOLDER) -> str:
    """The dataset-relative path of the versions record of one load (or of `LATEST`); `folder`: the format's
    (Iceberg tables record their snapshots' sequence numbers the same way, `lakeload.iceberg.load_versions`)."""
    return f"{folder}/{schema_name}{NAME_SEPARATOR}{load_id}.json"


def record_versions(client: FilesystemClient, schema: Schema, load_id: str) -> VersionsRecord | None:
    """Write the current version and id of every existing Delta table of `schema` as the record of `load_id`.

    Called by the loader right before the `_dlt_loads` record, so the versions are those the load ends
    with (written again, identically, when a rerun completes the load). Returns the record (None: no table yet),
    which `publish_latest` takes once the `_dlt_loads` record is written.

    >>> import tempfile
    >>> import pyarrow as pa
    >>> from deltalake import write_deltalake
    >>> from lakeload.destinations.impl.filesystem.client import FilesystemClient
    >>> from lakeload.destinations.impl.filesystem.configuration import resolve_configuration
    >>> from lakeload.schema.schema import Schema
    >>> tmp = tempfile.TemporaryDirectory()
    >>> fs_client = FilesystemClient(resolve_configuration({"bucket_url": tmp.name}, "filesystem", None), "mydata")
    >>> schema = Schema("events")
    >>> schema.update_table({"name": "users", "table_format": "delta", "columns": {}})
    >>> schema.update_table({"name": "users__pets", "parent": "users", "columns": {}})   # not created yet
    >>> write_deltalake(fs_client.path("users"), pa.table({"id": [1]}))                   # version 0
    >>> write_deltalake(fs_client.path("users"), pa.table({"id": [2]}), mode="append")    # version 1
    >>> record_versions(fs_client, schema, "1795290972.5539668")["versions"]
    {'users': 1}
    >>> fs_client.exists(versions_path("events", "1795290972.5539668"))
    True
    """
    record = VersionsRecord(load_id=load_id, schema_name=schema.name, versions={}, table_ids={})
    for name in delta_table_names(schema):
        try:
            table = open_delta_table(client, name)
        except DeltaLogDamagedError as exc:  # not written by this load (it would have failed): it does not block it
            logger.warning("Delta table '%s' is left out of the versions recorded with load %s: %s", name, load_id, exc)
            continue
        if table is not None:
            record["versions"][name] = table.version()
            record["table_ids"][name] = str(table.metadata().id)
    return write_record(client, record)


def write_record(client: FilesystemClient, record: VersionsRecord, folder: str = VERSIONS_FOLDER) -> VersionsRecord | None:
    """Write a load's record into `folder` (None, nothing written: no table yet)."""
    if not record["versions"]:
        return None
    client.write_bytes(versions_path(record["schema_name"], record["load_id"], folder), json.dumps(record, sort_keys=True).encode())
    return record


def publish_latest(client: FilesystemClient, record: VersionsRecord, folder: str = VERSIONS_FOLDER) -> None:
    """Merge a completed load's record into its schema's latest record (each table's greatest version).

    Two loads that finish at once may each write their merge; the one written last wins, and a table it saw at
    a lower version is read at that version until the next load: readers see whole loads, a little older.
    """
    path = versions_path(record["schema_name"], LATEST, folder)
    latest = _read_record(client, path) or VersionsRecord(load_id="", schema_name=record["schema_name"], versions={}, table_ids={})
    client.write_bytes(path, json.dumps(_newest(latest, record), sort_keys=True).encode())


def _newest(first: VersionsRecord, second: VersionsRecord) -> VersionsRecord:
    """Per table, the greater version of the two records (of the same table id), else `second`'s entry."""
    merged = VersionsRecord(load_id=second["load_id"], schema_name=second["schema_name"],
                            versions=dict(first["versions"]), table_ids=dict(first["table_ids"]))
    for name, version in second["versions"].items():
        same = merged["table_ids"].get(name) == second["table_ids"].get(name)
        if not same or merged["versions"].get(name, -1) < version:
            merged["versions"][name] = version
            merged["table_ids"][name] = second["table_ids"].get(name, "")
    return merged


def _load_key(load_id: str) -> Decimal:
    try:
        return Decimal(load_id)
    except InvalidOperation:
        return Decimal(-1)


def last_completed_load(client: FilesystemClient, schema_name: str) -> str | None:
    """The greatest load id among the `_dlt_loads` records of `schema_name`; None when it has none."""
    ids = [p.load_id for p in map(parse_loads_name, client.list_dir(LOADS_TABLE)) if p and p.schema_name == schema_name]
    return max(ids, key=_load_key) if ids else None


def _read_record(client: FilesystemClient, path: str) -> VersionsRecord | None:
    """The record at `path`; None when there is none or it is malformed (with a warning)."""
    if not client.exists(path):
        return None
    try:
        raw = json.loads(client.read_bytes(path))
        versions = {str(n): int(v) for n, v in raw["versions"].items()}
        ids = {str(n): str(i) for n, i in (raw.get("table_ids") or {}).items()}
        return VersionsRecord(load_id=str(raw.get("load_id", "")), schema_name=str(raw.get("schema_name", "")),
                              versions=versions, table_ids=ids)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        logger.warning("Ignoring the malformed Delta versions record %s (%s): reading the latest versions", path, exc)
        return None


def _completed_record(client: FilesystemClient, schema_name: str, folder: str = VERSIONS_FOLDER) -> VersionsRecord | None:
    """The latest record of `schema_name`, merged with the record of its greatest completed load id."""
    load_id = last_completed_load(client, schema_name)
    by_id = None if load_id is None else _read_record(client, versions_path(schema_name, load_id, folder))
    if by_id is None:  # none completed, or the last one has no record (dlt's, an older lakeload's): read the latest
        return None
    latest = _read_record(client, versions_path(schema_name, LATEST, folder))
    return by_id if latest is None else _newest(latest, by_id)


def completed_record(client: FilesystemClient, schema_name: str, folder: str) -> VersionsRecord | None:
    """`_completed_record` of another format's records folder."""
    return _completed_record(client, schema_name, folder)


def completed_versions(client: FilesystemClient, schema_name: str) -> dict[str, int]:
    """The Delta table versions of the last completed loads of `schema_name` (empty: read latest).

    Example (`fs_client` of a dataset whose loads recorded versions)::

        completed_versions(fs_client, "events")   # {'users': 3, 'users__pets': 5}
    """
    record = _completed_record(client, schema_name)
    return dict(record["versions"]) if record else {}


def completed_tables(client: FilesystemClient, schema_name: str) -> dict[str, tuple[int, str]]:
    """The (version, table id) of each Delta table recorded with the last completed loads of `schema_name`, for
    records that hold table ids (records of lakeload before them hold versions only: left out).

    Example (`fs_client` of a dataset whose loads recorded versions)::

        completed_tables(fs_client, "events")   # {'users': (3, '4aac0a58-7c87-414e-bce6-edcff6166e0c')}
    """
    record = _completed_record(client, schema_name)
    if record is None:
        return {}
    return {n: (v, record["table_ids"][n]) for n, v in record["versions"].items() if record["table_ids"].get(n)}

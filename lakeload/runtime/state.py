"""Pipeline state in dlt's shape, its content hash, and restoring state and schema from the bucket."""

from __future__ import annotations

import base64
import copy
import hashlib
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from lakeload.destinations.impl.filesystem import state_file_names, state_files
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.state_files import STATE_TABLE, VERSION_TABLE, StateFileError
from lakeload.schema.schema import Schema

logger = logging.getLogger("lakeload.pipeline")
STATE_ENGINE_VERSION = 4
T = TypeVar("T")
_UNHASHED_STATE_KEYS = ("_local", "_version_hash", "_state_version", "_state_engine_version")


def new_state(pipeline_name: str, dataset_name: str, destination_type: str, destination_name: str | None) -> dict[str, Any]:
    return {
        "_state_version": 0,
        "_state_engine_version": STATE_ENGINE_VERSION,
        "pipeline_name": pipeline_name,
        "dataset_name": dataset_name,
        "default_schema_name": None,
        "schema_names": [],
        "destination_type": dlt_destination_type(destination_type),
        "destination_name": destination_name,
        "_local": {},
    }


# the destination type as dlt names it in the state: dlt's `attach()` imports it to rebuild the destination
_DLT_DESTINATION_TYPES = {"filesystem": "dlt.destinations.filesystem", "sink": "dlt.destinations.destination"}


def dlt_destination_type(destination_type: str) -> str:
    """The `destination_type` dlt stores in the pipeline state for a lakeload destination type.

    >>> dlt_destination_type("filesystem")
    'dlt.destinations.filesystem'
    """
    return _DLT_DESTINATION_TYPES.get(destination_type, f"dlt.destinations.{destination_type}")


def state_hash(state: dict[str, Any]) -> str:
    """dlt's state version hash: base64 sha3-256 of the state without `_local` and its version fields, as typed
    JSON (datetimes, decimals as dlt's typed text) with sorted keys, so both tools hash equal states alike."""
    content = {k: v for k, v in state.items() if k not in _UNHASHED_STATE_KEYS}
    raw = orjson.dumps(state_files.typed_values(content), option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return base64.b64encode(hashlib.sha3_256(raw).digest()).decode()


def bump_state(state: dict[str, Any]) -> bool:
    """Recompute the state hash; when it changed, increment `_state_version` and return True."""
    new_hash = state_hash(state)
    if new_hash == state.get("_version_hash"):
        return False
    state["_state_version"] = int(state.get("_state_version", 0)) + 1
    state["_version_hash"] = new_hash
    return True


def staged_state(state: dict[str, Any], sources_state: dict[str, Any], destination: Any = None) -> dict[str, Any]:
    """A copy of `state` with the sources' state an extract produced (`state["sources"]`, dlt's shape) and, as dlt
    records it in every state it stores, the pipeline's destination (dlt's type name; the name given, if any).

    >>> staged_state({"_state_version": 1}, {})
    {'_state_version': 1}
    """
    staged = copy.deepcopy(state)
    if sources_state or "sources" in staged:
        staged["sources"] = copy.deepcopy(sources_state)
    if destination is not None:
        staged["destination_type"] = dlt_destination_type(destination.destination_type)
        staged["destination_name"] = getattr(destination, "destination_name", None)
    return staged


def stored_state(state: dict[str, Any]) -> dict[str, Any]:
    """The state a package carries to the bucket: without `_local`, datetimes and decimals as dlt's typed text."""
    return state_files.typed_values({k: v for k, v in state.items() if k != "_local"})


def restore_from_bucket(client: FilesystemClient, pipeline_name: str) -> tuple[dict[str, Any] | None, list[Schema]]:
    """The newest readable stored state of `pipeline_name` and the newest readable version of each of its schemas.

    A truncated or garbled newest schema version (a crash of another tool's upload, a hand edit) is skipped with a
    warning naming it, for the one before it; a newest state file that cannot be read is a `StateFileError` naming
    it, the previous one and the fix (see `_first_readable`), as is a schema none of whose versions can be read.
    """
    names = state_file_names.state_files_newest_first(client.list_dir(STATE_TABLE), pipeline_name)
    state = _first_readable(client, STATE_TABLE, names, _read_state)
    if state is None:
        return None, []
    schemas = []
    version_names = client.list_dir(VERSION_TABLE)
    for schema_name in state.get("schema_names") or []:
        files = state_file_names.version_files_newest_first(version_names, schema_name)
        schema = _first_readable(client, VERSION_TABLE, files, _read_schema)
        if schema is not None:
            schemas.append(schema)
    logger.info("restored state v%s and schemas %s of pipeline %s from the bucket", state.get("_state_version"), [s.name for s in schemas], pipeline_name)
    return state, schemas


def _read_state(content: bytes, path: str) -> dict[str, Any]:
    return state_files.decode_state(state_files.parse_state_record(content, path)["state"], path)


def _read_schema(content: bytes, path: str) -> Schema:
    text = state_files.parse_version_record(content, path)["schema"]
    try:
        return Schema.from_json(text)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise StateFileError(f"The {VERSION_TABLE} file {path} holds a schema that cannot be read (truncated or "
                             f"garbled?). {state_files.VERSION_FIX}") from exc


def _first_readable(client: FilesystemClient, table: str, files: list[str], read: Callable[[bytes, str], T]) -> T | None:
    """`read()` of the first of `files` (in `table`, newest first) that can be read; None when there are none.

    Schema versions fall back to the one before (the next load stores its schema again). States do not: an older
    state's incremental cursors would load again the rows loaded since (duplicates), so an unreadable newest state
    is an error that names the file and the previous one, and the user chooses."""
    first_error: StateFileError | None = None
    for index, name in enumerate(files):
        path = f"{table}/{name}"
        try:
            return read(client.read_bytes(path), path)
        except StateFileError as exc:
            if table == STATE_TABLE and index + 1 < len(files):
                raise StateFileError(
                    f"{exc} Or, to restore the previous state instead, delete {path}: the previous state file is "
                    f"{table}/{files[index + 1]}, whose incremental cursors are older, so rows loaded after it may "
                    "load again."
                ) from exc
            first_error = first_error or exc
            logger.warning("%s Skipped: the file before it is used.", exc)
    if first_error is not None:
        raise StateFileError(f"{first_error} No older file of it in {table} could be read either.") from first_error
    return None

"""The pipeline state and schemas a filesystem bucket holds for a pipeline, read back (dlt's state sync): the
newest readable state file and the newest readable version of each of its schemas.

Example::

    state, schemas = restore_from_bucket(client, "quick_start")   # (None, []) for a new dataset
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

import orjson

from lakeload.destinations.impl.filesystem import state_file_names, state_files
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.state_files import STATE_TABLE, VERSION_TABLE, StateFileError
from lakeload.destinations.state_types import PipelineState
from lakeload.schema.schema import Schema

logger = logging.getLogger("lakeload.pipeline")
T = TypeVar("T")


def restore_from_bucket(client: FilesystemClient, pipeline_name: str) -> tuple[PipelineState | None, list[Schema]]:
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


def _read_state(content: bytes, path: str) -> PipelineState:
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

"""The ``_dlt_*`` state files and the ``init`` file that dlt 1.31 keeps beside the tables of a dataset.

Pure functions: they build file names and byte contents identical to dlt's, and parse dlt's files back.
Every path is relative to the dataset folder and uses '/'. Splitting names and picking files from a
listing is :mod:`lakeload.destinations.impl.filesystem.state_file_names`.

Example:
    >>> import pendulum
    >>> path, content = loads_record(load_id="1795290972.5539668", schema_name="users_pets",
    ...     schema_version_hash="iIYPHJQfI/Uchm2/GIG9griD3Twf20wlDtiNGEK7+TU=",
    ...     inserted_at=pendulum.datetime(2026, 11, 21, 19, 56, 12, 778992))
    >>> path
    '_dlt_loads/users_pets__1795290972.5539668.jsonl'
    >>> content[:44]
    b'{"load_id":"1795290972.5539668","schema_name'
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import uuid
import zlib
from decimal import Decimal
from typing import Any, cast

import orjson

from lakeload.destinations.state_types import LoadsRecord, PipelineState, StateRecord, VersionRecord
from lakeload.errors import DestinationError
from lakeload.schema import dlt_typed_text

INIT_FILE_NAME = "init"
LOADS_TABLE = "_dlt_loads"
VERSION_TABLE = "_dlt_version"
STATE_TABLE = "_dlt_pipeline_state"
STORAGE_VERSION = 2
SUPPORTED_STORAGE_VERSIONS = frozenset({1, 2})
SCHEMA_ENGINE_VERSION = 11
STATE_ENGINE_VERSION = 4
NAME_SEPARATOR = "__"

# typed JSON inside the compressed state: a private-use character before the text marks its type (dlt's typed text)
_PUA = dlt_typed_text.PUA
_DATE = dlt_typed_text.DATE


class StateFileError(DestinationError):
    """A dlt state file (init, _dlt_loads, _dlt_version, _dlt_pipeline_state) is malformed or unsupported."""


def init_content() -> bytes:
    """Return the content dlt writes to ``<dataset>/init`` for a new dataset.

    Example:
        >>> init_content()
        b'{"initial_version":2,"current_version":2}'
    """
    return orjson.dumps({"initial_version": STORAGE_VERSION, "current_version": STORAGE_VERSION})


def parse_init_versions(content: bytes) -> tuple[int, int]:
    """Return ``(initial_version, current_version)`` of an ``init`` file; an empty file is ``(1, 1)``.

    Example:
        >>> parse_init_versions(b'{"initial_version":1,"current_version":2}')
        (1, 2)
    """
    if not content.strip():
        return 1, 1
    try:
        doc = orjson.loads(content)
        versions = int(doc["initial_version"]), int(doc["current_version"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise StateFileError(  # never its content: a file of the bucket may hold anything
            f"The dataset's 'init' file is not valid (not JSON, or without both versions). Expected an empty file "
            f"or {init_content().decode()}. Fix: write that content to the dataset's 'init' file."
        ) from exc
    unsupported = [v for v in versions if v not in SUPPORTED_STORAGE_VERSIONS]
    if unsupported:
        raise StateFileError(
            f"The dataset 'init' file declares storage version(s) {unsupported}; this lakeload supports "
            f"{sorted(SUPPORTED_STORAGE_VERSIONS)}. The dataset was written by a newer dlt or lakeload."
        )
    return versions


def parse_init(content: bytes) -> int:
    """Return the storage version that decides file naming: the ``initial_version`` (1 = no ``.gz`` suffix).

    Example:
        >>> parse_init(b""), parse_init(init_content())
        (1, 2)
    """
    return parse_init_versions(content)[0]


def hash_to_hex(version_hash: str) -> str:
    """Return the hex form of a base64 hash used in state file names (``'None'`` for an empty hash, as dlt).

    Example:
        >>> hash_to_hex("3q2+7w==")
        'deadbeef'
    """
    return base64.b64decode(version_hash).hex() if version_hash else "None"


def _iso(moment: _dt.datetime, field: str) -> str:
    if not isinstance(moment, _dt.datetime) or moment.utcoffset() is None:
        raise StateFileError(f"'{field}' must be a timezone-aware datetime, e.g. pendulum.now('UTC'); got {moment!r}.")
    return moment.isoformat()


def loads_record(*, load_id: str, schema_name: str, schema_version_hash: str,
                 inserted_at: _dt.datetime) -> tuple[str, bytes]:
    """Return the path and content of the ``_dlt_loads`` file marking ``load_id`` as completed.

    Example:
        >>> loads_record(load_id="1.5", schema_name="s", schema_version_hash="h",
        ...              inserted_at=_dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc))[0]
        '_dlt_loads/s__1.5.jsonl'
    """
    doc = {"load_id": load_id, "schema_name": schema_name, "status": 0,
           "inserted_at": _iso(inserted_at, "inserted_at"), "schema_version_hash": schema_version_hash}
    return f"{LOADS_TABLE}/{schema_name}{NAME_SEPARATOR}{load_id}.jsonl", orjson.dumps(doc)


def version_record(*, schema_name: str, version: int, version_hash: str, schema_json: str,
                   inserted_at: _dt.datetime, precise_time: float,
                   engine_version: int = SCHEMA_ENGINE_VERSION) -> tuple[str, bytes]:
    """Return the path and content of the ``_dlt_version`` file storing a schema version.

    ``schema_json`` is the whole schema as compact JSON text; ``precise_time`` is ``time.time()`` at write time.

    Example:
        >>> version_record(schema_name="s", version=2, version_hash="3q2+7w==", schema_json="{}",
        ...     inserted_at=_dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc), precise_time=1.25)[0]
        '_dlt_version/s__1.25__deadbeef.jsonl'
    """
    doc = {"version_hash": version_hash, "schema_name": schema_name, "version": version,
           "engine_version": engine_version, "inserted_at": _iso(inserted_at, "inserted_at"),
           "schema": schema_json}
    name = NAME_SEPARATOR.join((schema_name, str(float(precise_time)), hash_to_hex(version_hash)))
    return f"{VERSION_TABLE}/{name}.jsonl", orjson.dumps(doc)


def pipeline_state_record(*, pipeline_name: str, load_id: str, state: PipelineState, state_version: int,
                          state_version_hash: str, schema_version_hash: str, created_at: _dt.datetime,
                          engine_version: int = STATE_ENGINE_VERSION) -> tuple[str, bytes]:
    """Return the path and content of the ``_dlt_pipeline_state`` file for ``load_id``.

    ``state`` is the pipeline state without its ``_local`` part; ``schema_version_hash`` names the file.

    Example:
        >>> pipeline_state_record(pipeline_name="p", load_id="1.5", state={}, state_version=1,
        ...     state_version_hash="x", schema_version_hash="3q2+7w==",
        ...     created_at=_dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc))[0]
        '_dlt_pipeline_state/p__1.5__deadbeef.jsonl'
    """
    doc = {"version": state_version, "engine_version": engine_version, "pipeline_name": pipeline_name,
           "state": encode_state(state), "created_at": _iso(created_at, "created_at"),
           "version_hash": state_version_hash, "_dlt_load_id": load_id}
    name = NAME_SEPARATOR.join((pipeline_name, load_id, hash_to_hex(schema_version_hash)))
    return f"{STATE_TABLE}/{name}.jsonl", orjson.dumps(doc)


def _typed_default(value: Any) -> str:
    text = dlt_typed_text.encode(value)
    if text is None:
        raise TypeError(f"Pipeline state value of type {type(value).__name__} cannot be stored: {value!r}")
    return text


def encode_state(state: PipelineState) -> str:
    """Encode pipeline state as dlt does: typed compact JSON, zlib level 9, base64.

    Example:
        >>> decode_state(encode_state({"a": 1}))
        {'a': 1}
    """
    raw = orjson.dumps(state, default=_typed_default,
                       option=orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME)
    return base64.b64encode(zlib.compress(raw, level=9)).decode("ascii")


def typed_values(state: PipelineState) -> PipelineState:
    """A JSON-ready copy of `state` whose datetimes, dates, times, decimals and bytes are dlt's typed text
    (a private-use character and the ISO text), as dlt keeps them in its local `state.json`.

    Example:
        >>> typed_values({"at": _dt.date(2024, 1, 2)}) == {"at": _DATE + "2024-01-02"}
        True
    """
    raw = orjson.dumps(state, default=_typed_default, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME)
    return cast(PipelineState, orjson.loads(raw))


def untyped_values(value: Any) -> Any:
    """`value` (decoded JSON) with dlt's typed text turned back into datetimes, dates, decimals, ... (see `decode_state`)."""
    return _untype(value)


def _from_hex(text: str) -> bytes:
    return bytes.fromhex(text[2:] if text.startswith("0x") else text)


def _from_iso_datetime(text: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)


_DECODERS: tuple[Any, ...] = (Decimal, _from_iso_datetime, _dt.date.fromisoformat, uuid.UUID, _from_hex,
                              lambda t: base64.b64decode(t, validate=True), Decimal, _dt.time.fromisoformat)


def _untype(value: Any) -> Any:
    if isinstance(value, str):
        kind = ord(value[0]) - _PUA if len(value) > 1 else -1
        if 0 <= kind < len(_DECODERS):
            try:
                return _DECODERS[kind](value[1:])
            except Exception:  # not a typed value after all: keep the text
                return value
        return value
    if isinstance(value, dict):
        return {k: _untype(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_untype(v) for v in value]
    return value


def decode_state(encoded: str, path: str = "") -> PipelineState:
    """Decode a ``state`` value of a ``_dlt_pipeline_state`` file (legacy plain JSON is accepted too); ``path``
    (relative to the dataset) names the file in errors, which never quote the value.

    Typed values come back as ``Decimal``, ``datetime``, ``date``, ``time``, ``UUID`` or ``bytes``.

    Example:
        >>> decode_state('{"a": 1}')
        {'a': 1}
    """
    try:
        raw = zlib.decompress(base64.b64decode(encoded, validate=True))
    except binascii.Error:
        raw = encoded.encode("utf-8")
    except zlib.error as exc:
        raise StateFileError(_problem(STATE_TABLE, path, "holds a state that is not zlib-compressed JSON")) from exc
    try:
        result = _untype(orjson.loads(raw))
    except orjson.JSONDecodeError as exc:
        raise StateFileError(_problem(STATE_TABLE, path, "holds a state that is not JSON")) from exc
    if not isinstance(result, dict):
        raise StateFileError(_problem(STATE_TABLE, path, f"holds a state that is a {type(result).__name__}, not an object"))
    return cast(PipelineState, result)


_RECORD_FIELDS = {
    LOADS_TABLE: ("load_id", "schema_name", "status", "inserted_at", "schema_version_hash"),
    VERSION_TABLE: ("version_hash", "schema_name", "version", "engine_version", "inserted_at", "schema"),
    STATE_TABLE: ("version", "engine_version", "pipeline_name", "state", "created_at"),
}


VERSION_FIX = ("Fix: restore the file from a backup of the bucket, or delete it: the previous version of the "
               "schema is then used.")
_FIXES = {
    LOADS_TABLE: "Fix: restore the file from a backup of the bucket (it records that a load completed).",
    VERSION_TABLE: VERSION_FIX,
    STATE_TABLE: "Fix: restore the file from a backup of the bucket, or delete it: the previous state file of the "
                 "pipeline is then used.",
}


def _problem(table: str, path: str, what: str) -> str:
    """An error message naming the file (never quoting it: a file of the bucket may hold secrets) and the fix."""
    where = f"The {table} file {path}" if path else f"A {table} file"
    return f"{where} {what} (truncated or garbled?). {_FIXES[table]}"


def _parse_record(content: bytes, table: str, path: str = "") -> Any:
    """The JSON object of a `table` file, checked to hold its record's fields (the caller casts it to the record)."""
    try:
        doc = orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        raise StateFileError(_problem(table, path, "does not hold JSON")) from exc
    if not isinstance(doc, dict):
        raise StateFileError(_problem(table, path, f"must hold one JSON object, not a {type(doc).__name__}"))
    missing = [f for f in _RECORD_FIELDS[table] if f not in doc]
    if missing:
        raise StateFileError(_problem(table, path, f"lacks field(s) {missing} of {list(_RECORD_FIELDS[table])}"))
    return doc


def parse_loads_record(content: bytes) -> LoadsRecord:
    """Parse a ``_dlt_loads`` file into a dict (fields in file order).

    Example:
        >>> parse_loads_record(loads_record(load_id="1.5", schema_name="s", schema_version_hash="h",
        ...     inserted_at=_dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc))[1])["status"]
        0
    """
    return cast(LoadsRecord, _parse_record(content, LOADS_TABLE))


def parse_version_record(content: bytes, path: str = "") -> VersionRecord:
    """Parse a ``_dlt_version`` file into a dict; ``schema`` stays JSON text.

    Example:
        >>> parse_version_record(b'{"version_hash":"h","schema_name":"s","version":1,"engine_version":11,'
        ...     b'"inserted_at":"2026-01-01T00:00:00+00:00","schema":"{}"}')["version"]
        1
    """
    return cast(VersionRecord, _parse_record(content, VERSION_TABLE, path))


def parse_state_record(content: bytes, path: str = "") -> StateRecord:
    """Parse a ``_dlt_pipeline_state`` file into a dict; ``state`` stays encoded (see :func:`decode_state`).

    A ``dlt_load_id`` key written by dlt before 0.5 is renamed to ``_dlt_load_id``, as dlt does.

    Example:
        >>> parse_state_record(b'{"version":1,"engine_version":4,"pipeline_name":"p","state":"{}",'
        ...     b'"created_at":"2026-01-01T00:00:00+00:00","dlt_load_id":"1.5"}')["_dlt_load_id"]
        '1.5'
    """
    doc = _parse_record(content, STATE_TABLE, path)
    if "dlt_load_id" in doc:
        doc["_dlt_load_id"] = doc.pop("dlt_load_id")
    return cast(StateRecord, doc)

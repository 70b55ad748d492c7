"""The pipeline state in dlt's shape (dlt's `TPipelineState`) and the `_dlt_*` records that carry it, as TypedDicts.

A pipeline keeps its state in its working folder (`state.json`), in every load package that changed it, and in the
bucket (`_dlt_pipeline_state`), where dlt reads it back: these types name the keys both tools write. They live in
`destinations`, the lowest layer that reads or writes the state (the filesystem destination's state files), so
that storage, extract and runtime share them.

What a source keeps in its state is its own (`SourceState`): dlt gives it a dict to fill, with the resources'
states under `"resources"` and an incremental's under `"resources"[<resource>]["incremental"]`.

>>> state: PipelineState = {"pipeline_name": "p", "dataset_name": "d", "schema_names": [], "_local": {}}
>>> state["_local"].get("first_run", False)
False
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, TypedDict

SourceState = dict[str, Any]
"""A source's state, `state["sources"][<source>]`: whatever the source's code stores there (JSON-able values,
datetimes, decimals), with its resources' states under `"resources"`. Arbitrary by design, as in dlt."""


ResourceState = dict[str, Any]
"""A resource's state, `state["sources"][<source>]["resources"][<resource>]`: what the resource's code stores (an
incremental keeps its cursor under `"incremental"`, a files source its files' versions under `"files"`)."""


class LocalState(TypedDict, total=False):
    """`state["_local"]`: kept in the working folder only, never stored at the destination (dlt's
    `TPipelineLocalState`)."""

    first_run: bool
    _last_extracted_at: _dt.datetime
    _last_extracted_hash: str
    initial_cwd: str
    _dev_mode: bool


class PipelineState(TypedDict, total=False):
    """A pipeline's state (dlt's `TPipelineState`): its names, its schemas, its destination and the sources' state.

    `_state_version` grows and `_version_hash` changes whenever the content changes (`runtime.state.bump_state`)."""

    _state_version: int
    _state_engine_version: int
    _version_hash: str
    pipeline_name: str
    dataset_name: str
    default_schema_name: str | None
    schema_names: list[str]
    destination_name: str | None
    destination_type: str | None
    staging_name: str | None
    staging_type: str | None
    _local: LocalState
    sources: dict[str, SourceState]


class LoadsRecord(TypedDict):
    """A `_dlt_loads` file: a load that completed."""

    load_id: str
    schema_name: str
    status: int
    inserted_at: str
    schema_version_hash: str


class VersionRecord(TypedDict):
    """A `_dlt_version` file: one version of a schema (`schema` is the stored schema as JSON text)."""

    version_hash: str
    schema_name: str
    version: int
    engine_version: int
    inserted_at: str
    schema: str


class _StateRecord(TypedDict):
    version: int
    engine_version: int
    pipeline_name: str
    state: str  # the encoded state (`state_files.decode_state`)
    created_at: str


class StateRecord(_StateRecord, total=False):
    """A `_dlt_pipeline_state` file: the state stored with one load (dlt's `TPipelineStateDoc`)."""

    version_hash: str
    _dlt_load_id: str

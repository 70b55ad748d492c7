"""Pipeline state in dlt's shape, its content hash, and restoring state and schema from the bucket."""

from __future__ import annotations

import base64
import copy
import hashlib
import logging
from typing import Any, TypeVar, cast

import orjson

from lakeload.destinations.impl.filesystem import state_files
from lakeload.destinations.reference import dlt_destination_type
from lakeload.destinations.state_types import PipelineState, SourceState

logger = logging.getLogger("lakeload.pipeline")
STATE_ENGINE_VERSION = 4
T = TypeVar("T")
_UNHASHED_STATE_KEYS = ("_local", "_version_hash", "_state_version", "_state_engine_version")


def new_state(pipeline_name: str, dataset_name: str, type_name: str, destination_name: str | None) -> PipelineState:
    """The state of a new pipeline, as dlt starts it (`type_name`: lakeload's short name of the destination type)."""
    return {
        "_state_version": 0,
        "_state_engine_version": STATE_ENGINE_VERSION,
        "pipeline_name": pipeline_name,
        "dataset_name": dataset_name,
        "default_schema_name": None,
        "schema_names": [],
        "destination_type": dlt_destination_type(type_name),
        "destination_name": destination_name,
        "_local": {},
    }


def state_hash(state: PipelineState) -> str:
    """dlt's state version hash: base64 sha3-256 of the state without `_local` and its version fields, as typed
    JSON (datetimes, decimals as dlt's typed text) with sorted keys, so both tools hash equal states alike."""
    content = cast(PipelineState, {k: v for k, v in state.items() if k not in _UNHASHED_STATE_KEYS})
    raw = orjson.dumps(state_files.typed_values(content), option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return base64.b64encode(hashlib.sha3_256(raw).digest()).decode()


def bump_state(state: PipelineState) -> bool:
    """Recompute the state hash; when it changed, increment `_state_version` and return True."""
    new_hash = state_hash(state)
    if new_hash == state.get("_version_hash"):
        return False
    state["_state_version"] = int(state.get("_state_version", 0)) + 1
    state["_version_hash"] = new_hash
    return True


def staged_state(state: PipelineState, sources_state: dict[str, SourceState], destination: Any = None) -> PipelineState:
    """A copy of `state` with the sources' state an extract produced (`state["sources"]`, dlt's shape) and, as dlt
    records it in every state it stores, the pipeline's destination (dlt's type name; the name given, if any).

    >>> staged_state({"_state_version": 1}, {})
    {'_state_version': 1}
    """
    staged = copy.deepcopy(state)
    if sources_state or "sources" in staged:
        staged["sources"] = copy.deepcopy(sources_state)
    if destination is not None:
        staged["destination_type"] = destination.destination_type  # dlt's name: dlt's `attach()` imports it
        # the name given (dlt stores None for a destination it names after its type)
        staged["destination_name"] = getattr(destination, "given_name", getattr(destination, "destination_name", None))
    return staged


def stored_state(state: PipelineState) -> PipelineState:
    """The state a package carries to the bucket: without `_local`, datetimes and decimals as dlt's typed text."""
    return state_files.typed_values(cast(PipelineState, {k: v for k, v in state.items() if k != "_local"}))

"""`lakeload.current`: what a resource sees of the run it is part of, as dlt's `dlt.current`.

Inside a resource's function (while extract iterates it) `resource_state()` is the resource's state and
`source_state()` (alias `state()`) its source's, both in dlt's place in the pipeline state
(`state["sources"][<source>]` and its `["resources"][<resource>]`), so a bucket written by either tool
continues with the other. Both are working copies that are committed with the load package only when the
whole extract succeeds, exactly as the state of `takes_context` resources. Outside a resource they raise
`StateNotAvailableError`. `pipeline()` is the pipeline that runs, else the one created last (a default one,
named after the script, when there is none yet, as in dlt).

>>> import os, tempfile
>>> import lakeload
>>> @lakeload.resource
... def numbers():
...     state = lakeload.current.resource_state()
...     state["last"] = state.get("last", 0) + 10
...     yield from range(state["last"] - 10, state["last"])
>>> tmp = tempfile.TemporaryDirectory()
>>> pipeline = lakeload.pipeline("numbers", destination=lakeload.destinations.filesystem(os.path.join(tmp.name, "bucket")),
...                              pipelines_dir=tmp.name)
>>> first, second = pipeline.extract(numbers), pipeline.extract(numbers)   # 0..9, then 10..19
>>> pipeline.state["sources"]["numbers"]["resources"]["numbers"]
{'last': 20}
>>> lakeload.current.pipeline().pipeline_name
'numbers'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeload.common.context import SupportsPipeline, active_pipeline, active_pipeline_name, running_resource
from lakeload.destinations.state_types import ResourceState, SourceState
from lakeload.errors import ExtractError

if TYPE_CHECKING:
    from lakeload.common.context import RunningResource

__all__ = ["pipeline", "resource_name", "resource_state", "source_state", "state"]


class StateNotAvailableError(ExtractError):
    """`lakeload.current` state was asked for outside a resource that extract is iterating."""


def _active() -> RunningResource:
    context = running_resource()
    if context is None:
        raise StateNotAvailableError(
            "Source and resource state are only available while a resource runs: call "
            "lakeload.current.resource_state() / source_state() inside the function of a @lakeload.resource or "
            "@lakeload.source that a pipeline is extracting."
        )
    return context


def resource_state() -> ResourceState:
    """The state of the resource being extracted (`state["sources"][<source>]["resources"][<resource>]`)."""
    return _active().resource_state()


def source_state() -> SourceState:
    """The state of the source being extracted (`state["sources"][<source>]`), shared by its resources."""
    context = _active()
    return context.sources_state.setdefault(context.schema_name, {})


state = source_state  # dlt's `dlt.current.state()` is the source state


def resource_name() -> str:
    """The name of the resource being extracted."""
    return _active().resource_name


def pipeline() -> SupportsPipeline:
    """The pipeline that runs now or was created last; a default pipeline (named after the script) when none was.
    It is a `lakeload.Pipeline`; the annotation names only what this layer may know of it."""
    return active_pipeline()


def pipeline_name() -> str | None:
    """The name of the pipeline that runs now or was created last; None when there is none (none is made)."""
    return active_pipeline_name()

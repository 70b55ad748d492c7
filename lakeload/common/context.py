"""The active pipeline and the resource running now, reachable from any layer without importing the pipeline.

dlt users expect `dlt.current.pipeline()` (the pipeline that runs, else the one created last, else a default
one named after the script) and injected configuration that knows which pipeline and source it resolves for.
Code below the pipeline (configuration injection, extract) reads both here. The pipeline registers itself
(`activate`) and the factory of a default pipeline (`register_pipeline_factory`, done when the pipeline module
is imported); `active_pipeline()` with none registered yet imports the pipeline module named by
`DEFAULT_FACTORY` first, as fsspec's registry imports a protocol's module on demand.

>>> class MyPipeline:                     # anything with a `pipeline_name` (a `lakeload.Pipeline` in practice)
...     pipeline_name = "my_pipeline"
>>> activate(MyPipeline())
>>> active_pipeline_name()
'my_pipeline'
"""

from __future__ import annotations

import contextvars
import importlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

DEFAULT_FACTORY = "lakeload.runtime.pipeline"  # registers `pipeline()` as the factory when imported


TSourcesState = dict[str, Any]
"""dlt's `state["sources"]`: source name -> the state its resources keep (JSON the user's code writes)."""

TResourceState = dict[str, Any]
"""One resource's own state (`state["sources"][<source>]["resources"][<resource>]`): whatever the user's code keeps."""


class SupportsPipeline(Protocol):
    """What lower layers may use of a pipeline."""

    @property
    def pipeline_name(self) -> str: ...


class RunningResource(Protocol):
    """What injected configuration and `lakeload.current` read of the resource whose code runs now."""

    pipeline_name: str | None
    schema_name: str
    resource_name: str
    sources_state: TSourcesState

    def resource_state(self) -> TResourceState: ...


_running: contextvars.ContextVar[RunningResource | None] = contextvars.ContextVar("lakeload_running", default=None)
_active: list[SupportsPipeline] = []  # the pipeline created or run last (one entry at most)
_factory: list[Callable[[], SupportsPipeline]] = []


def register_pipeline_factory(factory: Callable[[], SupportsPipeline]) -> None:
    """Set what makes the default pipeline (`lakeload.pipeline` with no arguments)."""
    _factory[:] = [factory]


def activate(pipeline: SupportsPipeline) -> None:
    """Make `pipeline` the one `active_pipeline()` returns (a pipeline calls this when created or run)."""
    _active[:] = [pipeline]


def deactivate() -> None:
    """No pipeline is active any more: the next `active_pipeline()` makes the default one (dlt's `deactivate`)."""
    _active.clear()


def is_active(pipeline: SupportsPipeline) -> bool:
    """Whether `pipeline` is the active one."""
    return bool(_active) and _active[-1] is pipeline


def active_pipeline() -> SupportsPipeline:
    """The pipeline that runs now or was created last; a default one (which activates itself) when none was."""
    if not _active:
        if not _factory:
            importlib.import_module(DEFAULT_FACTORY)
        _factory[0]()
    return _active[-1]


def active_pipeline_name() -> str | None:
    """The name of the pipeline that runs now or was created last; None when there is none (none is made)."""
    return _active[-1].pipeline_name if _active else None


def running_resource() -> RunningResource | None:
    """The resource whose code runs now (its extract context); None outside extract."""
    return _running.get()


def iterate_in(context: RunningResource | None, items: Iterable[Any]) -> Iterator[Any]:
    """`items`, with `context` running only while the resource's own code makes the next item."""
    iterator = iter(items)
    while True:
        token = _running.set(context)
        try:
            item = next(iterator)
        except StopIteration:
            return
        finally:
            _running.reset(token)
        yield item


def call_in(context: RunningResource | None, f: Callable[[Any], Any], item: Any) -> Any:
    """`f(item)` with `context` running (a transformer's call on one parent item)."""
    token = _running.set(context)
    try:
        return f(item)
    finally:
        _running.reset(token)

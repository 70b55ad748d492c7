"""What the extractor hands a resource that asks for it: the pipeline's name, Spark, and the resource's state.

A resource declares `takes_context=True`; its data function is then called with an `ExtractContext`.
The state it gets is a working copy: the pipeline commits it (into the package's state, the local
state file and, at load, `_dlt_pipeline_state`) only when the whole extract succeeded, so a failed
extract leaves the state as it was.

>>> context = ExtractContext(pipeline_name="p", schema_name="s", resource_name="r")
>>> context.resource_state()["files"] = {"a.jsonl": "2024-05-01T00:00:00+00:00"}
>>> context.sources_state
{'s': {'resources': {'r': {'files': {'a.jsonl': '2024-05-01T00:00:00+00:00'}}}}}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from lakeload.destinations.state_types import ResourceState, SourceState

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class ExtractContext:
    """The pipeline as one extract shows it to a resource (see the module docstring)."""

    pipeline_name: str | None = None
    schema_name: str = ""
    resource_name: str = ""
    sources_state: dict[str, SourceState] = field(default_factory=dict)  # dlt's state["sources"], a working copy
    spark_session: Callable[[], SparkSession] | None = None
    merge_strategies: tuple[str, ...] | None = None  # the destination's, when it refuses a plain table's other merges

    def resource_state(self) -> ResourceState:
        """This resource's state, dlt's `state["sources"][<schema>]["resources"][<resource>]`, created on first use."""
        source = self.sources_state.setdefault(self.schema_name, {})
        return source.setdefault("resources", {}).setdefault(self.resource_name, {})  # type: ignore[no-any-return]

    def reset_resource_state(self, resource_name: str) -> None:
        """Forget a resource's state (dlt does so for `replace` resources before each extract)."""
        source = self.sources_state.setdefault(self.schema_name, {})
        source.get("resources", {}).pop(resource_name, None)

    def spark(self) -> SparkSession:
        """The pipeline's Spark session (outside a pipeline: the active one, or a local one)."""
        if self.spark_session is not None:
            return self.spark_session()
        from lakeload.spark.session import get_spark

        return get_spark()

    def for_resource(self, resource_name: str) -> ExtractContext:
        """The same context for another resource (the state working copy is shared)."""
        return replace(self, resource_name=resource_name)

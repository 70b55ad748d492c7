"""lakeload: dlt's filesystem destination, with Apache Spark doing the heavy lifting.

>>> import lakeload
>>> pipeline = lakeload.pipeline("quick_start", destination="filesystem", dataset_name="mydata")

Names are imported lazily, so that the kernel's modules (`lakeload.kernel`, what Spark's Python workers
import) load without the driver-side pipeline.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from lakeload.about import VERSION as __version__  # noqa: F401 - the package version
from lakeload.lazy_exports import lazy_getattr

_EXPORTS = {
    "LakeloadError": "lakeload.errors",
    "PipelineStepFailed": "lakeload.errors",
    "Resource": "lakeload.extract.resource",
    "Source": "lakeload.extract.source",
    "Schema": "lakeload.schema.schema",
    "resource": "lakeload.extract.decorators",
    "source": "lakeload.extract.decorators",
    "transformer": "lakeload.extract.decorators",
    "LoadInfo": "lakeload.runtime.info",
    "Pipeline": "lakeload.runtime.pipeline",
    "attach": "lakeload.runtime.attach",
    "defer": "lakeload.extract.graph",
    "pipeline": "lakeload.runtime.pipeline",
    "destination": "lakeload.destinations",
    "secrets": "lakeload.config.accessors",
    "Dataset": "lakeload.sql.dataset",
    "Relation": "lakeload.sql.relation",
}
__all__ = [
    "Dataset",
    "LakeloadError",
    "LoadInfo",
    "Pipeline",
    "PipelineStepFailed",
    "Relation",
    "Resource",
    "Schema",
    "Source",
    "attach",
    "config",
    "current",
    "defer",
    "destination",
    "destinations",
    "mark",
    "pipeline",
    "resource",
    "secrets",
    "source",
    "sources",
    "transformer",
]

if TYPE_CHECKING:
    from lakeload import config, destinations, sources
    from lakeload.config.accessors import secrets
    from lakeload.destinations import destination
    from lakeload.errors import LakeloadError, PipelineStepFailed
    from lakeload.extract import current, mark
    from lakeload.extract.decorators import resource, source, transformer
    from lakeload.extract.graph import defer
    from lakeload.extract.resource import Resource
    from lakeload.extract.source import Source
    from lakeload.runtime.attach import attach
    from lakeload.runtime.info import LoadInfo
    from lakeload.runtime.pipeline import Pipeline, pipeline
    from lakeload.schema.schema import Schema
    from lakeload.sql.dataset import Dataset
    from lakeload.sql.relation import Relation


_exported = lazy_getattr(__name__, _EXPORTS, globals())


def __getattr__(name: str) -> Any:
    if name in ("config", "destinations", "sources"):
        return importlib.import_module(f"lakeload.{name}")
    if name in ("current", "mark"):
        return importlib.import_module(f"lakeload.extract.{name}")
    return _exported(name)

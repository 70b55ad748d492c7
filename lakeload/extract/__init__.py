"""Extract: resources and sources, their hints, and the extract step.

`DltResource` and `DltSource` are dlt's names for `Resource` and `Source` (`from dlt.extract import DltResource`
in dlt scripts), imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lakeload.extract.resource import Resource as DltResource
    from lakeload.extract.source import Source as DltSource

__all__ = ["DltResource", "DltSource"]

_DLT_NAMES = {"DltResource": ("lakeload.extract.resource", "Resource"), "DltSource": ("lakeload.extract.source", "Source")}


def __getattr__(name: str) -> Any:
    if name not in _DLT_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _DLT_NAMES[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value

"""Destination factories: `lakeload.destinations.filesystem(...)`, `lakeload.destination(name, ...)`.

The implementation of each destination lives in `lakeload.destinations.impl.<name>`, as in dlt, so
the factory names here never collide with package names. Names are imported on first use (a script that
names no destination loads none).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lakeload.destinations.impl.filesystem.factory import DestinationCapabilities, filesystem
    from lakeload.destinations.registry import destination

_EXPORTS = {
    "DestinationCapabilities": "lakeload.destinations.impl.filesystem.factory",
    "filesystem": "lakeload.destinations.impl.filesystem.factory",
    "destination": "lakeload.destinations.registry",
}
__all__ = ["DestinationCapabilities", "destination", "filesystem"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'lakeload.destinations' has no attribute {name!r}")

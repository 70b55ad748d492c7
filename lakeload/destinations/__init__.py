"""Destination factories: `lakeload.destinations.filesystem(...)`, `lakeload.destination(name, ...)`.

The implementation of each destination lives in `lakeload.destinations.impl.<name>`, as in dlt, so
the factory names here never collide with package names.
"""

from __future__ import annotations

from lakeload.destinations.impl.filesystem.factory import DestinationCapabilities, filesystem
from lakeload.destinations.registry import destination

__all__ = ["DestinationCapabilities", "destination", "filesystem"]

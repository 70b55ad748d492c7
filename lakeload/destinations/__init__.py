"""Destination factories: `lakeload.destinations.filesystem(...)`, `lakeload.destinations.duckdb(...)`,
`lakeload.destination(name, ...)`, and the
interface of a destination of one's own (`Destination`, `JobClientBase`, `LoadPackage`: `reference.py`).

The implementation of each destination lives in `lakeload.destinations.impl.<name>`, as in dlt, so
the factory names here never collide with package names. Names are imported on first use (a script that
names no destination loads none).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lakeload.destinations.impl.duckdb.factory import duckdb
    from lakeload.destinations.impl.filesystem.factory import filesystem
    from lakeload.destinations.reference import (
        Destination,
        DestinationCapabilities,
        JobClient,
        JobClientBase,
        LoadContext,
        LoadJob,
        LoadPackage,
        LoadResult,
    )
    from lakeload.destinations.registry import destination

_REFERENCE = "lakeload.destinations.reference"
_EXPORTS = {
    "filesystem": "lakeload.destinations.impl.filesystem.factory",
    "duckdb": "lakeload.destinations.impl.duckdb.factory",
    "destination": "lakeload.destinations.registry",
    **{name: _REFERENCE for name in ("Destination", "DestinationCapabilities", "JobClient", "JobClientBase",
                                      "LoadContext", "LoadJob", "LoadPackage", "LoadResult")},
}
# dlt's destinations lakeload does not have (a deliberate difference: lakeload loads into buckets and DuckDB)
DLT_ONLY_DESTINATIONS = frozenset({
    "athena", "bigquery", "clickhouse", "databricks", "dremio", "ducklake", "dummy", "fabric", "lance", "lancedb",
    "motherduck", "mssql", "postgres", "qdrant", "redshift", "snowflake", "sqlalchemy", "synapse", "weaviate",
})
__all__ = ["Destination", "DestinationCapabilities", "JobClient", "JobClientBase", "LoadContext", "LoadJob",
           "LoadPackage", "LoadResult", "destination", "duckdb", "filesystem"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    if name in DLT_ONLY_DESTINATIONS:  # `from lakeload.destinations import postgres`: an ImportError that says why
        from lakeload.destinations.registry import unsupported_destination

        raise unsupported_destination(name)
    raise AttributeError(f"module 'lakeload.destinations' has no attribute {name!r}")

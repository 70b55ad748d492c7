"""Delta Lake tables in a lakeload dataset: written by Spark executors, committed and read with delta-rs.

>>> from lakeload.delta import get_delta_tables
>>> get_delta_tables(pipeline)["users"].history()

`get_delta_tables` is imported on first use: executor modules of this package (`executor_*.py`) must
import on a bare Spark worker without the driver-side configuration and pipeline modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lakeload.delta.tables import get_delta_tables

__all__ = ["get_delta_tables"]


def __getattr__(name: str) -> Any:
    if name == "get_delta_tables":
        from lakeload.delta.tables import get_delta_tables

        return get_delta_tables
    raise AttributeError(f"module 'lakeload.delta' has no attribute {name!r}")

"""Delta Lake tables in a lakeload dataset: written by Spark executors, committed and read with delta-rs.

Example (a pipeline that loaded Delta tables)::

    from lakeload.delta import get_delta_tables
    get_delta_tables(pipeline)["users"].history()

`get_delta_tables` is imported on first use (deltalake is an optional extra). The data files are written by
the kernel's Delta tasks (`lakeload.kernel.delta`).
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

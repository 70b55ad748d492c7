"""Apache Iceberg tables in a lakeload dataset: written by Spark executors, committed and read with pyiceberg.

Example (a pipeline that loaded Iceberg tables)::

    from lakeload.iceberg import get_iceberg_tables
    get_iceberg_tables(pipeline)["users"].scan().to_arrow()

`get_iceberg_tables` is imported on first use (pyiceberg is an optional extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lakeload.iceberg.tables import get_iceberg_tables

__all__ = ["get_iceberg_tables"]


def __getattr__(name: str) -> Any:
    if name == "get_iceberg_tables":
        from lakeload.iceberg.tables import get_iceberg_tables

        return get_iceberg_tables
    raise AttributeError(f"module 'lakeload.iceberg' has no attribute {name!r}")

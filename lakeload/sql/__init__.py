"""SQL access to a filesystem dataset: `pipeline.sql_client()` and `pipeline.dataset()` over DuckDB.

Example (after a run loaded `users`)::

    with pipeline.sql_client() as client:
        client.execute_sql("SELECT count(*) FROM users")

Names are imported lazily, so that a Spark worker unpickling `lakeload.kernel.sql.read` loads neither
DuckDB nor the driver's configuration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeload.lazy_exports import lazy_getattr

_EXPORTS = {
    "FilesystemSqlClient": "lakeload.sql.client",
    "Cursor": "lakeload.sql.cursor",
    "Dataset": "lakeload.sql.dataset",
    "Relation": "lakeload.sql.relation",
    "RowCounts": "lakeload.sql.dataset",
    "ColumnNotFoundError": "lakeload.sql.errors",
    "SqlClientError": "lakeload.sql.errors",
    "SqlQueryError": "lakeload.sql.errors",
    "TableNotFoundError": "lakeload.sql.errors",
}

__all__ = [
    "ColumnNotFoundError",
    "Cursor",
    "Dataset",
    "FilesystemSqlClient",
    "Relation",
    "RowCounts",
    "SqlClientError",
    "SqlQueryError",
    "TableNotFoundError",
]

if TYPE_CHECKING:
    from lakeload.sql.client import FilesystemSqlClient
    from lakeload.sql.cursor import Cursor
    from lakeload.sql.dataset import Dataset, RowCounts
    from lakeload.sql.errors import ColumnNotFoundError, SqlClientError, SqlQueryError, TableNotFoundError
    from lakeload.sql.relation import Relation


__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())

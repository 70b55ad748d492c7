"""SQL access to a filesystem dataset: `pipeline.sql_client()` and `pipeline.dataset()` over DuckDB.

>>> with pipeline.sql_client() as client:
...     client.execute_sql("SELECT count(*) FROM users")
"""

from lakeload.sql.client import FilesystemSqlClient
from lakeload.sql.cursor import Cursor
from lakeload.sql.dataset import Dataset, Relation, RowCounts
from lakeload.sql.errors import SqlClientError, SqlQueryError, TableNotFoundError

__all__ = [
    "Cursor",
    "Dataset",
    "FilesystemSqlClient",
    "Relation",
    "RowCounts",
    "SqlClientError",
    "SqlQueryError",
    "TableNotFoundError",
]

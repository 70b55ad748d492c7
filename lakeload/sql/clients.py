"""What `pipeline.sql_client()` returns, by destination: the `SqlClient` interface `pipeline.dataset()` queries
through, and the clients of destinations other than the filesystem (found by `type_name`; the filesystem's
own is `lakeload.sql.client.FilesystemSqlClient`)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import duckdb

    from lakeload.destinations.reference import Destination
    from lakeload.schema.schema import Schema
    from lakeload.sql.cursor import Cursor


class SqlClient(Protocol):
    """SQL over one dataset through DuckDB (`execute_sql`, `execute_query`), its tables and schema."""

    schema: Schema
    dataset_name: str

    @property
    def table_names(self) -> list[str]: ...

    @property
    def native_connection(self) -> duckdb.DuckDBPyConnection: ...

    def execute_query(self, sql: str, *args: Any) -> AbstractContextManager[Cursor]: ...

    def execute_sql(self, sql: str, *args: Any) -> list[tuple[Any, ...]] | None: ...

    def close_connection(self) -> None: ...


SqlClientFactory = Callable[["Destination", str, str, "Schema"], SqlClient]


def _duckdb(destination: Destination, pipeline_name: str, dataset_name: str, schema: Schema) -> SqlClient:
    from lakeload.destinations.impl.duckdb.factory import duckdb as DuckDbDestination
    from lakeload.sql.duckdb_client import DuckDbSqlClient

    assert isinstance(destination, DuckDbDestination)
    naming = str(schema.normalizers.get("names") or destination.capabilities().naming_convention)
    schema_name = destination.schema_names(dataset_name, naming, pipeline_name)[0]  # (`MyData` is `my_data`, as in dlt)
    return DuckDbSqlClient(destination.location(pipeline_name), schema_name, schema, destination.connection())


SQL_CLIENTS: dict[str, SqlClientFactory] = {"duckdb": _duckdb}


def sql_client_factory(destination: Destination | None) -> SqlClientFactory | None:
    """The SQL client of `destination`'s type when it is not the filesystem's (None: the filesystem's)."""
    return SQL_CLIENTS.get(destination.type_name) if destination is not None else None

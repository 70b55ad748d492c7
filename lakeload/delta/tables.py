"""`get_delta_tables(pipeline)`: the dataset's Delta tables as `deltalake.DeltaTable` objects, as dlt's helper.

A table is a Delta table when its root table has `table_format: "delta"` in the schema; it lives at
`<dataset>/<table_name>/` and is opened with `table_uri` and `storage_options` (credentials merged with
`deltalake_storage_options`).

Example (a pipeline that loaded Delta tables)::

    from lakeload.delta import get_delta_tables
    tables = get_delta_tables(pipeline)               # every Delta table of the default schema
    tables["users"].optimize.compact()
    get_delta_tables(pipeline, "users", "users__pets")  # only these (ValueError for others)
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Protocol

from lakeload.delta.log_damage import damaged, log_damage
from lakeload.delta.storage import delta_error, storage_options, table_uri
from lakeload.errors import DeltaTableNotFoundError, MissingDependencyError

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from lakeload.destinations.impl.filesystem.client import FilesystemClient
    from lakeload.schema.schema import Schema

DELTA = "delta"


class DatasetClient(Protocol):
    """What `get_delta_tables` reads of a pipeline's SQL client: the schema and the bucket's client."""

    @property
    def schema(self) -> Schema: ...

    @property
    def client(self) -> FilesystemClient: ...


class HasDataset(Protocol):
    """A pipeline as `get_delta_tables` uses it (`lakeload.Pipeline`)."""

    def sql_client(self, schema_name: str | None = None) -> DatasetClient: ...


def require_deltalake() -> ModuleType:
    """The `deltalake` module, or a `MissingDependencyError` saying which extra installs it."""
    try:
        import deltalake
    except ImportError as exc:
        raise MissingDependencyError(
            'Delta tables need the deltalake package: pip install "lakeload[deltalake]"'
        ) from exc
    return deltalake


def is_delta_table(schema: Schema, table_name: str) -> bool:
    """Whether `table_name` is a Delta table: its root table has `table_format="delta"`.

    >>> from lakeload.schema.schema import Schema
    >>> schema = Schema("crm")
    >>> schema.update_table({"name": "users", "table_format": "delta", "columns": {}})
    >>> schema.update_table({"name": "users__pets", "parent": "users", "columns": {}})
    >>> is_delta_table(schema, "users__pets")  # users has table_format="delta"
    True
    """
    return table_name in schema.tables and schema.root_table_of(table_name).get("table_format") == DELTA


def delta_table_names(schema: Schema, include_dlt_tables: bool = False) -> list[str]:
    """The schema's Delta tables in schema order (data tables only unless `include_dlt_tables`)."""
    names = list(schema.tables) if include_dlt_tables else [t["name"] for t in schema.data_tables()]
    return [name for name in names if is_delta_table(schema, name)]


def open_delta_table(client: FilesystemClient, table_name: str) -> DeltaTable | None:
    """The current version of the table's Delta table; None when it has no `_delta_log` yet.

    Errors of delta-rs become a `DestinationError` naming the bucket, never the credentials (a damaged log: a
    `DeltaLogDamagedError` naming the table and the fix).
    """
    deltalake = require_deltalake()
    config = client.config
    uri = table_uri(config, client.dataset_path, table_name)
    options = storage_options(config)
    try:
        table: DeltaTable = deltalake.DeltaTable(uri, storage_options=options)
    except deltalake.exceptions.TableNotFoundError:  # no _delta_log (access errors are OSErrors)
        return None
    except Exception as exc:
        what = log_damage(exc)
        error = damaged(table_name, uri, what) if what else delta_error(exc, config, options, f"open Delta table '{table_name}' in")
    else:
        return table
    raise error  # outside `except`: no implicit context that could carry a secret


def _check_names(schema: Schema, asked: tuple[str, ...], delta_names: list[str]) -> None:
    unknown = [name for name in asked if name not in delta_names]
    if not unknown:
        return
    what = ", ".join(
        f"'{name}' ({'not a Delta table' if name in schema.tables else 'not in the schema'})" for name in unknown
    )
    raise DeltaTableNotFoundError(
        f"Schema '{schema.name}' has no Delta table {what}. Delta tables in it: {delta_names}. "
        "Pass schema_name= to look in another schema."
    )


def get_delta_tables(pipeline: HasDataset, *table_names: str, schema_name: str | None = None,
                     include_dlt_tables: bool = False) -> dict[str, DeltaTable]:
    """The Delta tables of the pipeline's default schema (or `schema_name`) as `{name: deltalake.DeltaTable}`.

    With `table_names`, only those; a name that is not a Delta table of the schema raises
    `DeltaTableNotFoundError` (a `ValueError`) listing the Delta tables there are, and so does a named
    table that has not been created yet. Without names, tables not created yet are left out.

    Example (a pipeline that loaded the Delta table `users` twice)::

        get_delta_tables(pipeline, "users")["users"].version()   # 1
    """
    require_deltalake()
    sql_client = pipeline.sql_client(schema_name)
    schema, client = sql_client.schema, sql_client.client
    delta_names = delta_table_names(schema, include_dlt_tables)
    _check_names(schema, table_names, delta_names)
    tables: dict[str, DeltaTable] = {}
    for name in table_names or tuple(delta_names):
        table = open_delta_table(client, name)
        if table is not None:
            tables[name] = table
        elif table_names:
            raise DeltaTableNotFoundError(
                f"Delta table '{name}' has not been created yet: no _delta_log at "
                f"{table_uri(client.config, client.dataset_path, name)}. Load data into it first. "
                f"Delta tables in schema '{schema.name}': {delta_names}."
            )
    return tables

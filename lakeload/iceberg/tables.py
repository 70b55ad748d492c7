"""`get_iceberg_tables(pipeline)`: the dataset's Iceberg tables as `pyiceberg.table.Table` objects, as dlt's helper.

A table is an Iceberg table when its root table has `table_format: "iceberg"` in the schema; it lives at
`<dataset>/<table_name>/` (`data/`, `metadata/`) and is opened through the dataset's catalog
(`lakeload.iceberg.catalog`).

Example (a pipeline that loaded Iceberg tables)::

    from lakeload.iceberg import get_iceberg_tables
    tables = get_iceberg_tables(pipeline)                  # every Iceberg table of the default schema
    tables["users"].scan(row_filter="id > 10").to_arrow()
    get_iceberg_tables(pipeline, "users", "users__pets")   # only these (ValueError for others)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeload.errors import IcebergTableNotFoundError
from lakeload.iceberg.catalog import DatasetCatalog

if TYPE_CHECKING:
    from pyiceberg.table import Table

    from lakeload.delta.tables import HasDataset
    from lakeload.schema.schema import Schema

ICEBERG = "iceberg"


def is_iceberg_table(schema: Schema, table_name: str) -> bool:
    """Whether `table_name` is an Iceberg table: its root table has `table_format="iceberg"`.

    >>> from lakeload.schema.schema import Schema
    >>> schema = Schema("crm")
    >>> schema.update_table({"name": "users", "table_format": "iceberg", "columns": {}})
    >>> schema.update_table({"name": "users__pets", "parent": "users", "columns": {}})
    >>> is_iceberg_table(schema, "users__pets")
    True
    """
    return table_name in schema.tables and schema.root_table_of(table_name).get("table_format") == ICEBERG


def iceberg_table_names(schema: Schema) -> list[str]:
    """The schema's Iceberg data tables in schema order."""
    return [t["name"] for t in schema.data_tables() if is_iceberg_table(schema, t["name"])]


def get_iceberg_tables(pipeline: HasDataset, *table_names: str, schema_name: str | None = None) -> dict[str, Table]:
    """The Iceberg tables of the pipeline's default schema (or `schema_name`) as `{name: pyiceberg Table}`.

    With `table_names`, only those; a name that is not an Iceberg table of the schema, or one not created yet,
    raises `IcebergTableNotFoundError` (a `ValueError`) listing the Iceberg tables there are. Without names,
    tables not created yet are left out.
    """
    sql_client = pipeline.sql_client(schema_name)
    schema, client = sql_client.schema, sql_client.client
    names = iceberg_table_names(schema)
    unknown = [n for n in table_names if n not in names]
    if unknown:
        raise IcebergTableNotFoundError(
            f"Schema '{schema.name}' has no Iceberg table {', '.join(repr(n) for n in unknown)}. Iceberg tables in it: "
            f"{names}. Pass schema_name= to look in another schema."
        )
    catalog = DatasetCatalog(client)
    tables: dict[str, Table] = {}
    for name in table_names or tuple(names):
        table = catalog.load(name)
        if table is not None:
            tables[name] = table
        elif table_names:
            raise IcebergTableNotFoundError(
                f"Iceberg table '{name}' has not been created yet: no metadata at {catalog.location(name)}/metadata. "
                f"Load data into it first. Iceberg tables in schema '{schema.name}': {names}."
            )
    return tables

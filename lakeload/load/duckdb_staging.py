"""The staging dataset of the DuckDB destination (`<dataset>_staging`, a schema of the same database), as dlt's
DuckDB destination keeps it, inside the package's transaction (`lakeload.load.duckdb_loader`):

- the tables that load through it are those of a `merge` root's tree, and of a `replace` root's tree with the
  `insert-from-staging` replace strategy; once the schema has any, the staging schema exists with dlt's
  `_dlt_version` table (a row per schema version) and those tables, created and given new columns as the dataset's;
- a package's trees that load through it are emptied there, then filled from the package's files; the writes into
  the dataset then read them from there (`TreeWrite(staging=...)`): a merge, or the copy of `insert-from-staging`;
- `[load] truncate_staging_dataset = true` empties its tables after the load (dlt's `truncate_staging_dataset`);
  otherwise the last load's rows stay there, as with dlt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pendulum

from lakeload.destinations.impl.duckdb.file_sources import file_source
from lakeload.destinations.impl.duckdb.sql import (
    add_columns,
    complete_columns,
    create_table,
    ident,
    insert_select,
    present_columns,
)

if TYPE_CHECKING:
    import duckdb

    from lakeload.schema.schema import Schema
    from lakeload.schema.typing import TTable

VERSION = "_dlt_version"


def existing_column_types(connection: duckdb.DuckDBPyConnection, dataset: str, table: str) -> dict[str, str] | None:
    """The columns the table has in the database and DuckDB's type of each (None: no such table)."""
    rows = connection.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = ? AND table_name = ?",
        [dataset, table],
    ).fetchall()
    return {str(r[0]): str(r[1]) for r in rows} if rows else None


def existing_columns(connection: duckdb.DuckDBPyConnection, dataset: str, table: str) -> set[str] | None:
    """The columns the table has in the database (None: no such table)."""
    found = existing_column_types(connection, dataset, table)
    return set(found) if found is not None else None


def ensure_table(connection: duckdb.DuckDBPyConnection, dataset: str, table: TTable) -> None:
    """The table exists in `dataset` with every typed column of the schema (created, or new columns added)."""
    existing = existing_columns(connection, dataset, table["name"])
    if existing is None:
        connection.execute(create_table(dataset, table))
        return
    for statement in add_columns(dataset, table["name"], [c for c in complete_columns(table) if c["name"] not in existing]):
        connection.execute(statement)


def store_version(connection: duckdb.DuckDBPyConnection, dataset: str, schema: Schema) -> None:
    """The schema's version in `<dataset>._dlt_version`, once per version hash."""
    table = f"{ident(dataset)}.{ident(VERSION)}"
    if connection.execute(f"SELECT 1 FROM {table} WHERE version_hash = ?", [schema.version_hash]).fetchone():
        return
    connection.execute(
        f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?)",
        [schema.version, schema.to_dict()["engine_version"], pendulum.now("UTC"), schema.name, schema.version_hash,
         schema.to_json()],
    )


class StagingDataset:
    """The staging schema `name` of one package's load (see the module docstring)."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, name: str, schema: Schema, replace_strategy: str) -> None:
        self.connection, self.name, self.schema, self.replace_strategy = connection, name, schema, replace_strategy

    def loads_through(self, root: TTable) -> bool:
        """Whether a root table's tree loads through the staging dataset (merge; replace by insert-from-staging)."""
        disposition = root.get("write_disposition", "append")
        return disposition == "merge" or (disposition == "replace" and self.replace_strategy == "insert-from-staging")

    def tree(self, root: TTable) -> list[TTable]:
        return [t for t in self.schema.nested_tables_of(root["name"]) if complete_columns(t)]

    def tables(self) -> list[TTable]:
        """Every table of the schema that loads through the staging dataset (with data or not, as dlt's)."""
        roots = [t for t in self.schema.data_tables() if not t.get("parent") and self.loads_through(t)]
        return [table for root in roots for table in self.tree(root)]

    def fill(self, roots: list[Any], files: dict[str, list[str]]) -> list[str]:
        """The staging schema readied (tables, version), the trees of `roots` that load through it emptied there and
        filled with the package's files (`files`: per table); returns the names of those roots."""
        tables = self.tables()
        if not tables:
            return []
        self.connection.execute(f"CREATE SCHEMA IF NOT EXISTS {ident(self.name)}")
        self.connection.execute(create_table(self.name, self.schema.tables[VERSION]))
        for table in tables:
            ensure_table(self.connection, self.name, table)
        store_version(self.connection, self.name, self.schema)
        staged = [root for root in roots if self.loads_through(root)]
        for root in staged:
            for table in self.tree(root):
                name = table["name"]
                self.connection.execute(f"DELETE FROM {self._table(name)}")
                if not files.get(name):
                    continue
                columns = [c["name"] for c in complete_columns(table)]
                source = file_source(files[name], table, self.connection)
                present = present_columns(self.connection, source)
                self.connection.execute(insert_select(self._table(name), columns, present, source))
        return [root["name"] for root in staged]

    def truncate(self) -> None:
        """Every staging table emptied (`[load] truncate_staging_dataset`); `_dlt_version` stays."""
        for table in self.tables():
            if existing_columns(self.connection, self.name, table["name"]) is not None:
                self.connection.execute(f"DELETE FROM {self._table(table['name'])}")

    def drop(self, names: list[str]) -> None:
        """Tables a `refresh` drops, dropped here too (as dlt drops them on its staging dataset)."""
        for name in names:
            if existing_columns(self.connection, self.name, name) is not None:
                self.connection.execute(f"DROP TABLE {self._table(name)}")

    def _table(self, name: str) -> str:
        return f"{ident(self.name)}.{ident(name)}"

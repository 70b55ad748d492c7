"""dlt's `scd2` merge of one root table's tree into DuckDB, as SQL inside the package's transaction (called by
`lakeload.load.duckdb_writes.TreeWrite`; no row passes through Python). The rows are those dlt 1.31's DuckDB
destination leaves (`lakeload.delta.merge_scd2` states the algorithm; the hints are `lakeload.schema.scd2`'s):

1. the stored active records (valid-to null, or the `active_record_timestamp`) whose row version (`_dlt_id`, the
   hash of the record's data, or the `row_version_column_name`) no merged loaded row has are retired: their
   valid-to becomes the load's boundary (`boundary_timestamp`, else the package's creation time); with a
   `merge_key`, only those whose merge key the load holds (a `destination_scope` instead: those in it);
2. the loaded rows whose row version is not an active record's are inserted, valid from the boundary, valid-to
   null (or the active record timestamp);
3. each nested table (parents first) gets the loaded rows whose `_dlt_id` it does not hold yet: nested ids derive
   from the root's row hash, so a new version's nested rows go in and a version seen before (a record coming
   back) keeps the rows it had. Retired records keep theirs.

A `source_filter` selects the loaded rows merged (the nested rows: those below merged parents), as in dlt.

Example (inside a package's transaction; `tree` the root table first, then its nested tables parents first)::

    Scd2Write(connection, tree, table_of, sources, created_at="2024-01-01T00:00:00+00:00").run()
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from lakeload.destinations.impl.duckdb.sql import complete_columns, ident, idents, literal
from lakeload.errors import LoadError
from lakeload.kernel.normalize.relational import C_DLT_ID, C_DLT_PARENT_ID
from lakeload.load.duckdb_merge_scope import MergeScope
from lakeload.schema.scd2 import (
    active_record_timestamp,
    boundary_timestamp,
    row_version_column,
    validity_columns,
)
from lakeload.schema.schema import columns_with_hint

if TYPE_CHECKING:
    import duckdb

    from lakeload.schema.typing import TTable


def timestamp_literal(value: datetime | None) -> str:
    """A UTC timestamp as a DuckDB `TIMESTAMP WITH TIME ZONE` value (None: NULL).

    >>> from datetime import timezone
    >>> timestamp_literal(datetime(2024, 1, 1, tzinfo=timezone.utc))
    "CAST('2024-01-01T00:00:00+00:00' AS TIMESTAMP WITH TIME ZONE)"
    """
    return "NULL" if value is None else f"CAST({literal(value.isoformat())} AS TIMESTAMP WITH TIME ZONE)"


class Scd2Write:
    """The scd2 merge of one tree (module docstring). `tree`: the root table, then its nested tables, parents first;
    `table_of(name)`: the stored table's qualified name; `sources[name]`: the relation of the loaded rows;
    `created_at`: the package's creation time (the boundary without `boundary_timestamp`)."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, tree: list[TTable], table_of: Callable[[str], str],
                 sources: dict[str, str], created_at: str | None) -> None:
        self.connection, self.tree, self.table_of, self.sources = connection, tree, table_of, sources
        self.root = tree[0]
        self.valid_from, self.valid_to = validity_columns(self.root)
        self.version = row_version_column(self.root)
        active_at = active_record_timestamp(self.root)
        self.active_value = timestamp_literal(active_at)
        self.is_active = f"{ident(self.valid_to)} IS NULL" if active_at is None else f"{ident(self.valid_to)} = {self.active_value}"
        self.boundary = timestamp_literal(boundary_timestamp(self.root, created_at))
        self.scope = MergeScope(table_of(self.root["name"]), sources[self.root["name"]], self.root)

    def run(self) -> None:
        """Retire, insert the new versions, then the nested rows not stored yet."""
        columns = [c["name"] for c in complete_columns(self.root)]
        if self.version not in columns:
            raise LoadError(
                f"Table '{self.root['name']}': the scd2 row version column '{self.version}' is not in the loaded rows. "
                "Give every record that column (row_version_column_name), or drop the option to version rows by hash. "
                "Then drop this package: pipeline.drop_pending_packages()."
            )
        self._retire()
        self._insert_versions(columns)
        merged = {self.root["name"]: (self._root_row_key(), self.scope.filtered())}
        for table in self.tree[1:]:
            if table["name"] in self.sources:
                self._insert_nested(table, merged)

    def _retire(self) -> None:
        target = self.table_of(self.root["name"])
        condition = self.scope.absent_in_scope([self.version], self.is_active)
        self.connection.execute(f"UPDATE {target} SET {ident(self.valid_to)} = {self.boundary} WHERE {condition}")

    def _insert_versions(self, columns: list[str]) -> None:
        target, version = self.table_of(self.root["name"]), ident(self.version)
        values = {self.valid_from: self.boundary, self.valid_to: self.active_value}
        selected = ", ".join(f"{values[c]} AS {ident(c)}" if c in values else ident(c) for c in columns)
        self.connection.execute(
            f"INSERT INTO {target} ({idents(columns)}) SELECT {selected} FROM {self.scope.filtered()} "
            f"WHERE {version} NOT IN (SELECT {version} FROM {target} WHERE {self.is_active})"
        )

    def _root_row_key(self) -> str:
        """The root column nested rows point to: its row key (`_dlt_id` with a user's row version), else the row hash."""
        keys = columns_with_hint(self.root, "row_key")
        return keys[0] if keys else self.version

    def _insert_nested(self, table: TTable, merged: dict[str, tuple[str, str]]) -> None:
        """The loaded rows of `table` not stored yet; with a `source_filter`, only those below merged parents
        (`merged`: each table's row key and its merged loaded rows)."""
        name, parent = table["name"], str(table.get("parent"))
        if parent not in merged:
            return
        columns = [c["name"] for c in complete_columns(table)]
        target, row_key = self.table_of(name), ident(C_DLT_ID)
        rows = self.sources[name]
        if self.scope.source_filter:
            parent_key, parents = merged[parent]
            rows = f"(SELECT * FROM {rows} WHERE {ident(C_DLT_PARENT_ID)} IN (SELECT {ident(parent_key)} FROM {parents}))"
        self.connection.execute(
            f"INSERT INTO {target} ({idents(columns)}) SELECT {idents(columns)} FROM {rows} "
            f"WHERE {row_key} NOT IN (SELECT {row_key} FROM {target})"
        )
        merged[name] = (C_DLT_ID, rows)

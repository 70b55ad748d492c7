"""The SQL conditions that scope a DuckDB merge as dlt 1.31's SQL merge jobs scope it (`scd2` retirements, `cdc`'s
deletion of absent records; `lakeload.load.duckdb_scd2`, `lakeload.load.duckdb_writes`):

- `source_filter` (table hint `x-merge-source-filter`): a condition on the loaded rows' columns; only the rows it
  holds for are merged (a null counts as false, as in SQL's WHERE);
- the stored rows a merge may retire or delete: those in the `destination_scope` (`x-merge-destination-scope`,
  `{table}` the stored table and `{staging_table}` the loaded rows), else those whose `merge_key` the load holds,
  else every stored row;
- a stored record is absent when its key columns (the primary key for `cdc`, the row version for `scd2`) match no
  loaded row.

>>> scope = MergeScope('"ds"."users"', '"ds_staging"."users"', {"name": "users", "columns": {}})
>>> scope.absent(["id"])
'("id") NOT IN (SELECT "id" FROM "ds_staging"."users")'
>>> MergeScope('"t"', '"s"', {"name": "t", "columns": {"day": {"merge_key": True}}}).partition()
['("day") IN (SELECT "day" FROM "s")']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lakeload.destinations.impl.duckdb.sql import idents
from lakeload.schema.schema import columns_with_hint


class MergeScope:
    """The scoping conditions of one root table's merge: `target` is the stored table's qualified name, `source`
    the SQL relation of the loaded rows (the staging dataset's table, or the package's files)."""

    def __init__(self, target: str, source: str, root: Mapping[str, Any]) -> None:
        self.target, self.source, self.root = target, source, root
        condition = root.get("x-merge-source-filter")
        self.source_filter = str(condition) if condition else None
        scope = root.get("x-merge-destination-scope")
        self.scope = str(scope).replace("{table}", target).replace("{staging_table}", source) if scope else None
        self.merge_key = columns_with_hint(root, "merge_key")  # type: ignore[arg-type]

    def loaded(self, columns: list[str]) -> str:
        """The loaded rows' `columns` that are merged (those `source_filter` holds for)."""
        where = f" WHERE coalesce(({self.source_filter}), false)" if self.source_filter else ""
        return f"SELECT {idents(columns)} FROM {self.source}{where}"

    def filtered(self) -> str:
        """The loaded rows that are merged, as a relation."""
        return f"(SELECT * FROM {self.source} WHERE coalesce(({self.source_filter}), false))" if self.source_filter else self.source

    def partition(self) -> list[str]:
        """The conditions on the stored rows a merge may retire or delete (none: the whole table)."""
        if self.scope:
            return [f"coalesce(({self.scope}), false)"]
        if self.merge_key:
            return [f"({idents(self.merge_key)}) IN ({self.loaded(self.merge_key)})"]
        return []

    def absent(self, key_columns: list[str]) -> str:
        """The stored rows whose `key_columns` match no merged loaded row."""
        return f"({idents(key_columns)}) NOT IN ({self.loaded(key_columns)})"

    def absent_in_scope(self, key_columns: list[str], *more: str) -> str:
        """Absent stored rows within the partition (and every condition of `more`), as one condition."""
        return " AND ".join([self.absent(key_columns), *more, *self.partition()])

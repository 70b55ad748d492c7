"""Executor-safe: the shapes of dlt's stored schema that lakeload reads and writes, as TypedDicts (dlt's own
names: `TColumnSchema`, `TTableSchema`, `TStoredSchema`), so that a table or a column is a typed contract between
extract, normalize (on executors) and load, not a bare dict.

`TTable` and `TColumn` are the short names the modules use. A hint named by a variable (`column[hint] = True`)
goes through `cast(dict[str, Any], ...)`: dlt's hints are open-ended, and so is the JSON read back from packages.

>>> column: TColumnSchema = {"name": "id", "data_type": "bigint", "nullable": False, "primary_key": True}
>>> table: TTableSchema = {"name": "users", "columns": {"id": column}, "write_disposition": "merge"}
>>> table["columns"]["id"]["data_type"]
'bigint'
"""

from __future__ import annotations

from typing import Any, TypedDict

# A column: its name and data type, nullability, and dlt's hints (`primary_key`, `merge_key`, `partition`, ...).
TColumnSchema = TypedDict(
    "TColumnSchema",
    {
        "name": str,
        "data_type": str,
        "nullable": bool,
        "precision": int,
        "scale": int,
        "timezone": bool,
        "description": str,
        "primary_key": bool,
        "merge_key": bool,
        "unique": bool,
        "partition": bool,
        "cluster": bool,
        "sort": bool,
        "row_key": bool,
        "parent_key": bool,
        "root_key": bool,
        "hard_delete": bool,
        "dedup_sort": str,
        "incremental": bool,
        "variant": bool,
        "x-normalizer": dict[str, Any],
        "x-nested-type": str,
    },
    total=False,
)

# A table: its columns in order, its parent (nested tables), its write disposition and dlt's table hints.
TTableSchema = TypedDict(
    "TTableSchema",
    {
        "name": str,
        "description": str,
        "columns": dict[str, TColumnSchema],
        "parent": str,
        "resource": str,
        "write_disposition": str,
        "table_format": str,
        "file_format": str,
        "schema_contract": Any,
        "table_sealed": bool,
        "x-normalizer": dict[str, Any],
        "x-merge-strategy": str,
        "x-replace-strategy": str,
        "x-incremental": Any,
        "references": list[dict[str, Any]],
    },
    total=False,
)


class TStoredSchema(TypedDict, total=False):
    """A whole schema as `_dlt_version` and the working folder store it (dlt's engine version 11 shape)."""

    version: int
    version_hash: str
    previous_hashes: list[str]
    engine_version: int
    name: str
    tables: dict[str, TTableSchema]
    settings: dict[str, Any]
    normalizers: dict[str, Any]


TTable = TTableSchema
TColumn = TColumnSchema

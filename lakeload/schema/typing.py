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


class TTableReference(TypedDict, total=False):
    """A table's reference to another table (dlt's `references` hint): its columns and the ones they point to."""

    columns: list[str]
    referenced_table: str
    referenced_columns: list[str]
    table: str | None
    label: str | None
    cardinality: str | None  # dlt's `one_to_many`, `many_to_one`, ...


# What dlt's normalizer records on a column (`x-normalizer`): the column was seen with nulls first
TColumnNormalizerHints = TypedDict("TColumnNormalizerHints", {"seen-null-first": bool}, total=False)

# What dlt's normalizer records on a table (`x-normalizer`): rows were seen, a contract lets its columns evolve
# once, a source's nesting limit for it
TTableNormalizerHints = TypedDict(
    "TTableNormalizerHints", {"seen-data": bool, "evolve-columns-once": bool, "max_nesting": int}, total=False
)

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
        "x-normalizer": TColumnNormalizerHints,
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
        "x-normalizer": TTableNormalizerHints,
        "x-merge-strategy": str,
        "x-replace-strategy": str,
        "x-incremental": Any,
        "references": list[TTableReference],
    },
    total=False,
)


class TSchemaSettings(TypedDict, total=False):
    """A schema's `settings`: its contract, type detections and default column hints (hint -> name patterns)."""

    schema_contract: Any  # a mode or a dict of entity -> mode, as users write it (`schema.contract.ContractSetting`)
    detections: list[str]
    default_hints: dict[str, list[str]]
    preferred_types: dict[str, str]


class TRelationalNormalizerConfig(TypedDict, total=False):
    """The relational normalizer's options a source sets (`normalizers.json.config`)."""

    max_nesting: int
    root_key_propagation: bool
    propagation: Any  # dlt's root -> table -> column propagation map, kept as stored


class TJSONNormalizer(TypedDict, total=False):
    """`normalizers.json`: the dotted name of dlt's normalizer module, and its options."""

    module: str
    config: TRelationalNormalizerConfig


class TNormalizersConfig(TypedDict, total=False):
    """A schema's `normalizers`: the naming convention's name and the JSON normalizer."""

    names: str
    allow_identifier_change_on_table_with_data: bool
    use_break_path_on_normalize: bool
    detections: list[str]
    json: TJSONNormalizer


class TStoredSchema(TypedDict, total=False):
    """A whole schema as `_dlt_version` and the working folder store it (dlt's engine version 11 shape)."""

    version: int
    version_hash: str
    previous_hashes: list[str]
    engine_version: int
    name: str
    tables: dict[str, TTableSchema]
    settings: TSchemaSettings
    normalizers: TNormalizersConfig


TTable = TTableSchema
TColumn = TColumnSchema

"""dlt's schema types (`dlt.common.schema.typing`) as user code imports them: lakeload's own table and column
shapes (`lakeload.schema.typing`, which already carry dlt's names), its data types and contract modes, and the
literal types of dlt's hints.

>>> columns: TTableSchemaColumns = {"id": {"name": "id", "data_type": "bigint", "primary_key": True}}
>>> disposition: TWriteDisposition = "merge"
>>> sorted(COLUMN_HINTS)[:3]
['cluster', 'dedup_sort', 'hard_delete']
"""

from __future__ import annotations

from typing import Literal, NewType, TypeAlias, TypedDict, get_args

from lakeload.common.typing import TColumnNames, TLoaderFileFormat
from lakeload.schema.contract import ContractEntity, ContractMode
from lakeload.schema.datatypes import DataType
from lakeload.schema.scd2 import DEFAULT_VALIDITY_COLUMN_NAMES as _VALIDITY_COLUMNS
from lakeload.schema.schema import DLT_TABLE_PREFIX, ENGINE_VERSION
from lakeload.schema.typing import (
    TColumnSchema,
    TNormalizersConfig,
    TSchemaSettings,
    TStoredSchema,
    TTableReference,
    TTableSchema,
)

__all__ = [
    "COLUMN_HINTS",
    "C_DLT_ID",
    "C_DLT_LOAD_ID",
    "DEFAULT_VALIDITY_COLUMN_NAMES",
    "DLT_NAME_PREFIX",
    "LOADS_TABLE_NAME",
    "PIPELINE_STATE_TABLE_NAME",
    "SCHEMA_ENGINE_VERSION",
    "SIMPLE_REGEX_PREFIX",
    "VERSION_TABLE_NAME",
    "TColumnHint",
    "TColumnName",
    "TColumnNames",
    "TColumnSchema",
    "TDataType",
    "TFileFormat",
    "TLoaderMergeStrategy",
    "TLoaderReplaceStrategy",
    "TNormalizersConfig",
    "TReferenceCardinality",
    "TSchemaContract",
    "TSchemaContractDict",
    "TSchemaContractEntities",
    "TSchemaEvolutionMode",
    "TSchemaSettings",
    "TSchemaTables",
    "TSimpleRegex",
    "TStoredSchema",
    "TTableFormat",
    "TTableReference",
    "TTableSchema",
    "TTableSchemaColumns",
    "TWriteDisposition",
]

SCHEMA_ENGINE_VERSION = ENGINE_VERSION
DLT_NAME_PREFIX = DLT_TABLE_PREFIX
VERSION_TABLE_NAME = "_dlt_version"
LOADS_TABLE_NAME = "_dlt_loads"
PIPELINE_STATE_TABLE_NAME = "_dlt_pipeline_state"
C_DLT_ID = "_dlt_id"
C_DLT_LOAD_ID = "_dlt_load_id"
SIMPLE_REGEX_PREFIX = "re:"
"""A name pattern given as a regex (`re:^_dlt`) rather than a name."""
DEFAULT_VALIDITY_COLUMN_NAMES = list(_VALIDITY_COLUMNS)
"""scd2's validity columns when none are named: valid from, valid to."""

TDataType: TypeAlias = DataType
TSchemaEvolutionMode: TypeAlias = ContractMode
TSchemaContractEntities: TypeAlias = ContractEntity
TColumnHint: TypeAlias = Literal[
    "nullable", "partition", "cluster", "primary_key", "sort", "unique", "merge_key", "row_key", "parent_key",
    "root_key", "hard_delete", "dedup_sort",
]
COLUMN_HINTS: set[TColumnHint] = set(get_args(TColumnHint))
TWriteDisposition: TypeAlias = Literal["skip", "append", "replace", "merge"]
TLoaderMergeStrategy: TypeAlias = Literal["delete-insert", "scd2", "upsert", "insert-only", "cdc"]
TLoaderReplaceStrategy: TypeAlias = Literal["truncate-and-insert", "insert-from-staging", "staging-optimized"]
TTableFormat: TypeAlias = Literal["iceberg", "delta", "hive", "native"]
TFileFormat: TypeAlias = Literal[Literal["preferred"], TLoaderFileFormat]
TReferenceCardinality: TypeAlias = Literal[
    "zero_to_one", "one_to_zero", "zero_to_many", "many_to_zero", "one_to_many", "many_to_one", "one_to_one",
    "many_to_many",
]
TSimpleRegex = NewType("TSimpleRegex", str)
TColumnName = NewType("TColumnName", str)
TTableSchemaColumns: TypeAlias = dict[str, TColumnSchema]
TSchemaTables: TypeAlias = dict[str, TTableSchema]


class TSchemaContractDict(TypedDict, total=False):
    """A schema contract per entity, as users write it (`{"columns": "freeze"}`); a missing entity evolves."""

    tables: TSchemaEvolutionMode | None
    columns: TSchemaEvolutionMode | None
    data_type: TSchemaEvolutionMode | None


TSchemaContract: TypeAlias = TSchemaEvolutionMode | TSchemaContractDict
"""A contract for every entity (`"freeze"`) or per entity."""

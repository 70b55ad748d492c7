"""dlt's `dlt.common.schema` as user code imports it: lakeload's `Schema` (what `lakeload.Schema` is), its
`DataValidationError` (raised when a `freeze` contract refuses data) and the schema types of
`lakeload.common.schema.typing`.

>>> from lakeload.common.schema import Schema, TColumnSchema
>>> Schema("events").name
'events'
"""

from __future__ import annotations

from lakeload.common.schema.typing import (
    COLUMN_HINTS,
    TColumnHint,
    TColumnSchema,
    TSchemaContractDict,
    TSchemaTables,
    TStoredSchema,
    TTableSchema,
    TTableSchemaColumns,
)
from lakeload.errors import DataValidationError
from lakeload.schema.contract import EVOLVE as DEFAULT_SCHEMA_CONTRACT_MODE
from lakeload.schema.schema import Schema

__all__ = [
    "COLUMN_HINTS",
    "DEFAULT_SCHEMA_CONTRACT_MODE",
    "DataValidationError",
    "Schema",
    "TColumnHint",
    "TColumnSchema",
    "TSchemaContractDict",
    "TSchemaTables",
    "TStoredSchema",
    "TTableSchema",
    "TTableSchemaColumns",
]

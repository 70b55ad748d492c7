"""The shapes of the table hints a resource is given (dlt's `TResourceHints` and its parts), as TypedDicts.

`@lakeload.resource(...)`, `Resource.apply_hints(...)` and `lakeload.mark.make_hints(...)` take them with dlt's
names; `TableHints` (`extract.hints`) holds them once checked. A column hint is dlt's `TColumnSchema` (partial).

>>> hints: ResourceHints = {"table_name": "users", "write_disposition": {"disposition": "merge", "strategy": "upsert"}}
>>> hints["write_disposition"]["disposition"]
'merge'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

from lakeload.schema.typing import TColumnSchema


class TableReference(TypedDict, total=False):
    """dlt's table reference: `columns` of this table point at `referenced_columns` of `referenced_table`."""

    columns: Sequence[str]
    referenced_table: str
    referenced_columns: Sequence[str]
    label: str
    cardinality: str
    table: str | None


class _WriteDisposition(TypedDict):
    disposition: str


class WriteDisposition(_WriteDisposition, total=False):
    """`write_disposition` as a dict (dlt's `TWriteDispositionDict`/`TMergeDispositionDict`): the disposition and,
    for a merge, its strategy and the strategy's options (scd2's validity columns, ...)."""

    strategy: str
    validity_column_names: list[str]
    active_record_timestamp: Any  # a datetime (or its text), None: NULL marks active records
    boundary_timestamp: Any
    row_version_column_name: str


ColumnsHint = dict[str, TColumnSchema] | Sequence[TColumnSchema]
"""Column hints as given: by name, or a list of column dicts (each with its `name`)."""

AdditionalTableHints = dict[str, Any]
"""Extra keys copied onto the table schema as given (dlt's `additional_table_hints`, e.g. `x-` keys). Arbitrary
by design: any key a user stores with the table."""


class NestedHints(TypedDict, total=False):
    """The hints of one nested table (dlt's `TResourceNestedHints`; `mark.make_nested_hints`)."""

    columns: ColumnsHint
    primary_key: str | Sequence[str]
    merge_key: str | Sequence[str]
    references: Sequence[TableReference]
    additional_table_hints: AdditionalTableHints
    write_disposition: str | WriteDisposition


class ResourceHints(TypedDict, total=False):
    """The table hints given to a resource or a marked item (dlt's `TResourceHints`; `mark.make_hints`)."""

    table_name: str
    write_disposition: str | WriteDisposition
    columns: ColumnsHint
    primary_key: str | Sequence[str]
    merge_key: str | Sequence[str]
    table_format: str
    file_format: str
    max_table_nesting: int
    references: Sequence[TableReference]
    nested_hints: dict[str | tuple[str, ...], NestedHints]
    additional_table_hints: AdditionalTableHints

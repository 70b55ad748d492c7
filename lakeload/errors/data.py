"""Errors about the data: a schema contract broken, a value out of range, a table not in the schema, a source
that cannot read its files, an incremental that cannot filter its items.
"""

from __future__ import annotations

from lakeload.errors.base import ExtractError, SchemaError


class DataValidationError(SchemaError):
    """Data breaks a schema contract set to `freeze` (dlt's `DataValidationError`): a new table, a new column or a
    value of another type than its column's. Nothing of the package reaches the bucket; the message says how to
    change the contract."""

    def __init__(
        self, schema_name: str | None, table_name: str, column_name: str | None, entity: str, mode: str, message: str
    ) -> None:
        self.schema_name = schema_name
        self.table_name = table_name
        self.column_name = column_name
        self.schema_entity = entity  # "tables", "columns" or "data_type" (dlt's names)
        self.contract_mode = mode
        self.detail = message
        column = f", column `{column_name}`" if column_name else ""
        super().__init__(
            f"Schema `{schema_name}`, table `{table_name}`{column}: contract on `{entity}` with mode `{mode}` is "
            f"violated. {message} To accept the change, relax the contract, e.g. "
            f"`schema_contract={{\"{entity}\": \"evolve\"}}` (or \"discard_row\"/\"discard_value\" to drop the "
            "data) on the resource, the source or `pipeline.run()`."
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.schema_name, self.table_name, self.column_name, self.schema_entity,
                             self.contract_mode, self.detail))


class IntegerOutOfRangeError(SchemaError):
    """An integer beyond the 64-bit range (2**63 and above) in a `bigint` column of a Parquet or CSV file.

    dlt fails on it too; the message names the table and column and the column types that hold such values.
    """

    def __init__(self, table_name: str, column_name: str) -> None:
        self.table_name, self.column_name = table_name, column_name
        super().__init__(
            f"Table `{table_name}`, column `{column_name}`: an integer is beyond the 64-bit range of its `bigint` "
            f"type (-2**63 .. 2**63-1). Fix: declare the column's type on the resource or in run(), e.g. "
            f"columns={{\"{column_name}\": {{\"data_type\": \"decimal\"}}}} (or \"wei\" or \"text\"), "
            "or load this table with loader_file_format=\"jsonl\"."
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.table_name, self.column_name))


class DecimalOutOfRangeError(SchemaError):
    """A value that does not fit the decimal type of its column in a Parquet or CSV file (a `precision` hint without
    a `scale` gives scale 0 there, as in dlt's Parquet writer, so `12.5` does not fit). The message names the table,
    the column and the hints that hold the value."""

    def __init__(self, table_name: str, column_name: str, arrow_type: str) -> None:
        self.table_name, self.column_name, self.arrow_type = table_name, column_name, arrow_type
        super().__init__(
            f"Table `{table_name}`, column `{column_name}`: a value does not fit the column's type {arrow_type} "
            f"without losing digits. Fix: give the column a precision and scale that hold it, e.g. "
            f"columns={{\"{column_name}\": {{\"data_type\": \"decimal\", \"precision\": 38, \"scale\": 9}}}}, "
            "or load this table with loader_file_format=\"jsonl\"."
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.table_name, self.column_name, self.arrow_type))


class TableNotFoundError(SchemaError, KeyError):
    """A schema has no table of the asked name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class SourceError(ExtractError):
    """A source cannot read its files: the bucket is unreachable, refuses the credentials, or a reader is unknown."""


class IncrementalError(ExtractError):
    """Incremental loading (`lakeload.sources.incremental`) is misconfigured or met data it cannot filter."""


class IncrementalCursorPathMissing(IncrementalError):
    """An item has no value at the incremental's cursor path (dlt's `IncrementalCursorPathMissing`)."""

    def __init__(self, resource_name: str, cursor_path: str, item: object, detail: str = "") -> None:
        self.resource_name, self.cursor_path, self.item = resource_name, cursor_path, item
        super().__init__(
            f"Resource '{resource_name}': the cursor path '{cursor_path}' was not found in the item {_shown(item)}. "
            f"{detail}Every item must hold the cursor; use the field names of the data as the resource yields it "
            "(before normalization), or create the incremental with on_cursor_value_missing='include' (keep such "
            "items) or 'exclude' (drop them)."
        )


class IncrementalCursorPathHasValueNone(IncrementalError):
    """An item holds None at the incremental's cursor path (dlt's `IncrementalCursorPathHasValueNone`)."""

    def __init__(self, resource_name: str, cursor_path: str, item: object) -> None:
        self.resource_name, self.cursor_path, self.item = resource_name, cursor_path, item
        super().__init__(
            f"Resource '{resource_name}': the cursor path '{cursor_path}' is None in the item {_shown(item)}. Every "
            "item must hold a cursor value; create the incremental with on_cursor_value_missing='include' (keep such "
            "items) or 'exclude' (drop them)."
        )


class IncrementalCursorInvalidCoercion(IncrementalError):
    """A cursor value of the data cannot be compared with the incremental's start or end value."""

    def __init__(self, resource_name: str, cursor_path: str, bound: str, bound_value: object, row_value: object, detail: str) -> None:
        self.resource_name, self.cursor_path = resource_name, cursor_path
        super().__init__(
            f"Resource '{resource_name}': the cursor '{cursor_path}' value {row_value!r} "
            f"({type(row_value).__name__}) cannot be compared with the {bound} {bound_value!r} "
            f"({type(bound_value).__name__}): {detail}. Give the incremental a {bound} of the data's type, or cast "
            "the cursor in the data (e.g. with resource.add_map())."
        )


class IncrementalPrimaryKeyMissing(IncrementalError):
    """An item lacks a primary key column that incremental de-duplication needs."""

    def __init__(self, resource_name: str, column: str, item: object) -> None:
        self.resource_name, self.primary_key_column, self.item = resource_name, column, item
        super().__init__(
            f"Resource '{resource_name}': the primary key column '{column}' is missing in the item {_shown(item)}. "
            "Every item must hold the key that de-duplicates rows at the incremental's boundary; fix the data or "
            "give the incremental another primary_key (primary_key=() turns de-duplication off)."
        )


def _shown(item: object, limit: int = 200) -> str:
    text = repr(item)
    return text if len(text) <= limit else text[:limit] + "..."

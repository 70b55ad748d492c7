"""Errors of the SQL client and datasets (all are :class:`lakeload.errors.LakeloadError`).

>>> str(TableNotFoundError("nope", "ds", ["users"]))
"Table 'nope' is not in dataset 'ds'. Available tables: ['users']"
"""

from __future__ import annotations

from lakeload.errors import LakeloadError


class SqlClientError(LakeloadError):
    """Base of the errors raised by `pipeline.sql_client()` and `pipeline.dataset()`."""


class _LookupError(SqlClientError, KeyError):
    """A name looked up that is not there; a `KeyError` whose message reads as text (KeyError would quote it)."""

    def __str__(self) -> str:
        return str(self.args[0])


class TableNotFoundError(_LookupError):
    """A query or a dataset lookup names a table that the schema does not have."""

    def __init__(self, table: str, dataset: str, available: list[str]) -> None:
        self.table = table
        self.dataset = dataset
        self.available = available
        super().__init__(f"Table '{table}' is not in dataset '{dataset}'. Available tables: {available}")


class ColumnNotFoundError(_LookupError):
    """A relation selects columns that its table does not have."""

    def __init__(self, columns: list[str], table: str, available: list[str]) -> None:
        self.columns = columns
        self.table = table
        super().__init__(f"Columns {columns} are not in table '{table}'. Columns: {available}. Fix: use these names "
                         "(the schema's names: normalized, e.g. snake_case; joined columns are `<alias>__<column>`)")


class InvalidArgumentError(SqlClientError, ValueError):
    """An argument of a read method is out of range (e.g. `chunk_size=0`)."""


class SqlQueryError(SqlClientError):
    """DuckDB could not run a query; `sql` is the query as given and `__cause__` DuckDB's error."""

    def __init__(self, sql: str, message: str) -> None:
        self.sql = sql
        super().__init__(f"{message}\nSQL: {sql}")

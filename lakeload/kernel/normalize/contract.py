"""Executor-safe: schema contracts applied to rows while they are normalized, as dlt's normalizer applies them.

The `RowCoercer` asks a `ContractChecker` before it creates a table, a column or a variant column. The checker
answers from the table's contract (`lakeload.schema.contract`):

- `evolve`: create it;
- `discard_value`: drop the value (the column stays absent);
- `discard_row`: drop the row, and every nested row below it;
- `freeze`: stop the split with a `ContractViolation`, which the task returns in its report (the driver raises
  `DataValidationError` once it knows the split's view of the schema was the sequential one).

A table or column dropped once stays dropped for the rest of the split, as in dlt: a later row that has a dropped
column loses it (or is dropped) before it is coerced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from lakeload.kernel.contracts import TRow
from lakeload.schema.contract import ContractSetting, SchemaContract, contract_for, is_new_table
from lakeload.schema.typing import TTable

C_DLT_ID = "_dlt_id"
C_DLT_PARENT_ID = "_dlt_parent_id"
DISCARD = "discard"  # what `RowCoercer` gets back for a value it must not store


class Violation(TypedDict):
    """A frozen contract a split broke: what the driver needs for `DataValidationError`."""

    table: str
    column: str | None
    entity: str
    mode: str
    message: str


class ContractViolation(Exception):
    """Raised inside a split at a frozen contract; carries the typed `Violation` for the task's report."""

    def __init__(self, violation: Violation) -> None:
        super().__init__(violation["message"])
        self.violation = violation


@dataclass(frozen=True)
class ContractSettings:
    """What executors need to apply contracts: the schema's own contract (tables carry theirs)."""

    schema_name: str
    schema_contract: ContractSetting = None


@dataclass
class ContractChecker:
    """Decides, for one split, which new tables, columns and variants a row may create."""

    settings: ContractSettings
    tables: dict[str, TTable]
    arrow: bool = False  # rows of Arrow/pandas items: a dropped column drops a row only when it has a value there
    filtered_tables: set[str] = field(default_factory=set)
    filtered_columns: dict[str, dict[str, str]] = field(default_factory=dict)
    discarded_rows: int = 0
    _contracts: dict[str, SchemaContract] = field(default_factory=dict)
    _dropped_ids: set[str] = field(default_factory=set)

    def contract(self, table_name: str, parent_table: str | None) -> SchemaContract:
        found = self._contracts.get(table_name)
        if found is None:
            known = table_name if table_name in self.tables else (parent_table or table_name)
            found = self._contracts[table_name] = contract_for(self.tables, known, self.settings.schema_contract)
        return found

    # -- rows --------------------------------------------------------------------------------------
    def pre_filter(self, table_name: str, parent_table: str | None, row: TRow) -> bool:
        """Apply what earlier rows decided; False: drop the row (and its nested rows)."""
        if parent_table is None:
            self._dropped_ids.clear()
        elif row.get(C_DLT_PARENT_ID) in self._dropped_ids:
            return self.drop(row)
        if table_name in self.filtered_tables:
            return self.drop(row)
        for name, mode in self.filtered_columns.get(table_name, {}).items():
            if name not in row:
                continue
            if mode == "discard_row" and (not self.arrow or row[name] is not None):
                return self.drop(row)
            del row[name]  # discard_value, or a null in a discard_row column of an Arrow item
        return True

    def drop(self, row: TRow) -> bool:
        """Drop `row`: its nested rows (which name it as parent) go too."""
        row_id = row.get(C_DLT_ID)
        if row_id:
            self._dropped_ids.add(row_id)
        self.discarded_rows += 1
        return False

    # -- schema changes ----------------------------------------------------------------------------
    def new_table(self, table_name: str, parent_table: str | None) -> bool:
        """May `table_name` be created? False: drop its rows. Raises `ContractViolation` when frozen."""
        mode = self.contract(table_name, parent_table)["tables"]
        if mode == "evolve":
            return True
        if mode == "freeze":
            raise ContractViolation(
                Violation(table=table_name, column=None, entity="tables", mode="freeze",
                          message=f"Can't add table `{table_name}` because `tables` are frozen.")
            )
        self.filtered_tables.add(table_name)
        return False

    def new_column(self, table_name: str, column: str, is_variant: bool, table_was_new: bool) -> str:
        """`evolve`, `discard_value` or `discard_row` for a column a row would add; raises when frozen."""
        if column.startswith("_dlt"):
            return "evolve"
        contract = self.contract(table_name, None)
        if is_variant:
            entity, mode = "data_type", contract["data_type"]
        else:
            table = self.tables.get(table_name)
            evolve_once = table is not None and table.get("x-normalizer", {}).get("evolve-columns-once")
            entity = "columns"
            mode = "evolve" if table_was_new or evolve_once else contract["columns"]
        if mode == "evolve":
            return mode
        if mode == "freeze":
            what = "variant column" if is_variant else "table column"
            entities = "data_types" if is_variant else "columns"
            raise ContractViolation(
                Violation(table=table_name, column=column, entity=entity, mode="freeze",
                          message=f"Can't add {what} `{column}` to table `{table_name}` because `{entities}` are frozen.")
            )
        self.filtered_columns.setdefault(table_name, {})[column] = mode
        return mode


def table_was_new(tables: dict[str, TTable], table_name: str) -> bool:
    """dlt's `is_new_table` for the table a row goes to, before the row changes it."""
    return is_new_table(tables.get(table_name))

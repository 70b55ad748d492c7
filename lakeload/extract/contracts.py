"""Schema contracts at extract: a root table checked when a resource first fills it, before any item is written.

As in dlt, the table a resource's hints make is checked against the stored schema once per extract:

- a new table (not stored, or stored without a typed column) under `tables` = `freeze` fails the extract with
  `DataValidationError`; under `discard_row`/`discard_value` its items are dropped (nothing is written);
- a new table whose `columns` contract is not `evolve` may still get any column in its first load
  (`x-normalizer.evolve-columns-once`, dropped after normalize);
- a typed column the hints add to a stored table follows the `columns` contract.

Nested tables, new columns and variant columns that only the data brings are checked by Spark normalize
(`lakeload.kernel.normalize.contract`).

>>> contracts = RootContracts("crm", stored={}, schema_contract="freeze")
>>> contracts.admit("users", {"name": "users", "columns": {}})
Traceback (most recent call last):
lakeload.errors.DataValidationError: Schema `crm`, table `users`: contract on `tables` with mode `freeze` is violated. ...
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lakeload.errors import DataValidationError
from lakeload.extract.resource import Resource
from lakeload.extract.source import Source
from lakeload.schema.contract import EVOLVE, ContractSetting, check_contract, contract_for, is_new_table
from lakeload.schema.typing import TTable
from lakeload.storage.manifest import ContractEntry


@dataclass
class RootContracts:
    """Root tables checked at extract against the stored schema's tables and the schema's contract."""

    schema_name: str
    stored: dict[str, TTable]
    schema_contract: ContractSetting = None  # from the source or run(); stored in the schema's settings
    skipped: set[str] = field(default_factory=set)

    def admit(self, name: str, table: TTable) -> bool:
        """Check the root `table` (the manifest's entry, marked in place); False: drop the items of `name`."""
        contract = contract_for({**self.stored, name: table}, name, self.schema_contract)
        if contract == EVOLVE:
            return True
        existing = self.stored.get(name)
        if is_new_table(existing):
            if contract["tables"] == "freeze":
                raise DataValidationError(
                    self.schema_name, name, None, "tables", "freeze", f"Can't add table `{name}` because `tables` are frozen."
                )
            if contract["tables"] != "evolve":
                self.skipped.add(name)
                return False
            if contract["columns"] != "evolve":
                table.setdefault("x-normalizer", {})["evolve-columns-once"] = True
            return True
        self._hint_columns(name, table, existing or {}, contract["columns"])
        return True

    def _hint_columns(self, name: str, table: TTable, existing: TTable, mode: str) -> None:
        if mode == "evolve":
            return
        known = existing.get("columns", {})
        for column in [c for c in table["columns"] if not c.startswith("_dlt")]:
            if known.get(column, {}).get("data_type"):
                continue
            if mode == "freeze":
                raise DataValidationError(
                    self.schema_name, name, column, "columns", "freeze",
                    f"Can't add table column `{column}` to table `{name}` because `columns` are frozen.",
                )
            del table["columns"][column]  # not added to the schema; its values are dropped by normalize

    def manifest(self) -> ContractEntry:
        """What the package records for normalize: the schema's contract, when this run sets one."""
        return {"schema_contract": self.schema_contract} if self.schema_contract else {}


def root_contracts(data: Any, resources: list[Resource], overrides: dict[str, Any], stored: Any) -> RootContracts | None:
    """The extract's contract checks: `run(schema_contract=)` over the source's; None when nothing has one.

    `stored` is the pipeline's stored `Schema` of the package.
    """
    setting = check_contract(overrides.get("schema_contract")) or (data.schema_contract if isinstance(data, Source) else None)
    stored_setting = stored.settings.get("schema_contract")
    stored_tables = any("schema_contract" in t for t in stored.tables.values())
    if not (setting or stored_setting or stored_tables or any(r.hints.table_contract for r in resources)):
        return None
    return RootContracts(stored.name, stored.tables, setting or stored_setting)

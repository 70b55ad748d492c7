"""Schema contracts as dlt 1.31 defines them: which schema changes a load may make.

A contract has a mode for each of three entities:

- `tables`: a table the schema does not have yet (or has only as hints, without a typed column);
- `columns`: a new column of a table that already has typed columns (a table new in this load may get any);
- `data_type`: a value whose type does not fit its column (a variant column, `<name>__v_<type>`).

Modes: `evolve` (allow), `freeze` (fail the load), `discard_row` (drop the record), `discard_value` (drop the
value; for `tables`, like `discard_row`). A contract is given as one mode for all entities or a dict of some of them
(the rest are `evolve`). It is stored as given: on a table (`schema_contract`, from a resource) or in the schema
settings (from a source or `run()`); a nested table inherits its root table's.

Executor-safe: imports only `lakeload.errors`.

>>> expand_contract("freeze")
{'tables': 'freeze', 'columns': 'freeze', 'data_type': 'freeze'}
>>> contract_for({"users": {"name": "users", "schema_contract": {"columns": "discard_value"}}}, "users", None)
{'tables': 'evolve', 'columns': 'discard_value', 'data_type': 'evolve'}
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict, cast, get_args

from lakeload.errors import SchemaError
from lakeload.schema.typing import TTable

ContractMode = Literal["evolve", "discard_value", "freeze", "discard_row"]
ContractEntity = Literal["tables", "columns", "data_type"]
MODES: tuple[str, ...] = get_args(ContractMode)
ENTITIES: tuple[str, ...] = get_args(ContractEntity)


class SchemaContract(TypedDict):
    """An expanded contract: one mode per entity."""

    tables: ContractMode
    columns: ContractMode
    data_type: ContractMode


EVOLVE: SchemaContract = {"tables": "evolve", "columns": "evolve", "data_type": "evolve"}
ContractSetting = str | dict[str, str] | None  # what users write: a mode, a partial dict, or nothing


def check_contract(setting: Any) -> ContractSetting:
    """`setting` if it is a valid contract (a mode or a dict of entity -> mode), else a `SchemaError` naming the fix.

    >>> check_contract({"columns": "freeze"})
    {'columns': 'freeze'}
    """
    if setting is None or setting == {}:
        return cast(ContractSetting, setting)
    if isinstance(setting, str):
        if setting not in MODES:
            raise SchemaError(f"Unknown schema_contract mode {setting!r}; use one of {', '.join(MODES)}.")
        return setting
    if not isinstance(setting, dict):
        raise SchemaError(
            f"schema_contract must be a mode ({', '.join(MODES)}) or a dict with keys {', '.join(ENTITIES)}; "
            f"got {type(setting).__name__}."
        )
    for entity, mode in setting.items():
        if entity not in ENTITIES:
            raise SchemaError(f"Unknown schema_contract entity {entity!r}; use {', '.join(ENTITIES)}.")
        if mode is not None and mode not in MODES:
            raise SchemaError(f"Unknown schema_contract mode {mode!r} for {entity!r}; use one of {', '.join(MODES)}.")
    return setting


def expand_contract(setting: ContractSetting, default: SchemaContract | None = None) -> SchemaContract:
    """One mode per entity: a string applies to all, a dict overrides `default` (all `evolve` unless given)."""
    if isinstance(setting, str):
        return {"tables": setting, "columns": setting, "data_type": setting}  # type: ignore[typeddict-item]
    expanded = dict(default or EVOLVE)
    expanded.update({k: v for k, v in (setting or {}).items() if v is not None})
    return cast(SchemaContract, expanded)


def contract_for(tables: dict[str, TTable], table_name: str, schema_setting: ContractSetting) -> SchemaContract:
    """The contract of `table_name`: its own, the nearest ancestor's, else the schema's (dlt's inheritance).

    `_dlt*` tables always evolve.
    """
    if table_name.startswith("_dlt"):
        return dict(EVOLVE)  # type: ignore[return-value]
    table = tables.get(table_name)
    seen = set()
    while table is not None and table["name"] not in seen:
        seen.add(table["name"])
        if "schema_contract" in table:
            return expand_contract(table["schema_contract"])
        parent = table.get("parent")
        table = tables.get(parent) if parent else None
    return expand_contract(schema_setting)


def is_new_table(table: TTable | None) -> bool:
    """dlt's rule: a table is new until it has a typed (complete) column."""
    return table is None or not any(c.get("data_type") for c in table.get("columns", {}).values())


def any_contract(tables: dict[str, TTable], schema_setting: ContractSetting) -> bool:
    """Whether any table (or the schema) has a contract other than all-`evolve`."""
    if expand_contract(schema_setting) != EVOLVE:
        return True
    return any(
        expand_contract(t["schema_contract"]) != EVOLVE
        for name, t in tables.items()
        if "schema_contract" in t and not name.startswith("_dlt")
    )

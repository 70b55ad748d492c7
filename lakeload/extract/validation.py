"""Pydantic models as `columns`: the table's columns and a validator of the resource's items, as in dlt 1.31.

`columns=MyModel` on `@lakeload.resource` or `apply_hints` gives the table one column per model field: the field's
type mapped as dlt maps Python types (`Optional[...]` is nullable, anything else is not; lists, dicts and nested
models are `json`; an unknown type is `text`), named by the field's alias. Items are validated against the model
at extract (dicts only; Arrow tables and DataFrames pass as they are) and stored as the model dumps them.

The model brings a default contract (dlt's): `tables` evolve, `columns` from the model's `extra` (`forbid`: freeze,
`allow`: evolve, else discard_value), `data_type` freeze. An explicit `schema_contract` overrides it, and decides
what an invalid item does: `freeze` fails the extract with `DataValidationError`, `discard_row` drops it.

>>> from pydantic import BaseModel
>>> class User(BaseModel):
...     id: int
...     name: str | None = None      # Optional[str]
>>> columns_from_model(User)["name"]
{'name': 'name', 'data_type': 'text', 'nullable': True}
"""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from lakeload.errors import DataValidationError, ExtractError
from lakeload.schema import datatypes
from lakeload.schema.contract import ContractSetting, SchemaContract, expand_contract
from lakeload.schema.typing import TColumnSchema

_UNIONS: tuple[Any, ...] = (typing.Union, types.UnionType)


def is_model(columns: Any) -> bool:
    """Whether `columns` is a pydantic model class (pydantic is imported only if the user imported it)."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(columns, type) and issubclass(columns, pydantic.BaseModel)


def _inner(annotation: Any) -> tuple[Any, bool]:
    """The type inside Optional/Annotated/Literal/NewType wrappers, and whether None is allowed."""
    nullable = False
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in _UNIONS:
            args = typing.get_args(annotation)
            nullable |= type(None) in args
            annotation = next(a for a in args if a is not type(None))
        elif origin is typing.Literal:
            annotation = type(typing.get_args(annotation)[0])
        elif hasattr(annotation, "__supertype__"):  # NewType
            annotation = annotation.__supertype__
        else:
            return annotation, nullable


def _data_type(annotation: Any) -> str | None:
    """dlt's type of a field's inner type; None for `Any` (left to inference)."""
    pydantic = sys.modules["pydantic"]
    if annotation is Any or annotation is getattr(pydantic, "Json", None):
        return None
    origin = typing.get_origin(annotation)
    if origin is not None:
        annotation = origin
        if isinstance(origin, type) and issubclass(origin, (Sequence, Mapping)) and not issubclass(origin, str):
            return "json"
    try:
        return datatypes.py_type_to_data_type(annotation)
    except TypeError:
        return "json" if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel) else "text"


def columns_from_model(model: Any) -> dict[str, TColumnSchema]:
    """The columns a pydantic model gives its table, in field order (dlt's mapping).

    `dlt_config = {"skip_nested_types": True}` on the model leaves lists, dicts and nested models out.
    """
    skip_nested = bool(getattr(model, "dlt_config", {}).get("skip_nested_types", False))
    columns: dict[str, TColumnSchema] = {}
    for field_name, field in model.model_fields.items():
        annotation = getattr(field.annotation, "inner_type", None) or field.annotation
        inner, nullable = _inner(annotation)
        data_type = _data_type(inner)
        if data_type is None or (data_type == "json" and skip_nested):
            continue
        name = field.alias or field_name
        columns[name] = {"name": name, "data_type": data_type, "nullable": nullable}
    return columns


def model_contract(model: Any, explicit: ContractSetting) -> SchemaContract:
    """The contract items are validated under: `explicit` over the model's default (dlt's)."""
    extra = model.model_config.get("extra") or "ignore"
    columns = {"forbid": "freeze", "allow": "evolve"}.get(extra, "discard_value")
    default = cast(SchemaContract, {"tables": "evolve", "columns": columns, "data_type": "freeze"})
    return expand_contract(explicit, default)


def _contract_model(model: Any, contract: SchemaContract) -> Any:
    """`model` as the contract wants it: `extra` from the columns mode; any value accepted when data types evolve."""
    import pydantic

    if contract["data_type"] == "discard_value":
        raise ExtractError(
            "A pydantic model cannot discard single invalid values (data_type='discard_value'), as in dlt: use "
            "'discard_row', 'freeze' or 'evolve' for `data_type` in the resource's schema_contract."
        )
    if contract["data_type"] == "evolve":
        fields: dict[str, Any] = {n: (Any, None) for n in model.model_fields}
        model = pydantic.create_model(model.__name__ + "Any", **fields)
    extra = {"evolve": "allow", "discard_value": "ignore"}.get(contract["columns"], "forbid")
    if (model.model_config.get("extra") or "ignore") == extra:
        return model
    config = pydantic.ConfigDict(**{**model.model_config, "extra": extra})  # type: ignore[typeddict-item]
    return type(model.__name__ + "Extra" + extra.title(), (model,), {"model_config": config, "__module__": model.__module__})


class ModelValidator:
    """Validates a resource's dict items against a pydantic model under its contract (runs at extract)."""

    def __init__(self, model: Any, contract: SchemaContract, table_name: str) -> None:
        self.contract = contract
        self.table_name = table_name
        self.model = _contract_model(model, contract)

    def validate(self, items: Iterator[Any]) -> Iterator[Any]:
        """The items, each valid record as the model dumps it; invalid ones dropped or raised per the contract."""
        for item in items:
            if isinstance(item, list):
                kept = [out for record in item if (out := self._one(record)) is not None]
                if kept or not item:
                    yield kept
            elif (out := self._one(item)) is not None:
                yield out

    def _one(self, record: Any) -> Any:
        import pydantic

        if not isinstance(record, dict):
            return record  # Arrow tables, pandas and Spark DataFrames, model instances: as they are
        try:
            return self.model.model_validate(record).model_dump(by_alias=True)
        except pydantic.ValidationError as exc:
            error = exc.errors()[0]
            entity = "columns" if error["type"] == "extra_forbidden" else "data_type"
            if self.contract[entity] == "discard_row":  # type: ignore[literal-required]
                return None
            column = ".".join(str(part) for part in error["loc"])
            raise DataValidationError(
                None, self.table_name, column, entity, "freeze",
                f"{error['msg']} (pydantic model {self.model.__name__}).",
            ) from exc

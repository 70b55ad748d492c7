"""Schema contracts and pydantic models (issue 14, groups 6 and 7) against dlt 1.31: same script, same outcome.

Each script runs twice or more on one pipeline: the first run makes the table, the next ones bring new tables,
columns or types under a contract. After every run the dataset (conformance harness: tables, columns, types, rows
with their parent/child links) and the contract a failing run names must be dlt's; at the end, the contracts and
the table and column hints stored in the schema.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import pyarrow as pa
import pydantic
import pytest
from _harness_contracts import contract_violation
from compat_harness import Ctx, assert_same

pytestmark = pytest.mark.usefixtures("spark")


def _items(lib: Any, rows: list[dict[str, Any]], contract: Any = None, name: str = "items") -> Any:
    return lib.resource(rows, name=name, schema_contract=contract)


def s_freeze_new_column(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    return [(_items(lib, [{"id": 1}]), {}), (_items(lib, [{"id": 2, "new": "x"}], "freeze"), {}),
            (_items(lib, [{"id": 3}], "freeze"), {})]


def s_freeze_first_run(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    return [(_items(lib, [{"id": 1}], {"tables": "freeze"}), {}), (_items(lib, [{"id": 2}]), {})]


def s_columns_discard_value(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    rows = [{"id": 2, "new": "x"}, {"id": 3, "new": None}, {"id": 4}]
    return [(_items(lib, [{"id": 1}]), {}), (_items(lib, rows, {"columns": "discard_value"}), {})]


def s_columns_discard_row(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    rows = [{"id": 2}, {"id": 3, "new": "x"}, {"id": 4, "new": None}, {"id": 5}]
    return [(_items(lib, [{"id": 1}]), {}), (_items(lib, rows, {"columns": "discard_row"}), {})]


def s_new_table_gets_any_column(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    first = [{"id": 1}, {"id": 2, "late": "x"}, {"id": 3, "kids": [{"a": 1}, {"a": 2, "b": 3}]}]
    return [(_items(lib, first, {"columns": "freeze"}), {}), (_items(lib, [{"id": 4, "later": 1}], {"columns": "freeze"}), {})]


def s_data_type_discard_row(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    rows = [{"id": 2, "v": 5}, {"id": 3, "v": "text"}, {"id": 4, "v": "7"}]
    return [(_items(lib, [{"id": 1, "v": 1}]), {}), (_items(lib, rows, {"data_type": "discard_row"}), {})]


def s_data_type_discard_value(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    rows = [{"id": 2, "v": 5}, {"id": 3, "v": "text"}]
    return [(_items(lib, [{"id": 1, "v": 1}]), {}), (_items(lib, rows, {"data_type": "discard_value"}), {})]


def s_data_type_freeze(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    rows = [{"id": 2, "v": 5, "other": True}, {"id": 3, "v": "text"}]
    return [(_items(lib, [{"id": 1, "v": 1}]), {}), (_items(lib, rows, {"data_type": "freeze"}), {})]


def s_nested_tables_discard_row(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    rows = [{"id": 2, "kids": [{"a": 1}]}, {"id": 3}]
    return [(_items(lib, [{"id": 1}]), {}), (_items(lib, rows, {"tables": "discard_row"}), {})]


def s_nested_rows_go_with_their_parent(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    first = [{"id": 1, "kids": [{"a": 1, "toys": [{"t": 1}]}]}]
    second = [
        {"id": 2, "kids": [{"a": 2, "toys": [{"t": 2}]}, {"a": 3, "b": 1, "toys": [{"t": 3}]}]},
        {"id": 3, "new": 1, "kids": [{"a": 4, "toys": [{"t": 4}]}]},
    ]
    return [(_items(lib, first), {}), (_items(lib, second, {"columns": "discard_row"}), {})]


def s_nested_freeze_names_nested_table(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    first = [{"id": 1, "kids": [{"a": 1}]}]
    return [(_items(lib, first), {}), (_items(lib, [{"id": 2, "kids": [{"a": 2, "b": 2}]}], "freeze"), {})]


def s_source_contract(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    def make(rows: list[dict[str, Any]]) -> Any:
        @lib.source(name="crm", schema_contract={"columns": "discard_value"})
        def crm() -> Any:
            return [lib.resource(rows, name="users"), lib.resource(rows, name="deals", schema_contract="evolve")]

        return crm()

    return [(make([{"id": 1}]), {}), (make([{"id": 2, "new": "x"}]), {})]


def s_run_overrides_resource(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    return [(_items(lib, [{"id": 1}]), {}),
            (_items(lib, [{"id": 2, "new": "x"}], "freeze"), {"schema_contract": "evolve"}),
            (_items(lib, [{"id": 3, "newer": "y"}]), {"schema_contract": {"columns": "discard_value"}})]


def s_arrow_columns(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    second = pa.table({"id": [2, 3, 4], "extra": ["a", None, "c"]})
    return [(_items(lib, pa.table({"id": [1]})), {}),
            (_items(lib, second, {"columns": "discard_value"}), {}),
            (_items(lib, second, {"columns": "discard_row"}), {}),
            (_items(lib, second, {"columns": "freeze"}), {})]


class Address(pydantic.BaseModel):
    city: str


class User(pydantic.BaseModel):
    id: int
    name: Optional[str] = None  # noqa: UP045 - dlt's own spelling of nullable fields
    tags: list[str] = []
    address: Address


def s_pydantic_default_contract(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    good = [{"id": 1, "name": "a", "tags": ["x"], "address": {"city": "c"}, "extra": 1}, {"id": "2", "address": {"city": "d"}}]
    bad = [{"id": 3, "address": {"city": "e"}}, {"id": "three", "address": {"city": "f"}}]
    return [(lib.resource(good, name="users", columns=User), {}), (lib.resource(bad, name="users", columns=User), {})]


def s_pydantic_discard_row(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    rows = [{"id": 1, "address": {"city": "c"}}, {"id": "x", "address": {"city": "d"}}, {"id": 2}]
    res = lib.resource(rows, name="users", columns=User, schema_contract={"data_type": "discard_row"})
    return [(res, {})]


Script = Callable[[Any], list[tuple[Any, dict[str, Any]]]]  # lib -> [(data, run kwargs)], one run each
SCRIPTS: dict[str, Script] = {
    f.__name__[2:]: f
    for f in (s_freeze_new_column, s_freeze_first_run, s_columns_discard_value, s_columns_discard_row,
              s_new_table_gets_any_column, s_data_type_discard_row, s_data_type_discard_value, s_data_type_freeze,
              s_nested_tables_discard_row, s_nested_rows_go_with_their_parent, s_nested_freeze_names_nested_table,
              s_source_contract, s_run_overrides_resource, s_arrow_columns, s_pydantic_default_contract,
              s_pydantic_discard_row)
}


def runs(build: Script) -> Callable[[Ctx], Any]:
    """One pipeline, one run per (data, kwargs); a failing run's package is dropped before the next run."""

    def script(ctx: Ctx) -> Any:
        p = ctx.pipeline("contracts")
        for index, (data, kwargs) in enumerate(build(ctx.lib)):
            ctx.run(p, data, label=f"run {index + 1}", signature=contract_violation, drop_pending=True,
                    loader_file_format="parquet", **kwargs)
        return p

    return script


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_contracts_behave_as_dlt(name: str, tmp_path: Path) -> None:
    # Deliberate difference (README, Coming from dlt): dlt writes Arrow items without `_dlt_id`/`_dlt_load_id`,
    # lakeload with them (see test_compat_incremental.py::test_arrow_items_get_no_id_columns). All else is compared.
    assert_same(runs(SCRIPTS[name]), tmp_path, contracts=True, hints=True, arrow_ids=name == "arrow_columns")

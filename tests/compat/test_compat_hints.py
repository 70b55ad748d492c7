"""Marks and hints (issue 14, group 4) side by side with dlt 1.31: `apply_hints` for every hint, resource
properties, `lakeload.mark`, nested hints and references; the stored schema's hints are compared too."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from compat_harness import Ctx, assert_same

pytestmark = pytest.mark.usefixtures("spark")

ORDERS = [
    {"id": 1, "customer_id": 5, "total": 10.5, "items": [{"sku": "a", "price": 1.5, "tags": [{"t": "x"}]}]},
    {"id": 2, "customer_id": 6, "total": 3.0, "items": [{"sku": "b", "price": 2.25, "tags": []}]},
]
REFERENCE = {"columns": ["customer_id"], "referenced_table": "customers", "referenced_columns": ["id"]}


def orders(ctx: Ctx, **hints: Any) -> Any:
    @ctx.lib.resource(name="orders", **hints)
    def generate() -> Any:
        yield ORDERS

    return generate


def run(ctx: Ctx, data: Any, **kwargs: Any) -> Any:
    p = ctx.pipeline()
    p.run(data, **kwargs)
    return p


def s_decorator_hints(ctx: Ctx) -> Any:
    res = orders(ctx, primary_key="id", merge_key="customer_id", columns={"total": {"data_type": "decimal"}},
                 references=[REFERENCE])
    return run(ctx, res())


def s_apply_hints_every_hint(ctx: Ctx) -> Any:
    res = orders(ctx)()
    res.apply_hints(
        table_name="all_orders", write_disposition="replace", primary_key=["id"], merge_key="customer_id",
        columns=[{"name": "total", "data_type": "double", "nullable": False}], references=[REFERENCE],
        additional_table_hints={"x-owner": "sales"}, file_format="parquet",
    )
    return run(ctx, res)


def s_apply_hints_on_undecorated(ctx: Ctx) -> Any:
    res = orders(ctx)
    res.apply_hints(primary_key="id", columns={"customer_id": {"data_type": "text"}})
    return run(ctx, res())


def s_apply_hints_empty_removes(ctx: Ctx) -> Any:
    res = orders(ctx, primary_key="id", table_name="first_name")()
    res.apply_hints(primary_key="", table_name="")
    return run(ctx, res)


def s_apply_hints_columns_merge(ctx: Ctx) -> Any:
    res = orders(ctx, columns={"total": {"data_type": "double"}})()
    res.apply_hints(columns={"total": {"nullable": False}, "id": {"data_type": "text"}})
    return run(ctx, res)


def s_apply_hints_references_replace_per_table(ctx: Ctx) -> Any:
    res = orders(ctx, references=[REFERENCE, {"columns": ["id"], "referenced_table": "audit", "referenced_columns": ["oid"]}])()
    res.apply_hints(references=[{**REFERENCE, "referenced_columns": ["customer_id"]}])
    return run(ctx, res)


def s_nested_hints(ctx: Ctx) -> Any:
    nested = {"items": ctx.lib.mark.make_nested_hints(columns=[{"name": "price", "data_type": "decimal", "precision": 10, "scale": 2}])}
    return run(ctx, orders(ctx, nested_hints=nested)())


def s_nested_hints_deeper(ctx: Ctx) -> Any:
    # dlt wants every intermediate nested table declared (lakeload would accept `items` missing)
    nested = {
        "items": ctx.lib.mark.make_nested_hints(columns={"sku": {"data_type": "text"}}),
        ("items", "tags"): ctx.lib.mark.make_nested_hints(columns={"t": {"data_type": "text", "nullable": False}}),
    }
    res = orders(ctx)()
    res.apply_hints(nested_hints=nested)
    return run(ctx, res)


def s_properties(ctx: Ctx) -> Any:
    res = orders(ctx)()
    res.table_name = "renamed"
    res.write_disposition = "replace"
    res.apply_hints(columns={"total": {"data_type": "double", "nullable": False}})  # dlt has no `columns` setter
    res.max_table_nesting = 1
    ctx.notes["read_back"] = [res.table_name, res.write_disposition, sorted(res.columns), res.max_table_nesting]
    return run(ctx, res)


def s_selected_property(ctx: Ctx) -> Any:
    @ctx.lib.source
    def shop() -> Any:
        return orders(ctx), ctx.lib.resource([{"c": 1}], name="customers")

    src = shop()
    src.customers.selected = False
    ctx.notes["selected"] = sorted(src.selected_resources)
    return run(ctx, src)


def s_mark_with_hints(ctx: Ctx) -> Any:
    @ctx.lib.resource(name="events")
    def events() -> Any:
        yield ctx.lib.mark.with_hints({"id": 1, "kind": "click"}, ctx.lib.mark.make_hints(primary_key="id", table_name="clicks"))
        yield ctx.lib.mark.with_hints([{"id": 2, "kind": "view"}], ctx.lib.mark.make_hints(table_name="views", write_disposition="replace"))

    @ctx.lib.resource(name="routed")
    def routed() -> Any:
        yield ctx.lib.mark.with_table_name({"id": 3}, "routed_elsewhere")

    return run(ctx, [events(), routed()])


def s_dynamic_table_name(ctx: Ctx) -> Any:
    res = ctx.lib.resource([{"kind": "a", "v": 1}, {"kind": "b", "v": 2}, {"kind": "a", "v": 3}], name="events",
                           table_name=lambda r: f"events_{r['kind']}")
    return run(ctx, res)


def s_run_arguments(ctx: Ctx) -> Any:
    return run(ctx, orders(ctx)(), table_name="run_orders", write_disposition="replace", primary_key="id",
               columns={"total": {"data_type": "double"}})


SCRIPTS: dict[str, Callable[[Ctx], Any]] = {
    name[2:]: f for name, f in sorted(globals().items()) if name.startswith("s_") and callable(f)
}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_hints_as_dlt(name: str, tmp_path: Path) -> None:
    assert_same(SCRIPTS[name], tmp_path, hints=True)

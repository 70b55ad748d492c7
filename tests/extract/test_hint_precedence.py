"""Which key hints win (issue 36), side by side with dlt 1.31: the direct `primary_key=`/`merge_key=` hint of
`@resource`/`apply_hints` replaces the columns' key hints, a newer key replaces an older one, and a load's key and
partition hints replace those the stored table had (a hint absent from the load keeps the stored one)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from compat.compat_harness import Ctx, assert_same

from lakeload.extract.hints import TableHints, merged_hints
from lakeload.extract.table_schema import table_schema_from_hints
from lakeload.schema.naming import get_naming

pytestmark = pytest.mark.usefixtures("spark")

ROWS = [{"id": 1, "a": 2, "b": 3}, {"id": 2, "a": 3, "b": 4}]


def table(ctx: Ctx, **hints: Any) -> Any:
    @ctx.lib.resource(name="t", **hints)
    def generate() -> Any:
        yield ROWS

    return generate()


def runs(ctx: Ctx, *resources: Any, **kwargs: Any) -> Any:
    p = ctx.pipeline()
    for res in resources:
        ctx.run(p, res, **kwargs)
    return p


def s_key_argument_and_column_key(ctx: Ctx) -> Any:
    return runs(ctx, table(ctx, primary_key="id", columns={"a": {"primary_key": True}}))


def s_apply_hints_key_replaces_key(ctx: Ctx) -> Any:
    res = table(ctx, primary_key="id")
    res.apply_hints(primary_key=["a", "b"])
    return runs(ctx, res)


def s_apply_hints_key_replaces_column_key(ctx: Ctx) -> Any:
    res = table(ctx, columns={"id": {"primary_key": True}})
    res.apply_hints(primary_key="a")
    return runs(ctx, res)


def s_apply_hints_column_key_under_key(ctx: Ctx) -> Any:
    res = table(ctx, primary_key="id")
    res.apply_hints(columns={"b": {"primary_key": True}})  # the resource's `primary_key` still wins
    return runs(ctx, res)


def s_apply_hints_column_keys_add_up(ctx: Ctx) -> Any:
    res = table(ctx, columns={"id": {"primary_key": True}})
    res.apply_hints(columns={"b": {"primary_key": True}})  # no direct key: column keys merge (compound key)
    return runs(ctx, res)


def s_apply_hints_empty_key_removes_column_keys(ctx: Ctx) -> Any:
    res = table(ctx, columns={"id": {"primary_key": True}, "a": {"merge_key": True}})
    res.apply_hints(primary_key="", merge_key="")
    res.apply_hints(columns={"b": {"primary_key": True, "merge_key": True}})  # the empty key still wins
    return runs(ctx, res)


def s_merge_key_argument_and_column_key(ctx: Ctx) -> Any:
    return runs(ctx, table(ctx, merge_key="id", columns={"a": {"merge_key": True}}))


def s_apply_hints_merge_key_replaces(ctx: Ctx) -> Any:
    res = table(ctx, columns={"id": {"merge_key": True}}, write_disposition="merge")
    res.apply_hints(merge_key=["a", "b"])
    res.apply_hints(columns={"id": {"merge_key": True}})
    return runs(ctx, res)


def s_compound_key_merge(ctx: Ctx) -> Any:  # dlt's docs: a compound primary key given as a list
    res = table(ctx, primary_key=("id", "a"), write_disposition="merge", columns={"b": {"primary_key": True}})
    return runs(ctx, res, res)


def s_compound_key_merge_delta(ctx: Ctx) -> Any:  # the compound key the rows are upserted by
    res = table(ctx, primary_key=["id", "a"], write_disposition="merge", table_format="delta",
                columns={"b": {"primary_key": True}})
    p = runs(ctx, res)
    changed = ctx.lib.resource([{"id": 1, "a": 2, "b": 30}, {"id": 1, "a": 5, "b": 6}], name="t")
    return runs_on(ctx, p, changed)


def runs_on(ctx: Ctx, p: Any, *resources: Any) -> Any:
    for res in resources:
        ctx.run(p, res)
    return p


def s_mark_key_replaces_resource_key(ctx: Ctx) -> Any:
    @ctx.lib.resource(name="t", primary_key="id")
    def generate() -> Any:
        yield ctx.lib.mark.with_hints(ROWS, ctx.lib.mark.make_hints(primary_key="b"))

    return runs(ctx, generate())


def s_later_run_key_replaces_stored_key(ctx: Ctx) -> Any:
    return runs(ctx, table(ctx, primary_key="id"), table(ctx, primary_key="a"))


def s_later_run_merge_key_replaces_stored_key(ctx: Ctx) -> Any:
    return runs(ctx, table(ctx, merge_key="id"), table(ctx, merge_key=["a", "b"]))


def s_later_run_without_key_keeps_stored_key(ctx: Ctx) -> Any:
    return runs(ctx, table(ctx, primary_key="id"), table(ctx))


def s_later_run_partition_replaces_stored_partition(ctx: Ctx) -> Any:
    return runs(ctx, table(ctx, columns={"id": {"partition": True}}), table(ctx, columns={"a": {"partition": True}}))


def s_apply_hints_partitions_add_up(ctx: Ctx) -> Any:
    res = table(ctx, columns={"id": {"partition": True}})
    res.apply_hints(columns={"a": {"partition": True}})
    return runs(ctx, res)


SCRIPTS: dict[str, Callable[[Ctx], Any]] = {
    name[2:]: f for name, f in sorted(globals().items()) if name.startswith("s_") and callable(f)
}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_key_hints_as_dlt(name: str, tmp_path: Path) -> None:
    assert_same(SCRIPTS[name], tmp_path, hints=True)


def test_direct_key_hint_wins_in_the_table_schema() -> None:
    naming = get_naming("snake_case")
    hints = merged_hints(TableHints(columns={"a": {"primary_key": True}}), {"primary_key": "id"})
    hints = merged_hints(hints, {"columns": {"b": {"primary_key": True, "data_type": "text"}}})
    columns = table_schema_from_hints("t", "t", hints, naming)["columns"]
    assert {n for n, c in columns.items() if c.get("primary_key")} == {"id"}
    assert columns["b"] == {"name": "b", "data_type": "text"}
    removed = merged_hints(hints, {"primary_key": ""})
    assert removed.primary_key == []  # given empty: no column is a primary key, whatever the columns say
    assert not any(c.get("primary_key") for c in table_schema_from_hints("t", "t", removed, naming)["columns"].values())

"""`make_nested_hints(write_disposition=...)` (issue 36), side by side with dlt 1.31."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from compat.compat_harness import Ctx, _same_problems_dropped, assert_same, run_side_by_side
from harness import diff

pytestmark = pytest.mark.usefixtures("spark")

CUSTOMERS = [
    {"id": 1, "name": "a", "purchases": [{"id": 10, "customer_id": 1, "n": 1}, {"id": 11, "customer_id": 1, "n": 2}]},
    {"id": 2, "name": "b", "purchases": [{"id": 12, "customer_id": 2, "n": 3}]},
]
CHANGED = [{"id": 1, "name": "a2", "purchases": [{"id": 10, "customer_id": 1, "n": 4}, {"id": 13, "customer_id": 1, "n": 5}]}]


def customers(ctx: Ctx, data: list[dict[str, Any]], nested: dict[str, Any], **hints: Any) -> Any:
    @ctx.lib.resource(name="customers", primary_key="id", nested_hints=nested, **hints)
    def generate() -> Any:
        yield data

    return generate()


def two_runs(nested: Callable[[Any], dict[str, Any]], **hints: Any) -> Callable[[Ctx], Any]:
    def script(ctx: Ctx) -> Any:
        p = ctx.pipeline()
        for data in (CUSTOMERS, CHANGED):
            ctx.run(p, customers(ctx, data, nested(ctx.lib), **hints))
        return p

    return script


def _orphans_unnamed(dataset: dict[str, Any]) -> dict[str, Any]:
    """The dataset with its orphan complaints without the row ids they name (random `_dlt_id`s differ per tool)."""
    problems = sorted(re.sub(r"'[^']*'", "'…'", p) for p in dataset["problems"])
    return {**dataset, "problems": problems}


SCRIPTS: dict[str, Callable[[Ctx], Any]] = {
    "same_as_root": two_runs(lambda lib: {"purchases": lib.mark.make_nested_hints(write_disposition="replace")},
                             write_disposition="replace"),
    "replace_under_append": two_runs(lambda lib: {"purchases": lib.mark.make_nested_hints(write_disposition="replace")}),
    "replace_under_append_delta": two_runs(
        lambda lib: {"purchases": lib.mark.make_nested_hints(write_disposition="replace")}, table_format="delta"),
    "with_columns": two_runs(lambda lib: {"purchases": lib.mark.make_nested_hints(
        write_disposition="append", columns={"n": {"data_type": "double"}})}),
}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_nested_write_disposition_as_dlt(name: str, tmp_path: Path) -> None:
    assert_same(SCRIPTS[name], tmp_path, hints=True)


@pytest.mark.parametrize("table_format", [None, "delta"])
def test_nested_append_under_root_replace_keeps_orphans_as_dlt(table_format: str | None, tmp_path: Path) -> None:
    """The nested table appends while its root is replaced: its older rows stay, orphaned, in dlt and lakeload."""
    script = two_runs(lambda lib: {"purchases": lib.mark.make_nested_hints(write_disposition="append")},
                      write_disposition="replace", table_format=table_format)
    theirs, ours = run_side_by_side(script, tmp_path)
    assert ours.error is None and theirs.error is None
    assert ours.table_hints == theirs.table_hints
    assert ours.table_hints["customers__purchases"]["write_disposition"] == "append"
    for expected, actual in zip(theirs.snapshots, ours.snapshots, strict=True):
        shared = _same_problems_dropped(_orphans_unnamed(expected.dataset), _orphans_unnamed(actual.dataset))
        assert diff(*shared) == [], expected.label
    assert len(ours.dataset["problems"]) == 3  # the three purchases of the first run lost their parents


def test_nested_disposition_differing_from_root_warns() -> None:
    import lakeload

    res = lakeload.resource(CUSTOMERS, name="customers", nested_hints={
        "purchases": lakeload.mark.make_nested_hints(write_disposition="replace")})
    from lakeload.extract.table_schema import table_schemas_from_hints
    from lakeload.schema.naming import get_naming

    with pytest.warns(UserWarning, match="customers__purchases.*'replace'.*'append'"):
        tables = table_schemas_from_hints("customers", "customers", res.hints, get_naming("snake_case"))
    assert tables[1]["write_disposition"] == "replace" and tables[1]["parent"] == "customers"
    same = lakeload.resource(CUSTOMERS, name="customers", nested_hints={"purchases": {}})
    assert "write_disposition" not in table_schemas_from_hints("customers", "customers", same.hints, get_naming("snake_case"))[1]

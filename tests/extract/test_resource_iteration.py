"""Iterating a resource (or a source) outside a pipeline (issue 36): `list(resource)` gives the items of each
yielded page, as dlt 1.31 does; each case runs the same code with dlt and lakeload and compares."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dlt
import pyarrow as pa
import pytest

import lakeload


def pages(lib: Any) -> Any:
    @lib.resource
    def pages() -> Any:
        for page in range(10):
            yield [{"page": page, "i": i} for i in range(1_000)]

    return pages


def transformed(lib: Any) -> Any:
    @lib.transformer
    def stamped(page: Any) -> Any:
        yield [dict(row, stamped=True) for row in page]

    @lib.transformer
    def one_by_one(page: Any) -> Any:
        yield from page

    return pages(lib)() | stamped, pages(lib)() | one_by_one


CASES: dict[str, Callable[[Any], Any]] = {
    "pages": lambda lib: list(pages(lib)()),
    "decorated_function": lambda lib: list(pages(lib)),
    "twice": lambda lib: (lambda r: [len(list(r)), len(list(r))])(pages(lib)()),
    "add_limit_counts_pages": lambda lib: list(pages(lib)().add_limit(2)),
    "add_map_per_record": lambda lib: list(pages(lib)().add_map(lambda r: r["i"]).add_limit(1)),
    "transformer_of_pages": lambda lib: list(transformed(lib)[0]),
    # a transformer generator per page: dlt takes their items in turns, lakeload page after page (same items)
    "transformer_of_records": lambda lib: sorted(transformed(lib)[1], key=lambda r: (r["page"], r["i"])),
    "one_level_only": lambda lib: list(lib.resource(iter([[[1, 2]], [3], []]), name="lists")),
    "records": lambda lib: list(lib.resource([{"a": 1}, {"a": 2}], name="records")),
    "marked_page": lambda lib: list(lib.resource(iter([lib.mark.with_hints([{"a": 1}, {"a": 2}], lib.mark.make_hints(
        table_name="other"))]), name="marked")),
    "materialized_empty": lambda lib: list(lib.resource(iter([lib.mark.materialize_table_schema()]), name="empty")),
    "source_resource": lambda lib: list(lib.source(lambda: pages(lib)(), name="src")().resources["pages"]),
    "source_attribute": lambda lib: list(lib.source(lambda: pages(lib)(), name="src")().pages.add_limit(1)),
    "source_of_one": lambda lib: list(lib.source(lambda: pages(lib)(), name="src")().add_limit(3)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_iteration_as_dlt(name: str) -> None:
    expected = CASES[name](dlt)
    assert CASES[name](lakeload) == expected


def test_ten_pages_of_a_thousand_are_ten_thousand_items() -> None:
    items = list(pages(lakeload)())
    assert len(items) == 10_000 and items[1_000] == {"page": 1, "i": 0}


def test_arrow_tables_stay_tables() -> None:
    table = pa.table({"a": [1, 2]})

    def kinds(lib: Any) -> list[str]:
        return [type(item).__name__ for item in lib.resource(iter([table, [table, table]]), name="arrow")]

    assert kinds(lakeload) == kinds(dlt) == ["Table", "Table", "Table"]


def test_source_of_two_resources_flattens_every_page_in_turns() -> None:
    """Both flatten every page and take the resources' yielded items in turns (dlt's round robin)."""

    def items(lib: Any) -> list[Any]:
        @lib.source
        def two() -> Any:
            return pages(lib)().add_limit(3), lib.resource([{"a": 1}, {"a": 2}], name="flat")

        return list(two())

    ours, theirs = items(lakeload), items(dlt)
    assert len(ours) == 3_002
    assert ours == theirs

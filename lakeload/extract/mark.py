"""`lakeload.mark`: per-item table names and hints, as dlt's `dlt.mark`.

A resource may yield `mark.with_table_name(item, "orders")` to send that item (a record or a page) to another
table, or `mark.with_hints(item, mark.make_hints(table_name=..., write_disposition=..., ...))` to give the table
it goes to its own hints (they are merged over the resource's hints). Marked table names are normalized and
checked like every other table name (`safe_paths`).

A resource may also yield `mark.materialize_table_schema()` (an empty page) to create its table in the schema and
the bucket even when it has no rows, as dlt's.

>>> import os, tempfile
>>> import lakeload
>>> @lakeload.resource
... def events():
...     yield lakeload.mark.with_table_name({"id": 1}, "clicks")
...     yield lakeload.mark.with_hints([{"id": 2}], lakeload.mark.make_hints(table_name="views", primary_key="id"))
>>> tmp = tempfile.TemporaryDirectory()
>>> pipeline = lakeload.pipeline("events", destination=lakeload.destinations.filesystem(os.path.join(tmp.name, "bucket")),
...                              pipelines_dir=tmp.name)
>>> pipeline.extract(events).load_packages[0].row_counts
{'clicks': 1, 'views': 1}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from lakeload.extract.hint_types import (
    AdditionalTableHints,
    ColumnsHint,
    NestedHints,
    ResourceHints,
    TableReference,
    WriteDisposition,
)

__all__ = ["make_hints", "make_nested_hints", "materialize_table_schema", "with_hints", "with_table_name"]


@dataclass(frozen=True)
class MarkedItem:
    """An item with the table name and hints it was marked with (unwrapped by extract)."""

    data: Any
    table_name: str | None = None
    hints: ResourceHints = field(default_factory=lambda: ResourceHints())
    create_table_variant: bool = False  # hints for this table only; else they change the resource's hints


class MaterializedEmptyList(list[Any]):
    """An empty page whose table is created even without rows (extract keeps the table in the package)."""


def materialize_table_schema() -> MaterializedEmptyList:
    """Yield this from a resource to create its table (schema and an empty file) even when it yields no data.

    >>> import lakeload
    >>> @lakeload.resource(columns={"id": {"data_type": "bigint"}})
    ... def maybe_empty():
    ...     yield lakeload.mark.materialize_table_schema()
    >>> list(maybe_empty)    # an empty page, marked: no items, yet normalize creates the table without rows
    []
    """
    return MaterializedEmptyList()


def make_hints(
    table_name: str | None = None,
    write_disposition: str | WriteDisposition | None = None,
    columns: ColumnsHint | None = None,
    primary_key: str | Sequence[str] | None = None,
    merge_key: str | Sequence[str] | None = None,
    table_format: str | None = None,
    file_format: str | None = None,
    max_table_nesting: int | None = None,
    references: Sequence[TableReference] | None = None,
    nested_hints: dict[str | tuple[str, ...], NestedHints] | None = None,
    additional_table_hints: AdditionalTableHints | None = None,
) -> ResourceHints:
    """Table hints as a dict (the ones given), for `with_hints` or `Resource.apply_hints(**hints)`."""
    given = dict(
        table_name=table_name, write_disposition=write_disposition, columns=columns, primary_key=primary_key,
        merge_key=merge_key, table_format=table_format, file_format=file_format, max_table_nesting=max_table_nesting,
        references=references, nested_hints=nested_hints, additional_table_hints=additional_table_hints,
    )
    return cast(ResourceHints, {key: value for key, value in given.items() if value is not None})


def make_nested_hints(
    columns: ColumnsHint | None = None,
    primary_key: str | Sequence[str] | None = None,
    merge_key: str | Sequence[str] | None = None,
    references: Sequence[TableReference] | None = None,
    additional_table_hints: AdditionalTableHints | None = None,
    write_disposition: str | WriteDisposition | None = None,
) -> NestedHints:
    """Hints of one nested table, for a resource's `nested_hints={"path": make_nested_hints(...)}` (as dlt's).

    A `write_disposition` is the nested table's own, as in dlt: the load replaces (or appends to) that table by it,
    whatever its root's is (a disposition that differs from the root's is warned about). Nested tables without one
    take their parent's.

    >>> make_nested_hints(columns=[{"name": "price", "data_type": "decimal"}])
    {'columns': [{'name': 'price', 'data_type': 'decimal'}]}
    >>> make_nested_hints(write_disposition="merge")
    {'write_disposition': 'merge'}
    """
    given = dict(columns=columns, primary_key=primary_key, merge_key=merge_key, references=references,
                 additional_table_hints=additional_table_hints, write_disposition=write_disposition)
    return cast(NestedHints, {key: value for key, value in given.items() if value is not None})


def with_table_name(item: Any, table_name: str) -> MarkedItem:
    """`item` (a record or a page) goes to the table `table_name`."""
    return MarkedItem(item, table_name=table_name)


def with_hints(item: Any, hints: ResourceHints, create_table_variant: bool = False) -> MarkedItem:
    """`item` goes to the table of `hints` (its `table_name`, else the resource's), which takes these hints.

    As in dlt, the hints are applied to the resource (later items and tables keep them) unless
    `create_table_variant` is set: then they are the hints of that one table only.
    """
    return MarkedItem(item, table_name=hints.get("table_name"), hints=ResourceHints(**hints), create_table_variant=create_table_variant)

"""Folding per-split schema additions in split order gives a sequential run's schema (no Spark)."""

from __future__ import annotations

import copy
from typing import Any

from lakeload.kernel.normalize.coerce import RowCoercer
from lakeload.normalize.fold import conflicts, fold
from lakeload.schema.naming import SnakeCaseNaming
from lakeload.schema.schema import DEFAULT_HINTS


def infer(seed: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    tables = copy.deepcopy(seed)
    c = RowCoercer(tables, SnakeCaseNaming(), ("iso_timestamp",), DEFAULT_HINTS)
    for row in rows:
        c.coerce_row("t", None, row)
    touched = set(c.added) | set(c.new_tables)
    return {"new_tables": c.new_tables, "added": c.added, "tables": {n: tables[n] for n in touched}, "row_counts": c.row_counts}


def columns(tables: dict[str, Any]) -> list[tuple[str, str]]:
    return [(n, c["data_type"]) for n, c in tables["t"]["columns"].items()]


def test_fold_in_split_order_equals_sequential_inference() -> None:
    split_a = [{"a": 1}, {"b": "x"}]
    split_b = [{"c": 1.5, "a": 2}, {"b": "y", "d": True}]
    folded: dict[str, Any] = {}
    for part in (split_a, split_b):
        result = infer({}, part)
        assert conflicts(folded, result) == []
        fold(folded, result)
    assert columns(folded) == columns(infer({}, split_a + split_b)["tables"])


def test_a_split_that_starts_with_another_type_conflicts_and_reinference_fixes_it() -> None:
    split_a = [{"a": 1}]
    split_b = [{"a": "ten"}, {"a": 3}]
    folded: dict[str, Any] = {}
    fold(folded, infer({}, split_a))
    naive = infer({}, split_b)
    assert conflicts(folded, naive) == ["t.a: bigint vs text"]
    exact = infer(folded, split_b)  # seeded with what earlier splits fixed
    assert conflicts(folded, exact) == []
    fold(folded, exact)
    assert columns(folded) == columns(infer({}, split_a + split_b)["tables"]) == [("a", "bigint"), ("a__v_text", "text")]

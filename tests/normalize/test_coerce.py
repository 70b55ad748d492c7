"""Row coercion and inference follow dlt: first type wins, coercions, variants, hints (no Spark)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from lakeload.errors import SchemaError
from lakeload.kernel.normalize.coerce import RowCoercer, SchemaFrozenError
from lakeload.schema.naming import SnakeCaseNaming
from lakeload.schema.schema import DEFAULT_HINTS


def coercer(tables: dict[str, Any] | None = None, frozen: bool = False) -> RowCoercer:
    return RowCoercer(tables if tables is not None else {}, SnakeCaseNaming(), ("iso_timestamp",), DEFAULT_HINTS, frozen)


def test_first_type_wins_coercion_and_variants() -> None:
    c = coercer()
    assert c.coerce_row("t", None, {"a": 1, "b": True, "ts": "2024-05-01T10:00:00+02:00"}) == {
        "a": 1, "b": True, "ts": dt.datetime(2024, 5, 1, 8, tzinfo=dt.timezone.utc),
    }
    assert c.coerce_row("t", None, {"a": "7", "b": 5, "ts": "hello"}) == {"a": 7, "b": True, "ts__v_text": "hello"}
    assert c.coerce_row("t", None, {"a": "ten"}) == {"a__v_text": "ten"}
    columns = c.tables["t"]["columns"]
    assert [(n, col["data_type"]) for n, col in columns.items()] == [
        ("a", "bigint"), ("b", "bool"), ("ts", "timestamp"), ("ts__v_text", "text"), ("a__v_text", "text"),
    ]
    assert columns["a__v_text"]["variant"] is True
    assert c.added == {"t": ["a", "b", "ts", "ts__v_text", "a__v_text"]} and c.new_tables == ["t"]


def test_nulls_create_nothing_and_dlt_columns_get_hints() -> None:
    c = coercer()
    assert c.coerce_row("t", None, {"x": None, "_dlt_id": "abc", "_dlt_load_id": "1.5"}) == {"_dlt_id": "abc", "_dlt_load_id": "1.5"}
    assert "x" not in c.tables["t"]["columns"] and c.null_only == {"t": {"x"}}
    assert c.tables["t"]["columns"]["_dlt_id"] == {"name": "_dlt_id", "data_type": "text", "nullable": False, "unique": True, "row_key": True}
    with pytest.raises(SchemaError, match="not nullable"):
        c.coerce_row("t", None, {"_dlt_id": None})


def test_hint_only_columns_are_completed_and_move_to_the_end() -> None:
    """As dlt 1.31: a hints-only column that gets data leaves its place (checked: ['s', 'id', ...] in dlt)."""
    tables = {"t": {"name": "t", "columns": {"id": {"name": "id", "nullable": False, "primary_key": True}, "s": {"name": "s", "data_type": "text"}}}}
    c = coercer(tables)
    assert c.coerce_row("t", None, {"s": 5, "id": 3}) == {"s": "5", "id": 3}
    assert tables["t"]["columns"]["id"] == {"name": "id", "nullable": False, "primary_key": True, "data_type": "bigint"}
    assert list(tables["t"]["columns"]) == ["s", "id"]


def test_frozen_schema_refuses_to_grow() -> None:
    tables = {"t": {"name": "t", "columns": {"a": {"name": "a", "data_type": "bigint", "nullable": True}}}}
    c = coercer(tables, frozen=True)
    assert c.coerce_row("t", None, {"a": 1}) == {"a": 1}
    with pytest.raises(SchemaFrozenError):
        c.coerce_row("t", None, {"b": 1})

"""lakeload's `_dlt_id` digests against dlt 1.31's own (dlt is the oracle here, imported only by tests)."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from dlt.common.normalizers.json.helpers import get_nested_row_hash, get_row_hash
from dlt.common.normalizers.utils import generate_dlt_id
from hypothesis import given, settings
from hypothesis import strategies as st

from lakeload.normalize.executor_row_ids import (
    key_ids_array,
    key_row_id,
    nested_ids_array,
    nested_row_id,
    random_row_id,
)

KEY_VALUES: list[Any] = [
    0, 1, -1, 2**63 - 1, -(2**63), 1.5, -0.0, 1e300, 3.0, True, False, None,
    "", "a", "id-1", "with space", 'quote"and\\slash', "tab\tnew\nline", "ünïcödé", "日本語", "emoji 🦆", "\u0000",
    "\U0010fffd", Decimal("1.10"), Decimal("-3E+5"), dt.datetime(2026, 1, 2, 3, 4, 5),
    dt.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=dt.timezone.utc),
    dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=-5))), dt.date(2026, 2, 28),
    dt.time(12, 30, 1), uuid.UUID("12345678-1234-5678-1234-567812345678"), b"\x00\xffbytes",
]


@pytest.mark.parametrize("value", KEY_VALUES, ids=repr)
def test_single_column_key_ids_equal_dlts(value: Any) -> None:
    row = {"id": value, "other": "not in the key", "_dlt_load_id": "1.2"}
    assert key_row_id(row, ("id",)) == get_row_hash(row, subset=["id"])


def test_compound_key_ids_equal_dlts_in_any_key_order() -> None:
    for first in KEY_VALUES:
        for second in ("b", 7, None, "ß"):
            row = {"zeta": first, "alpha": second, "m_ü": 1, "x": [1, 2]}
            expected = get_row_hash(row, subset=["zeta", "alpha", "m_ü"])
            assert key_row_id(row, ("zeta", "alpha", "m_ü")) == expected
            assert key_row_id(row, ("m_ü", "alpha", "zeta")) == expected  # dlt sorts the key columns


@given(st.dictionaries(st.text(min_size=1), st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1),
                                                      st.floats(allow_nan=False, allow_infinity=False), st.text()),
                       min_size=1, max_size=4))
@settings(max_examples=300, deadline=None)
def test_key_ids_equal_dlts_for_generated_keys(row: dict[str, Any]) -> None:
    key = tuple(row)
    assert key_row_id(row, key) == get_row_hash(row, subset=list(key))


@given(st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=60), st.integers(0, 10**9))
@settings(max_examples=300, deadline=None)
def test_nested_ids_equal_dlts(parent: str, table: str, idx: int) -> None:
    assert nested_row_id(parent, table, idx) == get_nested_row_hash(parent, table, idx)


def test_arrow_batch_functions_equal_dlts() -> None:
    rows = [{"id": v, "sub": "ä"} for v in (1, 2, None, 10**12)]
    keys = pa.array(rows, pa.struct([("sub", pa.string()), ("id", pa.int64())]))
    assert key_ids_array(keys).to_pylist() == [get_row_hash(r, subset=["id", "sub"]) for r in rows]
    parents = [get_row_hash(r, subset=["id"]) for r in rows]
    tables = ["users__tags", "users__tags", "users__tags__list", "ü__x"]
    got = nested_ids_array(pa.array(parents), pa.array(tables), pa.array([0, 1, 2, 3], pa.int64())).to_pylist()
    assert got == [get_nested_row_hash(p, t, i) for p, t, i in zip(parents, tables, range(4), strict=True)]


def test_random_ids_have_dlts_form() -> None:
    ids = {random_row_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert {len(i) for i in ids} == {len(generate_dlt_id())} == {14}

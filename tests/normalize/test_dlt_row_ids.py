"""lakeload's `_dlt_id` digests against dlt 1.31's own (dlt is the oracle here, imported only by tests)."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from dlt.common.json import json as dlt_json
from dlt.common.normalizers.json.helpers import get_nested_row_hash
from dlt.common.normalizers.json.helpers import get_row_hash as dlt_row_hash
from dlt.common.normalizers.utils import generate_dlt_id
from hypothesis import given, settings
from hypothesis import strategies as st

from lakeload.kernel.normalize.row_ids import (
    key_ids_array,
    key_row_id,
    nested_ids_array,
    nested_row_id,
    random_row_id,
)
from lakeload.schema import typed_json


def get_row_hash(row: dict[str, Any], subset: list[str]) -> str:
    """dlt's key hash of `row` as dlt's normalize sees it: read back from the extracted (typed) JSON line."""
    return dlt_row_hash(dlt_json.loadb(dlt_json.typed_dumpb(row)), subset=subset)


KEY_VALUES: list[Any] = [
    0, 1, -1, 2**63 - 1, -(2**63), 1.5, -0.0, 1e300, 3.0, True, False, None,
    "", "a", "id-1", "with space", 'quote"and\\slash', "tab\tnew\nline", "ünïcödé", "日本語", "emoji 🦆", "\u0000",
    "\U0010fffd", Decimal("1.10"), Decimal("-3E+5"), dt.datetime(2026, 1, 2, 3, 4, 5),
    dt.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=dt.timezone.utc),
    dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=-5))), dt.date(2026, 2, 28),
    dt.time(12, 30, 1), dt.time(1, 2, 3, 4, tzinfo=dt.timezone.utc), uuid.UUID("12345678-1234-5678-1234-567812345678"),
    b"\x00\xffbytes",
]


@pytest.mark.parametrize("value", KEY_VALUES, ids=repr)
def test_single_column_key_ids_equal_dlts(value: Any) -> None:
    row = {"id": value, "other": "not in the key", "_dlt_load_id": "1.2"}
    assert key_row_id(row, ("id",)) == get_row_hash(row, subset=["id"])
    # what lakeload's Python path hashes: the row read back from its own extracted (typed) JSON line
    assert key_row_id(typed_json.loads(typed_json.dumps(row)), ("id",)) == get_row_hash(row, subset=["id"])


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


# ---------------------------------------------------------------- whole records: both normalize paths vs dlt's

RECORDS: list[dict[str, Any]] = [
    {"id": i, "name": f"nä{i}", "tags": [{"t": f"x{i}", "notes": ["a", "b"][: 1 + i % 2]}, {"t": "y"}],
     "scores": [i, i + 1], "matrix": [[1, 2], [3]], "meta": {"src": "s", "list": [{"k": 1}]}}
    for i in range(12)
]
ID_KEYS = ("_dlt_id", "_dlt_parent_id", "_dlt_list_idx", "_dlt_root_id")


def dlt_ids(records: list[dict[str, Any]], primary_key: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """(table, id columns) of every row dlt's relational normalizer makes of `records` for a Delta merge table
    of the filesystem destination (which dlt upserts)."""
    import dlt
    from dlt.common.configuration.container import Container

    with Container().injectable_context(dlt.destinations.filesystem("unused").capabilities()):
        schema = dlt.Schema("oracle")
        columns = {k: {"name": k, "primary_key": True, "nullable": False} for k in primary_key}
        schema.update_table({"name": "events", "write_disposition": "merge", "table_format": "delta", "columns": columns})
        normalizer = schema.data_item_normalizer
        normalizer.extend_table("events")  # the root key propagation dlt sets up for merge tables
        normalizer._reset()
        assert normalizer._get_root_row_id_type("events") == "key_hash"
        lines = [dlt_json.loadb(dlt_json.typed_dumpb(rec)) for rec in records]  # as dlt's normalize reads them
        rows = [(table, row) for rec in lines for (table, _, _), row in normalizer.normalize_data_item(rec, "1.2", "events")]
    return [(table, {k: row[k] for k in ID_KEYS if k in row}) for table, row in rows]


def lakeload_ids(tables: dict[str, list[dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    return sorted(((t, {k: r[k] for k in ID_KEYS if k in r}) for t, rows in tables.items() for r in rows), key=repr)


def test_python_normalizer_ids_equal_dlts() -> None:
    from lakeload.kernel.normalize.relational import (
        NormalizerSettings,
        RelationalNormalizer,
        RootTableSettings,
    )
    from lakeload.schema.naming import SnakeCaseNaming

    records = [{**r, "seen": dt.datetime(2026, 1, 1, r["id"], tzinfo=dt.timezone.utc), "day": dt.date(2026, 1, 1 + r["id"]),
                "price": Decimal(r["id"]) / 4} for r in RECORDS]
    for key in (("id", "name"), ("seen",), ("price", "day", "id")):
        roots = {"events": RootTableSettings(row_id="key_hash", primary_key=key, propagate_root_key=True)}
        normalizer = RelationalNormalizer(NormalizerSettings(load_id="1.2", naming=SnakeCaseNaming(), roots=roots))
        lines = [typed_json.loads(typed_json.dumps(rec)) for rec in records]  # as lakeload's normalize reads them
        ours = [(t, {k: r[k] for k in ID_KEYS if k in r}) for rec in lines for t, _, r in normalizer.normalize(rec, "events")]
        assert ours == dlt_ids(records, list(key)), key


def test_arrow_fast_path_ids_equal_dlts(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from arrow_compare import run_both

    from lakeload.kernel.normalize.relational import RootTableSettings

    roots = {"events": RootTableSettings(row_id="key_hash", primary_key=("id", "name"), propagate_root_key=True)}
    _, fast_rows = run_both(monkeypatch, tmp_path, RECORDS, roots=roots, expect_fast=True)  # the fast path ran
    assert lakeload_ids(fast_rows) == sorted(dlt_ids(RECORDS, ["id", "name"]), key=repr)

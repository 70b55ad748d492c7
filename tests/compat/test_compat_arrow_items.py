"""Arrow tables and pandas frames as items (issue 32, item 10) side by side with dlt 1.31: the Arrow schema is the
table's schema (struct and list columns are `json` columns, not child tables; names normalized; Arrow types
kept in the files), and the filesystem destination loads them as Parquet by default, plain or Delta.

The `_dlt_id`/`_dlt_load_id` columns lakeload adds to such tables are left out of the comparison (`arrow_ids`,
a deliberate difference: README "Coming from dlt")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from compat_harness import Ctx, assert_same

pytestmark = pytest.mark.usefixtures("spark")

POINT = pa.struct([("x", pa.int64()), ("label", pa.string())])


def first_items() -> pa.Table:
    return pa.table({
        "id": pa.array([1, 2, 3], pa.int64()),
        "Display Name": ["a", "b", None],
        "point": pa.array([{"x": 1, "label": "p"}, {"x": 2, "label": None}, None], POINT),
        "tags": pa.array([["t1", "t2"], [], None], pa.list_(pa.string())),
        "small": pa.array([7, 8, 9], pa.int32()),
    })


def second_items() -> pa.Table:
    """Columns in another order, one missing and one new: the table's order stays the first item's."""
    return pa.table({
        "tags": pa.array([["t3"]], pa.list_(pa.string())),
        "id": pa.array([4], pa.int64()),
        "point": pa.array([{"x": 4, "label": "q"}], POINT),
        "score": pa.array([1.5], pa.float64()),
    })


def file_kinds(ctx: Ctx, table: str) -> list[str]:
    """The kinds of data file in the table's folder (the Delta log left out), with the Arrow types of the
    nested columns as stored: what dlt's `filesystem` writes for Arrow items."""
    folder = ctx.bucket / "ds" / table
    found = set()
    for path in folder.rglob("*"):
        if path.is_file() and "_delta_log" not in path.parts:
            kind = "parquet" if path.name.endswith(".parquet") else path.name.split(".", 3)[-1]
            if kind == "parquet":
                schema = pq.read_schema(path)
                kind += f" point={schema.field('point').type} tags={schema.field('tags').type}"
            found.add(kind)
    return sorted(found)


def script(kind: str, table_format: str | None, **run_kwargs: Any) -> Any:
    def run(ctx: Ctx) -> Any:
        hints = {"table_format": table_format} if table_format else {}

        @ctx.lib.resource(name="items", **hints)
        def items(data: pa.Table) -> Any:
            yield data.to_pandas() if kind == "pandas" else data

        p = ctx.pipeline()
        ctx.run(p, items(first_items()), label="first", **run_kwargs)
        ctx.run(p, items(second_items()), label="second", **run_kwargs)
        ctx.notes["files"] = file_kinds(ctx, "items")
        ctx.notes["tables"] = sorted(t for t in p.default_schema.tables if not t.startswith("_dlt"))
        return p

    return run


@pytest.mark.parametrize("table_format", [None, "delta"])
@pytest.mark.parametrize("kind", ["arrow", "pandas"])
def test_arrow_items_load_as_dlt(kind: str, table_format: str | None, tmp_path: Path) -> None:
    ours = assert_same(script(kind, table_format), tmp_path, hints=True, arrow_ids=True)
    assert ours.notes["tables"] == ["items"]  # no child table of the list column
    assert all(k.startswith("parquet point=struct<") for k in ours.notes["files"])


@pytest.mark.parametrize("kind", ["arrow", "pandas"])
def test_arrow_items_follow_an_explicit_file_format(kind: str, tmp_path: Path) -> None:
    """`run(loader_file_format="jsonl")` writes their rows as JSON lines, nested values as JSON, as dlt does."""
    ours = assert_same(script(kind, None, loader_file_format="jsonl"), tmp_path, hints=True, arrow_ids=True)
    assert ours.notes == {"files": ["jsonl.gz"], "tables": ["items"]}

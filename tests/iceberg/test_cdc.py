"""The `cdc` merge strategy on Delta and Iceberg: each load is the whole source (within its `destination_scope`):
keys that arrive are upserted, stored rows in scope whose key is absent are deleted, nested rows with their roots.
Flat tables are compared with dlt 1.31's Delta tables after the same loads (dlt's only cdc), nested ones (dlt
refuses a scope with nested tables) with the rows written out by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import lakeload

pytestmark = [pytest.mark.usefixtures("spark"), pytest.mark.slow]
pytest.importorskip("pyiceberg")

LOADS = [
    [{"id": 1, "region": "eu", "v": 0}, {"id": 2, "region": "eu", "v": 0}, {"id": 3, "region": "us", "v": 0}],
    [{"id": 2, "region": "eu", "v": 1}, {"id": 4, "region": "eu", "v": 1}],  # id 1 (eu) goes, id 3 (us) stays
    [{"id": 5, "region": "us", "v": 2}],  # every eu row goes
]


def cdc(lib: Any, rows: list[dict[str, Any]], fmt: str, scope: str | None, **hints: Any) -> Any:
    disposition: dict[str, Any] = {"disposition": "merge", "strategy": "cdc"}
    if scope:
        disposition["destination_scope"] = scope
    return lib.resource(rows, name="users", write_disposition=disposition, primary_key="id", table_format=fmt, **hints)


def dlt_rows(tmp_path: Path, scope: str | None) -> list[tuple[Any, ...]]:
    import dlt
    from deltalake import DeltaTable

    p = dlt.pipeline("ref", destination=dlt.destinations.filesystem(str(tmp_path / "dlt")), dataset_name="ds",
                     pipelines_dir=str(tmp_path / "dlt_p"))
    for rows in LOADS:
        p.run(cdc(dlt, rows, "delta", scope))
    return sorted((r["id"], r["region"], r["v"]) for r in DeltaTable(str(tmp_path / "dlt" / "ds" / "users")).to_pyarrow_table().to_pylist())


@pytest.mark.parametrize("scope", [None, "{table}.region = 'eu'"], ids=["everything", "eu_only"])
@pytest.mark.parametrize("fmt", ["delta", "iceberg"])
def test_cdc_deletes_absent_keys_in_scope_as_dlt(tmp_path: Path, fmt: str, scope: str | None) -> None:
    p = lakeload.pipeline("cdc", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")), dataset_name="ds",
                          pipelines_dir=str(tmp_path / "p"))
    for rows in LOADS:
        p.run(cdc(lakeload, rows, fmt, scope))
    with p.sql_client() as client:
        ours = sorted(tuple(r) for r in client.execute_sql("SELECT id, region, v FROM users"))
    assert ours == dlt_rows(tmp_path, scope)
    assert ours == ([(5, "us", 2)] if scope is None else [(3, "us", 0), (5, "us", 2)])


@pytest.mark.parametrize("fmt", ["delta", "iceberg"])
def test_cdc_with_nested_rows_and_a_bad_scope(tmp_path: Path, fmt: str) -> None:
    p = lakeload.pipeline("cdc", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")), dataset_name="ds",
                          pipelines_dir=str(tmp_path / "p"))
    scope = "{table}.region = 'eu'"
    p.run(cdc(lakeload, [{"id": 1, "region": "eu", "pets": ["a"]}, {"id": 2, "region": "us", "pets": ["b", "c"]}], fmt, scope))
    p.run(cdc(lakeload, [{"id": 3, "region": "eu", "pets": ["d"]}], fmt, scope))
    with p.sql_client() as client:
        assert client.execute_sql("SELECT id FROM users ORDER BY id") == [(2,), (3,)]
        assert client.execute_sql("SELECT value FROM users__pets ORDER BY value") == [("b",), ("c",), ("d",)]
    with pytest.raises(lakeload.errors.PipelineStepFailed, match="destination_scope .* is not a valid condition"):
        p.run(cdc(lakeload, [{"id": 4, "region": "eu"}], fmt, "{table}.no_such_column = 1"))

"""Contract-specific helpers: what a contract violation names, and a plain rows-per-table view.

The compat contract scripts (test_compat_contracts.py) compare through ``compat_harness`` (the conformance
harness's datasets after every run, the stored schema contracts); `contract_violation` is their failure
signature. `bucket_rows` is kept for tests/normalize/test_contracts.py (rows of one tool's bucket, not a
dlt comparison).
"""

from __future__ import annotations

import glob
import json
import re
from pathlib import Path
from typing import Any

import duckdb

RANDOM = ("_dlt_id", "_dlt_load_id", "_dlt_parent_id", "_dlt_root_id")


def bucket_rows(dataset: Path) -> dict[str, list[str]]:
    """Rows per data table of a filesystem dataset, as sorted JSON lines."""
    tables: dict[str, list[str]] = {}
    for folder in sorted(glob.glob(str(dataset / "*"))):
        table = Path(folder).name
        files = sorted(glob.glob(f"{folder}/*.parquet"))
        if table.startswith("_dlt") or not files:
            continue
        relation = duckdb.sql(f"SELECT * FROM read_parquet({files!r}, union_by_name=true)")
        rows = relation.to_arrow_table().to_pylist()
        tables[table] = sorted(
            json.dumps({k: v for k, v in r.items() if k not in RANDOM}, sort_keys=True, default=str) for r in rows
        )
    return tables


def violation_of(exc: BaseException) -> dict[str, Any]:
    """The contract a failure names: (table, column, entity, mode), from lakeload's error or dlt's message."""
    seen: BaseException | None = exc
    while seen is not None:
        if hasattr(seen, "schema_entity") and hasattr(seen, "contract_mode"):
            column = getattr(seen, "column_name", None)
            if isinstance(column, str):
                column = column.strip("(),'")
            return {"table": seen.table_name, "column": column,  # type: ignore[attr-defined]
                    "entity": seen.schema_entity, "mode": seen.contract_mode}  # type: ignore[attr-defined]
        seen = seen.__cause__
    text = str(exc)
    entity = re.search(r"Contract on `(\w+)` with `contract_mode=(\w+)`", text)
    table = re.search(r"In Table: `(\w+)`", text)
    column = re.search(r"Column: `([^`]+)`", text)
    return {
        "table": table.group(1) if table else None,
        "column": column.group(1).strip("(),'") if column else None,
        "entity": entity.group(1) if entity else None,
        "mode": entity.group(2) if entity else None,
        "unparsed": None if entity else text[:300],
    }


def contract_violation(exc: BaseException) -> dict[str, Any]:
    """The failure signature of a contract run: a pipeline step failed (dlt's or lakeload's `PipelineStepFailed`),
    naming this contract (see `violation_of`)."""
    assert any(c.__name__ == "PipelineStepFailed" for c in type(exc).__mro__), repr(exc)
    return violation_of(exc)

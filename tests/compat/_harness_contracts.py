"""Runs one contract script with dlt and with lakeload: several runs on one pipeline, then what to compare.

A script is `script(lib) -> list of (data, run kwargs)`; each run either loads or fails. What is compared:
the bucket's rows per table (without the random `_dlt_id`, `_dlt_parent_id`, `_dlt_load_id`), the failures
(step kind aside: table, column, contract entity and mode), and the stored schema's contracts.
"""

from __future__ import annotations

import glob
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

Script = Callable[[Any], list[tuple[Any, dict[str, Any]]]]
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


def contracts_of(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "settings": schema["settings"].get("schema_contract"),
        "tables": {n: t.get("schema_contract") for n, t in schema["tables"].items() if not n.startswith("_dlt")},
    }


def run_script(lib: Any, script: Script, tmp_path: Path, tag: str) -> dict[str, Any]:
    """Every run of `script` on one pipeline; returns rows, failures and stored contracts."""
    p = lib.pipeline(f"contracts_{tag}", destination=lib.destinations.filesystem(str(tmp_path / tag)),
                     dataset_name="ds", pipelines_dir=str(tmp_path / f"{tag}_pipelines"))
    failures = []
    for data, kwargs in script(lib):
        try:
            p.run(data, loader_file_format="parquet", **kwargs)
            failures.append(None)
        except Exception as exc:  # noqa: BLE001 - both libraries' failures are compared
            assert any(c.__name__ == "PipelineStepFailed" for c in type(exc).__mro__), repr(exc)
            failures.append(violation_of(exc))
            p.drop_pending_packages()
    return {"rows": bucket_rows(tmp_path / tag / "ds"), "failures": failures,
            "contracts": contracts_of(p.default_schema.to_dict())}

"""The layout of a dlt-layout bucket beyond its data: files per table, Delta log lengths, stored schema files.

test_compat_pipeline_modes.py compares `bucket_layout` as a note (its data through ``compat_harness``);
`bucket_view` adds plain JSON rows per table for tests/runtime (test_refresh.py, test_sync_schema.py).
"""

from __future__ import annotations

import glob
import gzip
import json
import os
from pathlib import Path
from typing import Any

import duckdb
import orjson

SKIP = {"_dlt_id", "_dlt_load_id", "_dlt_parent_id", "_dlt_root_id"}


def table_rows(folder: Path) -> list[str]:
    """Rows of one table folder (Delta through delta-rs, else its jsonl/parquet files), sorted, as JSON."""
    if (folder / "_delta_log").is_dir():
        from deltalake import DeltaTable

        rows = DeltaTable(str(folder)).to_pyarrow_table().to_pylist()
    else:
        files = sorted(str(p) for p in folder.rglob("*") if p.is_file())
        parquet = [f for f in files if f.endswith(".parquet")]
        jsonl = [f for f in files if ".jsonl" in f]
        rows = []
        if parquet:
            rows += duckdb.sql(f"SELECT * FROM read_parquet({parquet!r})").to_arrow_table().to_pylist()
        if jsonl:
            rows += duckdb.sql(f"SELECT * FROM read_json({jsonl!r}, format='newline_delimited')").to_arrow_table().to_pylist()
    return sorted(json.dumps({k: v for k, v in r.items() if k not in SKIP}, sort_keys=True, default=str) for r in rows)


def data_files(folder: Path) -> int:
    return len([p for p in folder.rglob("*") if p.is_file() and "_delta_log" not in p.parts])


def _table_folders(dataset: Path) -> list[Path]:
    return [folder for folder in sorted(p for p in dataset.iterdir() if p.is_dir() and not p.name.startswith("_"))
            if any(p.is_file() for p in folder.rglob("*"))]


def bucket_view(dataset: Path) -> dict[str, Any]:
    """`bucket_layout` and each table's rows (sorted JSON, without dlt's random ids)."""
    return {"rows": {folder.name: table_rows(folder) for folder in _table_folders(dataset)}} | bucket_layout(dataset)


def bucket_layout(dataset: Path) -> dict[str, Any]:
    """Data-file counts per table, Delta log lengths, schema files and the newest stored schema's tables."""
    view: dict[str, Any] = {"files": {}, "delta_log": {}}
    for folder in _table_folders(dataset):
        view["files"][folder.name] = data_files(folder)
        if (folder / "_delta_log").is_dir():
            view["delta_log"][folder.name] = len(glob.glob(str(folder / "_delta_log" / "*.json")))
    versions = sorted(os.listdir(dataset / "_dlt_version"), key=lambda n: n.split("__")[1])
    view["schema_files"] = len(versions)
    raw = (dataset / "_dlt_version" / versions[-1]).read_bytes()
    record = orjson.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    tables = orjson.loads(record["schema"])["tables"]
    view["schema_tables"] = sorted(n for n in tables if not n.startswith("_dlt"))
    return view

"""Reading a lakeload/dlt bucket back in tests (real files, real DuckDB)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import duckdb


def data_files(bucket: Path, dataset: str, table: str) -> list[Path]:
    folder = bucket / dataset / table
    return sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


def read_rows(bucket: Path, dataset: str, table: str) -> list[dict[str, Any]]:
    """All rows of a table, whatever the file format, through DuckDB."""
    rows: list[dict[str, Any]] = []
    for path in data_files(bucket, dataset, table):
        name = path.name
        if name.endswith(".parquet"):
            query = f"SELECT * FROM read_parquet('{path}')"
        elif ".jsonl" in name:
            query = f"SELECT * FROM read_json('{path}', format='newline_delimited')"
        elif ".csv" in name:
            query = f"SELECT * FROM read_csv('{path}', header=true)"
        else:
            continue
        rel = duckdb.sql(query)
        rows += [dict(zip(rel.columns, values, strict=True)) for values in rel.fetchall()]
    return rows


def jsonl_lines(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def loads_records(bucket: Path, dataset: str) -> list[dict[str, Any]]:
    folder = bucket / dataset / "_dlt_loads"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.jsonl"))] if folder.is_dir() else []


def stored_schema(bucket: Path, dataset: str) -> dict[str, Any]:
    """The newest schema stored in `_dlt_version`."""
    records = [json.loads(p.read_text()) for p in (bucket / dataset / "_dlt_version").glob("*.jsonl")]
    newest = max(records, key=lambda r: (r["version"], r["inserted_at"]))
    return json.loads(newest["schema"])

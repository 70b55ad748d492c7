"""A big package loaded into a DuckDB database file by a child process: DuckDB's buffers (hundreds of MB to GBs for
a million nested events) live in the child, not in the pipeline's driver, and are returned to the system when it
ends. The child runs the same transaction as an in-process load (`DuckDbJobClient.load_in`).

The parent writes a `DuckDbLoadSpec` (JSON) and runs `python -m lakeload.load.duckdb_loader <spec file>`; the child
exits 0 once the transaction committed, or prints `{"error": <class>, "message": ...}` and exits 1 (the parent raises
a `DestinationError` with that message; the package stays pending).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any, TypedDict

from lakeload.errors import DestinationError


class DuckDbJob(TypedDict):
    """One Parquet file of the package: its table, where it is, its format and rows."""

    table_name: str
    path: str
    file_format: str
    rows: int


class DuckDbLoadSpec(TypedDict):
    """What the child needs to load one package (everything JSON)."""

    database: str
    dataset: str  # the DuckDB schema names, as the parent's destination named them
    staging_dataset: str
    replace_strategy: str
    truncate_staging: bool
    pipeline_name: str
    load_id: str
    schema_name: str
    stored_schema: dict[str, Any]
    tables: dict[str, Any]
    row_counts: dict[str, int]
    state: Any
    refresh: Any
    root_tables: list[str]
    created_at: str | None
    jobs: list[DuckDbJob]


def load_in_child(spec: DuckDbLoadSpec) -> None:
    """Run the child on `spec`; a `DestinationError` with the child's message when it failed."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(spec, handle)
    try:
        done = subprocess.run([sys.executable, "-m", "lakeload.load.duckdb_loader", handle.name], capture_output=True, text=True)
    finally:
        os.unlink(handle.name)
    if done.returncode == 0:
        return
    lines = done.stdout.strip().splitlines()
    try:
        message = str(json.loads(lines[-1])["message"])
    except (IndexError, ValueError, KeyError, TypeError):
        message = f"the loader process ended with code {done.returncode}: {done.stderr.strip()[-2000:]}"
    raise DestinationError(message)

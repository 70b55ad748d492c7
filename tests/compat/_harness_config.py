"""Helpers for the dlt-vs-lakeload configuration scripts (tests/compat/test_config_injection.py).

The same script runs with `lib=dlt` and `lib=lakeload` under the same pipeline name, the same environment
variables and the same TOML content (in `.dlt/` for dlt, `.lakeload/` for lakeload); the rows per table are compared.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

PIPELINE = "cfg"


@dataclass(frozen=True)
class Case:
    """A script (`lib -> data for run()`), the environment variables and TOML files (name -> text) it reads."""

    script: Callable[[Any], Any]
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)


def write_files(files: dict[str, str]) -> None:
    """Write each TOML file into `.dlt/` and `.lakeload/` of the current folder."""
    for folder in (".dlt", ".lakeload"):
        for name, text in files.items():
            path = Path(folder) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


def reload_dlt_configuration() -> None:
    """dlt reads its TOML files once per run context: point it at this test's folder and files."""
    import os

    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

    Container()[PluggableRunContext].reload(os.getcwd())


def table_rows(bucket: Path) -> dict[str, list[str]]:
    """Every data table of dataset `ds` in `bucket` as sorted JSON rows, without `_dlt_id`/`_dlt_load_id`."""
    tables: dict[str, list[str]] = {}
    for folder in sorted(glob.glob(str(bucket / "ds" / "*"))):
        table = Path(folder).name
        files = sorted(glob.glob(f"{folder}/*.parquet"))
        if table.startswith("_dlt") or not files:
            continue
        rows = duckdb.sql(f"SELECT * EXCLUDE (_dlt_id, _dlt_load_id) FROM read_parquet({files!r})").to_arrow_table()
        tables[table] = sorted(json.dumps(r, sort_keys=True, default=str) for r in rows.to_pylist())
    return tables


def run_case(lib: Any, case: Case, tmp_path: Path, tag: str) -> dict[str, list[str]]:
    """Create the pipeline first (its name scopes lookups, as in dlt), then call the script and run its data."""
    if lib.__name__ == "dlt":
        reload_dlt_configuration()
    pipe = lib.pipeline(PIPELINE, destination=lib.destinations.filesystem(str(tmp_path / tag)), dataset_name="ds",
                        pipelines_dir=str(tmp_path / f"{tag}_pipelines"))
    pipe.run(case.script(lib), loader_file_format="parquet")
    return table_rows(tmp_path / tag)

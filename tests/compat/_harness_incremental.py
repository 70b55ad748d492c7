"""Run one incremental script with dlt and with lakeload: the same runs, the rows and state each leaves."""

from __future__ import annotations

import copy
import glob
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from lakeload.destinations.impl.filesystem.state_files import typed_values

Script = Callable[[Any, int], Any]  # (lib, run index) -> what pipeline.run gets


@dataclass
class Outcome:
    """What a library left after each run: the incremental state and the tables' rows."""

    states: list[Any] = field(default_factory=list)
    rows: dict[str, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    cursor_columns: dict[str, list[str]] = field(default_factory=dict)  # columns the schema hints `incremental`


def table_rows(bucket: Path, dataset: str = "ds") -> dict[str, list[str]]:
    """Rows per table (without `_dlt_id`/`_dlt_load_id`), as sorted JSON lines."""
    tables: dict[str, list[str]] = {}
    for folder in sorted(glob.glob(str(bucket / dataset / "*"))):
        table = Path(folder).name
        files = sorted(glob.glob(f"{folder}/*.parquet"))
        if table.startswith("_dlt") or not files:
            continue
        rows = duckdb.sql(f"SELECT * FROM read_parquet({files!r}, union_by_name=true)").to_arrow_table().to_pylist()
        random_ids = ("_dlt_id", "_dlt_load_id", "_dlt_parent_id", "_dlt_root_id")
        kept = [{k: v for k, v in r.items() if k not in random_ids} for r in rows]
        tables[table] = sorted(json.dumps(r, sort_keys=True, default=str) for r in kept)
    return tables


def comparable_state(sources: Any) -> Any:
    """`state["sources"]` in dlt's typed JSON (datetimes as typed ISO text), `unique_hashes` sorted (dlt keeps a set)."""
    state = typed_values(copy.deepcopy(sources or {}))

    def sort_hashes(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "unique_hashes" and isinstance(value, list):
                    value.sort()
                sort_hashes(value)

    sort_hashes(state)
    return state


def run_script(lib: Any, script: Script, runs: int, tmp_path: Path, tag: str, pipeline_name: str = "incr") -> Outcome:
    """Run `script` `runs` times in one pipeline of `lib` (a fresh bucket and working folder under `tmp_path`)."""
    outcome = Outcome()
    pipeline = lib.pipeline(pipeline_name, destination=lib.destinations.filesystem(str(tmp_path / tag)), dataset_name="ds",
                            pipelines_dir=str(tmp_path / f"{tag}_pipelines"))
    for index in range(runs):
        try:
            pipeline.run(script(lib, index), loader_file_format="parquet")
        except Exception as exc:  # both libraries must fail alike: the cause's class name is compared
            cause = exc.__cause__ or exc
            outcome.errors.append(type(cause).__name__)
        outcome.states.append(comparable_state(pipeline.state.get("sources")))
    outcome.rows = table_rows(tmp_path / tag)
    schema = pipeline.default_schema.to_dict() if pipeline.default_schema_name else {"tables": {}}
    outcome.cursor_columns = {
        name: sorted(c for c, column in table.get("columns", {}).items() if column.get("incremental"))
        for name, table in schema["tables"].items() if not name.startswith("_dlt")
    }
    return outcome

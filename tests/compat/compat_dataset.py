"""Reading what a compat script left, in the conformance harness's canonical form: data tables (JSONL, Parquet,
CSV and Delta), source state and stored schema contracts.

The conformance reader (``tests/conformance/harness.py`` ``read_bucket``) reads plain table folders of files. A
Delta table folder (``_delta_log/`` plus Parquet files, some of them removed from the table by later commits)
is read here through delta-rs (``deltalake``): its current snapshot, typed by the same rules
(``harness._coerce``) and checked against the schema's data types the way the reader checks Parquet files, so
a Delta table and a Parquet table with the same rows have the same canonical form.

>>> canonical = read_dataset(tmp_path / "bucket")          # dict for harness.diff
>>> state = comparable_state(pipeline.state["sources"])    # JSON, hashes sorted
"""

from __future__ import annotations

import copy
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

_CONFORMANCE = str(Path(__file__).resolve().parent.parent / "conformance")
if _CONFORMANCE not in sys.path:  # importable as `compat.compat_dataset` from other test folders too
    sys.path.insert(0, _CONFORMANCE)

from harness import (  # noqa: E402
    DATASET,
    BadValue,
    CanonicalDataset,
    TableData,
    _coerce,
    arrow_type_prefixes,
    canonicalize,
    read_bucket,
)

DELTA_LOG = "_delta_log"
# lakeload's own record of each load's Delta table versions (README, "Delta tables"): a folder of lakeload's next to
# the data, which dlt ignores; a deliberate addition, so not read as a data table
LAKELOAD_ONLY = frozenset({"_lakeload_delta_versions", "_lakeload_iceberg_versions"})


def _delta_rows(folder: Path, table: TableData, problems: list[str]) -> list[dict[str, Any]]:
    """The current snapshot of one Delta table, typed like the reader types Parquet rows."""
    from deltalake import DeltaTable

    arrow_table = DeltaTable(str(folder)).to_pyarrow_table()
    for arrow_field in arrow_table.schema:
        column = table.columns.get(arrow_field.name)
        prefixes = arrow_type_prefixes(column) if column else ()
        if prefixes and not str(arrow_field.type).startswith(prefixes):
            problems.append(f"delta table {table.name}: column {arrow_field.name} is {arrow_field.type}, "
                            f"schema says {column['data_type']}")  # type: ignore[index]
    rows: list[dict[str, Any]] = []
    for raw_row in arrow_table.to_pylist():
        row: dict[str, Any] = {}
        for name, raw in raw_row.items():
            column = table.columns.get(name)
            if column is None:
                if raw is not None:
                    problems.append(f"{table.name}: delta table has column {name!r} that is not in the schema")
                continue
            value = _coerce(raw, column["data_type"], "parquet")
            if isinstance(value, BadValue):
                problems.append(f"{table.name}.{name}: stored value {value.raw} does not fit type {value.data_type}")
            row[name] = value
        rows.append(row)
    return rows


def read_delta_aware(bucket: Path, dataset: str = DATASET) -> CanonicalDataset:
    """``read_bucket``, with Delta table folders read through delta-rs.

    The plain reader sees a shadow dataset folder that links every entry but the Delta tables (it would read
    their removed files and report ``_delta_log`` as an unexpected folder) and `LAKELOAD_ONLY` folders; the Delta
    tables' rows are added here.
    """
    dataset_dir = bucket / dataset
    delta = {p.name: p for p in dataset_dir.iterdir() if (p / DELTA_LOG).is_dir()}
    if not delta and not any((dataset_dir / name).exists() for name in LAKELOAD_ONLY):
        return read_bucket(bucket, dataset)
    with tempfile.TemporaryDirectory() as shadow:
        view = Path(shadow) / dataset
        view.mkdir()
        for entry in dataset_dir.iterdir():
            if entry.name not in delta and entry.name not in LAKELOAD_ONLY:
                (view / entry.name).symlink_to(entry)
        found = read_bucket(Path(shadow), dataset)
    for name, folder in sorted(delta.items()):
        table = found.tables.get(name)
        if table is None:
            found.problems.append(f"delta folder {name!r} is not a data table of the schema")
            continue
        table.rows = _delta_rows(folder, table, found.problems)
    return found


def read_dataset(bucket: Path, dataset: str = DATASET) -> dict[str, Any] | None:
    """The canonical form (``harness.canonicalize``) of `dataset` in `bucket`; None before anything was loaded."""
    if not (bucket / dataset / "_dlt_version").is_dir():
        return None
    return canonicalize(read_delta_aware(bucket, dataset))


def table_values(canonical: dict[str, Any], table: str) -> Counter[Any]:
    """The rows of one table without the table's name (to compare two tables of one dataset), typed values."""
    values: Counter[Any] = Counter()
    for key, count in canonical["tables"][table]["rows"].items():
        values[key[1:]] += count
    return values


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def comparable_state(sources: Any) -> Any:
    """`state["sources"]` in dlt's typed JSON (datetimes as typed ISO text), `unique_hashes` sorted (dlt keeps a
    set, so their order is not part of the state)."""
    from lakeload.destinations.impl.filesystem.state_files import typed_values

    state = typed_values(copy.deepcopy(sources or {}))

    def sort_hashes(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "unique_hashes" and isinstance(value, list):
                    value.sort()
                sort_hashes(value)
        elif isinstance(node, list):
            for value in node:
                sort_hashes(value)

    sort_hashes(state)
    return as_json(state)


def schema_contracts(p: Any) -> dict[str, Any]:
    """The schema contract settings a pipeline's default schema stores: schema-wide and per data table."""
    if not p.default_schema_name:
        return {}
    schema = p.default_schema.to_dict()
    return as_json({
        "settings": schema.get("settings", {}).get("schema_contract"),
        "tables": {n: t.get("schema_contract") for n, t in schema["tables"].items() if not n.startswith("_dlt")},
    })


ARROW_ID_COLUMNS = ("_dlt_id", "_dlt_load_id")


def arrow_id_tables(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Tables that dlt wrote without `_dlt_id` and lakeload with it: Arrow tables and pandas frames, which dlt 1.31
    loads without `_dlt_id`/`_dlt_load_id` (`add_dlt_id`/`add_dlt_load_id` are off by default) and lakeload with
    both. Only tables without child tables (Arrow items have none)."""
    parents = {t["parent"] for t in expected["tables"].values()}
    return [name for name, table in expected["tables"].items()
            if name in actual["tables"] and name not in parents and table["parent"] is None
            and "_dlt_id" not in dict(table["columns"]) and "_dlt_id" in dict(actual["tables"][name]["columns"])]


def drop_arrow_ids(expected: dict[str, Any], actual: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Copies of two canonical datasets without the id columns only lakeload writes into Arrow-item tables (see
    `arrow_id_tables`), nor the reader's complaints about the rows without `_dlt_id` on dlt's side."""
    expected, actual = copy.deepcopy(expected), copy.deepcopy(actual)
    for name in arrow_id_tables(expected, actual):
        kept = set(dict(expected["tables"][name]["columns"]))
        table = actual["tables"][name]
        gone = [c for c, _ in table["columns"] if c in ARROW_ID_COLUMNS and c not in kept]
        table["columns"] = [(c, t) for c, t in table["columns"] if c not in gone]
        table["hints"] = {c: h for c, h in table["hints"].items() if c not in gone}
        rows: Counter[Any] = Counter()
        for key, count in table["rows"].items():
            rows[(key[0], key[1], key[2], tuple(v for v in key[3] if v[0] not in gone))] += count
        table["rows"] = rows
        expected["problems"] = [p for p in expected["problems"] if p != f"{name}: a row has no _dlt_id"]
        expected["trees"].pop(name, None)
        actual["trees"].pop(name, None)
    return expected, actual

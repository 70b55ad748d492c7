"""Tables a resource materialized without rows (`lakeload.mark.materialize_table_schema()`, dlt's mark).

dlt creates such a table in the schema (its hinted columns plus `_dlt_load_id` and `_dlt_id`) and writes one
empty file of it to the bucket (an empty `jsonl.gz`, a Parquet file with the table's columns and no rows), so a
reader finds the table and its columns though no row came. Normalize does the same for every materialized table
that got no file from its splits.

Example (in normalize, with the package's `plan`, `schema` and the `files` its splits wrote)::

    write_materialized(plan, schema, ["empty_orders"], files)
"""

from __future__ import annotations

import uuid
from typing import Any, cast

import lakeload.kernel.spark.working as wio
from lakeload.kernel.contracts import TPackageFile
from lakeload.kernel.filesystem.safe_paths import check_table_name
from lakeload.kernel.normalize.coerce import _compile_hints, _matches
from lakeload.kernel.normalize.plan import NormalizePlan
from lakeload.kernel.normalize.writers import (
    TableFileWriter,
    arrow_schema,
    complete_columns,
    file_extension,
)
from lakeload.schema.schema import DEFAULT_HINTS, Schema
from lakeload.schema.typing import TColumn, TTable

SYSTEM_COLUMNS = ("_dlt_load_id", "_dlt_id")  # what dlt's normalizer adds to a root table, in its order


def write_materialized(plan: NormalizePlan, schema: Schema, names: list[str], files: list[TPackageFile]) -> list[TPackageFile]:
    """One empty file for each table of `names` that `files` has none of; its system columns added to `schema`."""
    have = {f["table"] for f in files}
    written = []
    for name in names:
        table = schema.tables.get(name)
        if table is None or name in have:
            continue
        _add_system_columns(table, schema.settings.get("default_hints") or DEFAULT_HINTS)
        written.append(_empty_file(plan, name, complete_columns(table)))
    return written


def _add_system_columns(table: TTable, default_hints: dict[str, list[str]]) -> None:
    hints = _compile_hints(default_hints)
    for name in SYSTEM_COLUMNS:
        if name in table["columns"]:
            continue
        column: TColumn = {"name": name, "data_type": "text", "nullable": True}
        for hint, patterns in hints:
            if _matches(patterns, name):
                cast(dict[str, Any], column).update({"nullable": False} if hint == "not_null" else {hint: True})
        table["columns"][name] = column


def _empty_file(plan: NormalizePlan, name: str, columns: dict[str, TColumn]) -> TPackageFile:
    """An empty file of the table in the package's output, in the format its rows would have had."""
    file_format = plan.format_for(name)
    ext = file_extension(file_format, plan.compressed)
    file_id = uuid.uuid4().hex[:10]
    path = wio.join(plan.output_dir, f"{check_table_name(name)}.{file_id}.{ext}")
    writer = TableFileWriter(path, file_format, columns, plan.compressed, name, file_id, ext)
    if file_format == "jsonl":
        writer.write_lines(b"", 0)
    else:
        writer.write_arrow(arrow_schema(columns).empty_table())
    return writer.close()[0]

"""The three tables dlt keeps beside the data (`_dlt_version`, `_dlt_loads`, `_dlt_pipeline_state`), with the
columns, types, nullability and descriptions every stored schema gives them.

>>> sorted(system_tables())
['_dlt_loads', '_dlt_pipeline_state', '_dlt_version']
>>> system_tables()["_dlt_loads"]["columns"]["load_id"]["precision"]
64
"""

from __future__ import annotations

from typing import Any, cast

from lakeload.schema.typing import TColumn, TTable


def _col(name: str, data_type: str, nullable: bool, description: str | None = None, **hints: Any) -> TColumn:
    column = cast(TColumn, {"name": name, "data_type": data_type, "nullable": nullable, **hints})
    if description:
        column["description"] = description
    return column


def system_tables() -> dict[str, TTable]:
    """The three tables dlt keeps beside the data, as they appear in every stored schema."""
    version = {
        "name": "_dlt_version",
        "columns": {
            c["name"]: c
            for c in (
                _col("version", "bigint", False, "Numeric version of the schema, incremented on each schema change"),
                _col("engine_version", "bigint", False, "Version of the dlt schema engine that created this schema"),
                _col("inserted_at", "timestamp", False, "Timestamp when this schema version was stored"),
                _col("schema_name", "text", False, "Name of the schema"),
                _col("version_hash", "text", False, "Unique hash of the schema content, used to detect changes"),
                _col("schema", "text", False, "JSON representation of the complete schema definition"),
            )
        },
        "write_disposition": "skip",
        "resource": "_dlt_version",
        "description": "Created by DLT. Tracks schema updates",
    }
    loads = {
        "name": "_dlt_loads",
        "columns": {
            c["name"]: c
            for c in (
                _col("load_id", "text", False, "Unique identifier of the load operation", precision=64),
                _col("schema_name", "text", True, "Name of the schema associated with this load"),
                _col("status", "bigint", False, "Status of the load operation (0 = success)"),
                _col("inserted_at", "timestamp", False, "Timestamp when the load was completed"),
                _col("schema_version_hash", "text", True, "Hash of the schema version used during this load"),
            )
        },
        "write_disposition": "skip",
        "resource": "_dlt_loads",
        "description": "Created by DLT. Tracks completed loads",
    }
    state = {
        "name": "_dlt_pipeline_state",
        "columns": {
            c["name"]: c
            for c in (
                _col("version", "bigint", False, "Numeric version of the pipeline state"),
                _col("engine_version", "bigint", False, "Version of the dlt state engine"),
                _col("pipeline_name", "text", False, "Name of the pipeline this state belongs to"),
                _col("state", "text", False, "Compressed JSON representation of the pipeline state"),
                _col("created_at", "timestamp", False, "Timestamp when this state was created"),
                _col("version_hash", "text", True, "Hash of the state content, used to detect changes"),
                _col("_dlt_load_id", "text", False, "Load identifier linking this row to its load operation", precision=64),
                _col("_dlt_id", "text", False, unique=True, row_key=True),
            )
        },
        "write_disposition": "append",
        "file_format": "preferred",
        "resource": "_dlt_pipeline_state",
        "x-normalizer": {"seen-data": True},
    }
    return {"_dlt_version": cast(TTable, version), "_dlt_loads": cast(TTable, loads), "_dlt_pipeline_state": cast(TTable, state)}

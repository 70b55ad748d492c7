"""Arguments of `pipeline.run()`/`extract()` turned into what the steps take (kept out of `pipeline.py`).

>>> hint_overrides(table_name="users", schema_contract="freeze")["schema_contract"]
'freeze'
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from lakeload.destinations.impl.filesystem.table_format import table_format_of_hint
from lakeload.schema.schema import Schema
from lakeload.user_warnings import warn_user

logger = logging.getLogger("lakeload.pipeline")


def hint_overrides(
    table_name: str | None = None,
    write_disposition: str | None = None,
    columns: Any = None,
    primary_key: str | Sequence[str] | None = None,
    table_format: str | None = None,
    schema_contract: str | dict[str, str] | None = None,
    loader_file_format: str | None = None,
) -> dict[str, Any]:
    """The table hints `run()`/`extract()` apply to every resource they extract (None: the resource's own).
    `loader_file_format` becomes each table's `file_format` hint, as dlt stores it in the schema."""
    return dict(
        table_name=table_name, write_disposition=write_disposition, columns=columns, primary_key=primary_key,
        table_format=table_format, schema_contract=schema_contract, file_format=loader_file_format,
    )


def warn_merge_fallback(schema: Schema, manifest: dict[str, Any]) -> None:
    """Warn for every merge table of the package whose table format cannot merge (it is appended to)."""
    for name in manifest["tables"]:
        table = schema.tables.get(name, {})
        if table.get("write_disposition") == "merge" and not table_format_of_hint(table.get("table_format")).capabilities.merge_strategies:
            msg = f"Falling back to 'append' on '{name}': merge needs table_format='delta' on a filesystem destination."
            logger.warning(msg)
            warn_user(msg)

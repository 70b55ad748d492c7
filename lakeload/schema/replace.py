"""The replace strategies of a root table: dlt's overwrite the whole table; lakeload's `partitions` (table hint
`x-replace-strategy`) replaces only the partitions a load has rows in (`lakeload.delta.merge`'s partition replace)."""

from __future__ import annotations

from typing import Any, cast

from lakeload.schema.typing import TTable

REPLACE_PARTITIONS = "partitions"  # the replace strategy (`x-replace-strategy`) replacing only the loaded partitions


def replaces_partitions(table: TTable) -> bool:
    """Whether a root table's replace overwrites only the partitions its load has rows in (lakeload's
    `x-replace-strategy` "partitions"; dlt's strategies overwrite the whole table).

    >>> replaces_partitions({"name": "ev", "write_disposition": "replace", "x-replace-strategy": "partitions", "columns": {}})
    True
    """
    return table.get("write_disposition") == "replace" and cast(dict[str, Any], table).get("x-replace-strategy") == REPLACE_PARTITIONS

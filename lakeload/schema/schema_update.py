"""What one package changed in its schema: dlt's `package.schema_update`, the way to alert on schema changes.

Example (`package` of a run, e.g. `info.load_packages[0]`)::

    for table_name, table in package.schema_update.items():
        for column_name, column in table["columns"].items():
            print(f"{table_name}.{column_name}: {column['data_type']}")

A new table comes whole (its hints and columns); a known table comes with its table keys (`name`, `parent`)
and only the columns that are new or changed.
"""

from __future__ import annotations

from typing import Any, cast

from lakeload.schema.typing import TTable

IDENTITY_KEYS = ("name", "parent")  # kept in an entry of a known table, so a reader knows where it belongs


def schema_update(before: dict[str, TTable], after: dict[str, TTable]) -> dict[str, TTable]:
    """The tables of `after` that are new or have new/changed columns compared with `before`.

    >>> schema_update({}, {"users": {"name": "users", "columns": {"id": {"name": "id", "data_type": "bigint"}}}})
    {'users': {'name': 'users', 'columns': {'id': {'name': 'id', 'data_type': 'bigint'}}}}
    """
    update: dict[str, TTable] = {}
    for name, table in after.items():
        known = before.get(name)
        if known is None:
            update[name] = table
            continue
        old_columns = known.get("columns", {})
        changed = {c: col for c, col in table.get("columns", {}).items() if old_columns.get(c) != col}
        if changed:
            update[name] = cast(TTable, {**{k: cast(dict[str, Any], table)[k] for k in IDENTITY_KEYS if k in table}, "columns": changed})
    return update

"""dlt's `scd2` merge strategy as table hints: what a resource's write disposition dict makes of its table schema,
and what the loader reads back from it (dlt 1.31's names, so that dlt and lakeload can load one table in turn).

`write_disposition={"disposition": "merge", "strategy": "scd2", ...}` gives the root table:
- two validity columns, `_dlt_valid_from` (hint `x-valid-from`) and `_dlt_valid_to` (`x-valid-to`, carrying
  `x-active-record-timestamp`), timestamps, named by `validity_column_names`;
- a row version column (`x-row-version`): `_dlt_id`, whose value is then the hash of the record's data
  (`kernel.normalize.row_ids.row_hash_id`), or the user's `row_version_column_name`;
- `x-boundary-timestamp` when `boundary_timestamp` is given: the time a load's retirements and insertions take
  (else the package's creation time, as dlt's default).

>>> table = {"name": "users", "columns": {}}
>>> add_scd2_hints(table, {"validity_column_names": ["from_", "to_"], "boundary_timestamp": "2024-01-01"})
>>> list(table["columns"]), table["x-boundary-timestamp"]
(['from_', 'to_', '_dlt_id'], '2024-01-01T00:00:00+00:00')
>>> validity_columns(table), row_version_column(table)
(('from_', 'to_'), '_dlt_id')
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, timezone
from typing import Any

import pendulum

from lakeload.errors import ConfigurationError

SCD2 = "scd2"
DEFAULT_VALIDITY_COLUMN_NAMES = ("_dlt_valid_from", "_dlt_valid_to")
ROW_HASH_COLUMN = "_dlt_id"
SCD2_OPTIONS = ("validity_column_names", "active_record_timestamp", "boundary_timestamp", "row_version_column_name")


def utc_timestamp(value: Any, option: str) -> datetime:
    """A datetime (or ISO text, or a date) as an aware UTC datetime; naive values are UTC, as in dlt.

    >>> utc_timestamp("2024-05-01T02:00:00+02:00", "boundary_timestamp").isoformat()
    '2024-05-01T00:00:00+00:00'
    """
    try:
        if isinstance(value, datetime):
            parsed = value
        elif isinstance(value, date):
            parsed = datetime(value.year, value.month, value.day)
        else:
            parsed = pendulum.parse(str(value))  # type: ignore[assignment]
            if not isinstance(parsed, datetime):
                raise ValueError(value)
    except Exception:
        raise ConfigurationError(
            f"Could not parse scd2 option {option}={value!r} as a timestamp; give a datetime or ISO 8601 text "
            "such as '2024-01-01T00:00:00Z'."
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    aware = parsed.astimezone(timezone.utc)
    return datetime(aware.year, aware.month, aware.day, aware.hour, aware.minute, aware.second, aware.microsecond, timezone.utc)


def add_scd2_hints(table: dict[str, Any], options: dict[str, Any]) -> None:
    """Put the scd2 `options` of a write disposition dict on `table` (a root table schema) as dlt does.

    Timestamps are stored as ISO text in UTC (the schema is JSON)."""
    names = options.get("validity_column_names")
    if names is None:
        names = DEFAULT_VALIDITY_COLUMN_NAMES
    if isinstance(names, str) or len(names) != 2:
        raise ConfigurationError(
            f"Table '{table['name']}': scd2's validity_column_names takes two column names (valid from, valid to), "
            f"got {names!r}."
        )
    from_, to = names
    active = options.get("active_record_timestamp")
    columns = table.setdefault("columns", {})
    columns[from_] = {"name": from_, "data_type": "timestamp", "nullable": True, "x-valid-from": True}
    columns[to] = {
        "name": to, "data_type": "timestamp", "nullable": True, "x-valid-to": True,
        "x-active-record-timestamp": None if active is None else utc_timestamp(active, "active_record_timestamp").isoformat(),
    }
    version = options.get("row_version_column_name") or ROW_HASH_COLUMN
    columns[version] = {
        **columns.get(version, {}), "name": version, "nullable": False, "x-row-version": True, "unique": False,
        "row_key": False,
    }
    if options.get("boundary_timestamp") is not None:
        table["x-boundary-timestamp"] = utc_timestamp(options["boundary_timestamp"], "boundary_timestamp").isoformat()
    elif "boundary_timestamp" in options:
        table["x-boundary-timestamp"] = None  # dlt: None resets the boundary to the package's creation time


def _column_with(table: Mapping[str, Any], hint: str) -> str | None:
    return next((name for name, column in table.get("columns", {}).items() if column.get(hint)), None)


def is_scd2(table: Mapping[str, Any]) -> bool:
    """Whether `table` (a root table schema) is merged by the scd2 strategy."""
    return table.get("write_disposition") == "merge" and table.get("x-merge-strategy") == SCD2


def validity_columns(table: Mapping[str, Any]) -> tuple[str, str]:
    """The (valid from, valid to) column names of an scd2 table."""
    from_, to = _column_with(table, "x-valid-from"), _column_with(table, "x-valid-to")
    if from_ is None or to is None:
        raise ConfigurationError(
            f"Table '{table['name']}' is merged with the scd2 strategy but its schema has no validity columns; load "
            "it with write_disposition={'disposition': 'merge', 'strategy': 'scd2'} on its resource."
        )
    return from_, to


def row_version_column(table: Mapping[str, Any]) -> str:
    """The column that identifies a record's version (`_dlt_id`, the row hash, unless the user names one)."""
    return _column_with(table, "x-row-version") or ROW_HASH_COLUMN


def active_record_timestamp(table: Mapping[str, Any]) -> datetime | None:
    """The valid-to value of active records (None: NULL marks them)."""
    to = validity_columns(table)[1]
    value = table["columns"][to].get("x-active-record-timestamp")
    return None if value is None else utc_timestamp(value, "active_record_timestamp")


def boundary_timestamp(table: Mapping[str, Any], created_at: str | None) -> datetime:
    """The time a load's retirements and insertions take: the table's `x-boundary-timestamp`, else the load
    package's creation time (dlt's default)."""
    value = table.get("x-boundary-timestamp")
    if value is None:
        value = created_at
    if value is None:
        raise ConfigurationError(f"Table '{table['name']}': the load package has no creation time for scd2's boundary.")
    return utc_timestamp(value, "boundary_timestamp")

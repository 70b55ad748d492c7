"""Driver side: a Delta table whose transaction log lost commits or holds a broken one, told apart and named.

Two kinds of damage, both refused before anything is written to the table (`DeltaLogDamagedError`):
- the log cannot be read: a commit file in the middle is missing ("found gap") or one is truncated (a JSON
  error). delta-rs refuses to open the table; the message says which table and how to mend it;
- the log reads, but at a version below the one lakeload recorded with the last completed load of the schema
  (`lakeload.delta.load_versions`) for the same table (the table id matches, so it was not dropped and made
  again): its newest commit files were deleted. A load on top of the older version would bring back rows
  that later loads had changed or removed, and later commits would reuse the lost version numbers.
A table that cannot be read is left out of the versions recorded with a load that does not write to it, so a
damaged table blocks only the loads that write to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeload.errors import DeltaLogDamagedError

if TYPE_CHECKING:
    from deltalake import DeltaTable

# how delta-rs' kernel says that the log itself is broken (words that all appear), not that storage failed (a
# storage error can name a checkpoint or JSON too: a failed read of `_last_checkpoint`, an error document)
_DAMAGE = {
    ("found gap",): "commit files are missing in the middle of its log",
    ("contiguous commit files",): "commit files are missing in the middle of its log",
    ("kernel error", "json error", "truncated"): "a commit file of its log is truncated",
    ("kernel error", "json error", "expected"): "a commit file of its log is not JSON",
}


def log_damage(exc: BaseException) -> str | None:
    """What is broken in a table's log, when `exc` (from opening it with delta-rs) says the log is damaged.

    >>> log_damage(Exception("Generic delta kernel error: Expected contiguous commit files, but found gap: ..."))
    'commit files are missing in the middle of its log'
    >>> log_damage(OSError("Generic S3 error: error reading _last_checkpoint: connection refused")) is None
    True
    """
    text = str(exc).lower()
    return next((what for words, what in _DAMAGE.items() if all(w in text for w in words)), None)


def damaged(table_name: str, uri: str, what: str) -> DeltaLogDamagedError:
    """The error for a table whose log is damaged (`what` says how), with the ways to mend it."""
    return DeltaLogDamagedError(
        f"Delta table '{table_name}' at {uri} cannot be loaded into: {what}. Nothing was written to it. Fix: restore "
        f"the missing or broken files of {uri}/_delta_log from a backup or from the bucket's object versions and run "
        "`pipeline.load()`; or give the table up and load it anew: run the resource of its root table with "
        "`refresh=\"drop_resources\"` (its nested tables are dropped with it)."
    )


def check_not_rolled_back(table: DeltaTable, table_name: str, uri: str, recorded: tuple[int, str] | None) -> None:
    """Refuse a table whose log is at a lower version than `recorded` (version, table id) of the last completed
    load, when the table is the same one (its id): its newest commits are gone."""
    if recorded is None:
        return
    version, table_id = recorded
    if str(table.metadata().id) != table_id or table.version() >= version:
        return
    raise DeltaLogDamagedError(
        f"Delta table '{table_name}' at {uri} is at version {table.version()}, but the last completed load recorded "
        f"version {version}: the newest commit files of its _delta_log are gone, and with them what those loads "
        "committed. Nothing was written to it. Fix: restore the missing files of "
        f"{uri}/_delta_log (versions {table.version() + 1} to {version}) from a backup or from the bucket's object "
        "versions and run `pipeline.load()`; or give those commits up and load the table anew: run the resource of "
        "its root table with `refresh=\"drop_resources\"`."
    )

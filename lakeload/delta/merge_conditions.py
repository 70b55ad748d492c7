"""Driver side: the merge options that select rows of a Delta or Iceberg merge (`lakeload.delta.merge`), as dlt's.

- `source_filter` (table hint `x-merge-source-filter`; upsert, cdc, delete-insert, scd2): a SQL condition on the
  loaded rows; only the rows it holds for are merged, the others are discarded, with their nested rows. For cdc a
  discarded row is an absent one, so its stored row (within the `destination_scope`) is deleted, as in dlt.
  `{staging_table}` names the loaded rows in it.
- `skip_unchanged_rows` (`x-merge-skip-unchanged-rows`; upsert, cdc): a loaded record equal to its stored one
  leaves the stored row as it is (its `_dlt_load_id`, its nested rows). Equal: the row version column
  (`row_version_column_name`, hint `x-row-version`) when there is one, else every column but the keys, the
  `hard_delete` column, `_dlt_id` and `_dlt_load_id` (nulls equal).

Both run on Spark executors as conditions of the merge's own jobs; unlike dlt on Delta, tables with nested tables
take them too.

>>> unchanged_columns({"columns": {"id": {"primary_key": True}, "v": {}, "_dlt_load_id": {}, "_dlt_id": {}}}, ["id", "v"])
['v']
>>> unchanged_columns({"columns": {"id": {"primary_key": True}, "v": {}, "ts": {"x-row-version": True}}}, ["id"])
['ts']
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from lakeload.delta.merge_keys import MATCHED, flag_matches, keys_of, match
from lakeload.errors import LoadError
from lakeload.kernel.normalize.relational import C_DLT_ID, C_DLT_LOAD_ID

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

KEY_HINTS = ("primary_key", "row_key", "parent_key", "root_key", "hard_delete", "merge_key")


def source_condition(table: Mapping[str, Any]) -> str | None:
    """The table's `source_filter` as a condition on the loaded rows' columns (`{staging_table}.` dropped)."""
    condition = table.get("x-merge-source-filter")
    if not condition:
        return None
    return str(condition).replace("{staging_table}.", "").replace("{staging_table}", "")


def filter_source(incoming: DataFrame, condition: str, table_name: str) -> DataFrame:
    """The `incoming` rows `condition` holds for (a null counts as false, as in SQL's WHERE)."""
    return filter_checked(incoming, condition, f"Table '{table_name}': its merge source_filter", "the loaded rows", "filter")


def filter_checked(frame: DataFrame, condition: str, owner: str, rows: str, held: str,
                   select: Callable[[Column], Column] | None = None) -> DataFrame:
    """`frame` filtered by `select` of where the SQL `condition` holds (null: false), parsed now, so that a bad one
    fails here with a `LoadError` naming `owner` ("Table 'x': its merge source_filter"), the `rows` it applies to and
    the fix (its schema holds the `held` option)."""
    from pyspark.sql import functions as F

    option = owner.rsplit(" ", 1)[-1]
    try:
        holds = F.coalesce(F.expr(condition), F.lit(False))
        selected = frame.filter(holds if select is None else select(holds))
        selected.schema  # noqa: B018 - parses the condition now
    except Exception as exc:
        raise LoadError(
            f"{owner} {condition!r} is not a valid condition on {rows} ({str(exc).strip().splitlines()[0]}). Fix: correct "
            f"the `{option}` of its write disposition, drop this package (pipeline.drop_pending_packages(): its schema "
            f"holds the {held}) and run again."
        ) from None
    return selected


def unchanged_columns(table: Mapping[str, Any], present: list[str]) -> list[str]:
    """The columns whose values tell a changed record: the row version column, or every column but the keys."""
    columns: Mapping[str, Mapping[str, Any]] = table.get("columns", {})
    version = next((name for name, column in columns.items() if column.get("x-row-version")), None)
    if version is not None:
        return [version]
    return [
        name for name in dict.fromkeys([*columns, *present])
        if name not in (C_DLT_ID, C_DLT_LOAD_ID) and not any(columns.get(name, {}).get(hint) for hint in KEY_HINTS)
        and name in present
    ]


def equal_rows(incoming: DataFrame, stored: DataFrame, keys: list[str], compared: list[str]) -> DataFrame:
    """The keys (renamed as `merge_keys.keys_of` does) of the `incoming` rows equal to their `stored` row in every
    `compared` column; a column one side lacks is null there."""
    from pyspark.sql import functions as F

    side_in, side_stored = incoming.alias("incoming"), stored.alias("stored")
    on = functools.reduce(lambda a, b: a & b, [F.col(f"incoming.{k}").eqNullSafe(F.col(f"stored.{k}")) for k in keys])

    def value(side: str, frame: DataFrame, column: str) -> Any:
        return F.col(f"{side}.{column}") if column in frame.columns else F.lit(None)

    same = functools.reduce(
        lambda a, b: a & b,
        [value("incoming", incoming, c).eqNullSafe(value("stored", stored, c)) for c in compared],
        F.lit(True),
    )
    joined = side_in.join(side_stored, on, "inner").filter(same)
    return keys_of(joined.select(*[F.col(f"incoming.{k}").alias(k) for k in keys]), keys)


def without_unchanged(plan: dict[str, Any], incoming: DataFrame, match_on: list[str], compared: list[str]) -> dict[str, Any]:
    """A merge plan (`MergeJob.plan_root`) with `skip_unchanged_rows`: winners equal to their stored row (every
    `compared` column) are neither inserted nor is their stored row (or its nested rows) touched: the plan's
    "touched" incoming rows (whose nested rows are replaced) leave them out (its "new" rows are the caller's to
    select from the "inserted" ones)."""
    same = equal_rows(plan["inserted"], plan["matched"], match_on, compared)
    return {**plan, "matched": match(plan["matched"], same, match_on, "left_anti"),
            "inserted": match(plan["inserted"], same, match_on, "left_anti"),
            "touched": match(incoming, same, match_on, "left_anti")}


def cdc_matches(stored: DataFrame, key_sets: list[tuple[DataFrame, list[str]]], scope: str | None, root_name: str) -> DataFrame:
    """`cdc`'s stored rows to remove: the load is the whole source (within the `destination_scope`), so stored rows
    whose key arrives are replaced and stored rows in scope whose key is absent are deleted (every row without a
    scope)."""
    from pyspark.sql import functions as F

    flagged = flag_matches(stored, key_sets)
    if not scope:
        return flagged
    return filter_checked(flagged, scope, f"Table '{root_name}': its cdc destination_scope", "its columns", "scope",
                          lambda in_scope: F.col(MATCHED) | in_scope)

"""Driver side: folding the pass-1 results of a package's splits, in split order, into one schema.

Each split inferred its schema additions from the stored schema alone; folding them in split order gives what
one sequential normalizer would have found, unless a split typed a column otherwise than an earlier split
(`conflicts`, `contract_conflicts`: that split runs again, seeded). `settle_drafts` decides which draft
Parquet files of the vectorized path already fit their final table.
"""

from __future__ import annotations

import copy
from typing import cast

from lakeload.errors import DataValidationError
from lakeload.kernel.contracts import TPackageFile
from lakeload.kernel.normalize.plan import NormalizePlan, Split
from lakeload.kernel.normalize.report import SplitReport
from lakeload.kernel.normalize.tasks import FinalizeJob
from lakeload.kernel.normalize.writers import arrow_schema, complete_columns, schema_signature
from lakeload.schema.typing import TTable


def conflicts(tables: dict[str, TTable], result: SplitReport) -> list[str]:
    """Columns a split typed otherwise than the schema folded from the splits before it (`table.column: a vs b`)."""
    found = []
    for table_name, added in result["added"].items():
        known = tables.get(table_name, {}).get("columns", {})
        for col_name in added:
            mine = result["tables"][table_name]["columns"][col_name]
            theirs = known.get(col_name)
            if theirs and theirs.get("data_type") and theirs["data_type"] != mine["data_type"]:
                found.append(f"{table_name}.{col_name}: {theirs['data_type']} vs {mine['data_type']}")
    return found


def contract_conflicts(
    plan: NormalizePlan, stored: set[str], tables: dict[str, TTable], result: SplitReport
) -> list[str]:
    """Tables a split took for new (any column allowed) that an earlier split of the package had created already."""
    if plan.contracts is None:
        return []
    found = []
    for table_name in result["new_tables"]:
        if table_name in tables and table_name not in stored:
            known = tables[table_name]["columns"]
            found += [f"{table_name}.{c}" for c in result["added"].get(table_name, ()) if c not in known]
    return found


def raise_violation(plan: NormalizePlan, result: SplitReport) -> None:
    """A split stopped at a frozen contract (its view of the schema was the sequential one): fail the package."""
    if violation := result.get("violation"):
        raise DataValidationError(
            plan.contracts.schema_name if plan.contracts else None, violation["table"], violation["column"],
            violation["entity"], violation["mode"], violation["message"],
        )


def fold(tables: dict[str, TTable], result: SplitReport) -> None:
    """Add a split's new tables and columns to `tables`, in the split's order (the sequential normalizer's)."""
    for table_name in result["new_tables"]:
        if table_name not in tables:
            local = result["tables"][table_name]
            tables[table_name] = cast(TTable, {k: copy.deepcopy(v) for k, v in local.items() if k != "columns"})
            tables[table_name]["columns"] = {}
    for table_name, added in result["added"].items():
        columns = tables[table_name]["columns"]
        for col_name in added:
            current = columns.get(col_name)
            if current is None or not current.get("data_type"):
                columns.pop(col_name, None)  # a hints-only column moves to the end once it gets data, as in dlt
                columns[col_name] = copy.deepcopy(result["tables"][table_name]["columns"][col_name])
    for table_name, count in result["row_counts"].items():
        if count:
            tables[table_name].setdefault("x-normalizer", {})["seen-data"] = True


def settle_drafts(
    tables: dict[str, TTable], drafts: list[tuple[Split, TPackageFile]], final: list[TPackageFile],
    jobs: list[FinalizeJob],
) -> None:
    """Keep the draft files whose columns and types are their table's final ones; finalize the others."""
    for split, meta in drafts:
        if meta["draft"] == schema_signature(arrow_schema(complete_columns(tables[meta["table"]]))):
            kept = meta.copy()
            del kept["draft"]
            final.append(kept)
        else:
            jobs.append({"split": split, "chunks": [meta]})

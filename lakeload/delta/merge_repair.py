"""Driver side: the nested tables of a Delta merge whose root commit landed, finished after another writer
committed to one of them first (see `lakeload.delta.tree` for when, and why it is enough).

The nested tables still without this load's rows are read first, then the root, so the root then holds every
root commit that the nested tables' snapshots depend on. For each such table, in one Spark plan as a merge:
- removed: its rows below every root row this load replaced (the incoming ids, and the stored rows that matched
  in the root version the root commit was computed from, `MergeJob.root_read`), found anew: another writer's
  nested rows may have arrived below them since this load's first removals;
- added: this load's nested rows below its root rows that the root still holds (a later writer may have
  replaced some of them; its own nested rows are then the ones to keep).
The commits are strict again: removals children first, additions parents first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeload.kernel.normalize.relational import C_DLT_ID, C_DLT_ROOT_ID

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeload.delta.merge import MergeJob
    from lakeload.kernel.contracts import TAddAction

ALIVE = "__lakeload_alive_id"


def repair_nested(job: MergeJob, pending: list[str]) -> None:
    """Finish the `pending` nested tables of `job` (its root committed by this process, at `job.root_read`).

    Example (a merge job of a load in progress; runs Spark)::

        repair_nested(job, ["users__pets"])
    """
    from pyspark.sql import functions as F

    for name in pending:
        job.targets[name].open()
    root = job.targets[job.root_name]
    root.open()
    incoming = job.incoming()
    job.drop_absent_hints(set(incoming.columns))
    winners, every_row_wins = job.incoming_winners(incoming)
    inserts = winners.filter(~job.deleted()) if job.hard_delete else winners
    plan = job.plan_root(root.at_version(job.root_read), incoming, inserts, unique_keys=every_row_wins, repair=True)
    drops: dict[str, DataFrame | None] = {}
    tagged = None
    if job.strategy != "insert-only":
        ids = plan.get("touched", incoming).select(C_DLT_ID).unionByName(plan["matched"].select(C_DLT_ID))
        found = job.find_nested_drops(pending, ids)
        drops.update(found.by_table)
        drops.update(dict.fromkeys(found.tagged_tables))
        tagged = found.tagged
    rewritten = job.files.rewrite(job.targets, drops, tagged) if drops else {}
    alive = job.files.read(root, root.files(), [C_DLT_ID]).select(F.col(C_DLT_ID).alias(ALIVE))
    new: dict[str, list[TAddAction]] = {}
    for name in pending:
        rows = job.files.nested_rows(job.targets[name], job.by_table.get(name, []), plan["inserted"])
        if rows is not None and C_DLT_ROOT_ID in rows.columns:
            rows = rows.join(alive, rows[C_DLT_ROOT_ID] == alive[ALIVE], "left_semi")
        new[name] = [] if rows is None else job.files.write(job.targets[name], rows)
    job.commit_nested_removals(pending, rewritten)
    for name in pending:
        job.commit(job.targets[name], new[name], [], claim=True)

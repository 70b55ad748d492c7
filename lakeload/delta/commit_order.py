"""Driver side: the order of one load's commits across the Delta tables of one tree (a root table and its
nested tables), so that a reader of the latest version of each table never sees an orphan: a nested row
whose `_dlt_parent_id` names no `_dlt_id` of its parent table.

Delta commits are atomic per table, not across tables; the rule that keeps parents present is
*parents first when rows appear, children first when rows disappear*:

- `append`: root first, then nested tables parent before child. A concurrent reader can see a new root
  row without (some of) its nested rows, never the reverse.
- `replace`: (1) every nested table that holds rows is emptied, children before parents; (2) the root
  table is overwritten (old rows removed, new ones added, one commit); (3) the new nested rows are
  added, parents before children. A concurrent reader sees the old root rows with all, some or none of
  their nested rows, then the new root rows with none, some or all of theirs.
- `merge` (copy-on-write, see `lakeload.delta.merge`): (1) children before parents, each nested table
  drops the rows below every root row the load touches (files rewritten without them); (2) the root
  commit removes the matched and hard-deleted rows and adds the winners; (3) parents before children,
  the winners' nested rows are added. A concurrent reader sees a touched root row with some or none of
  its nested rows (old or new) while the load runs, never a nested row without its parent.

A nested table can so get two commits in one load: its removals (steps 1) are tagged with the
application transaction `removal_app(app)`, its additions (step 3) with `app` itself, both at the load's
transaction version, so a rerun after a crash at any point skips each commit that is already in the log
(a table whose `app` commit is in is done; once the root is committed, every removal is done).

Readers that must see whole loads only (lakeload's `pipeline.dataset()` and `sql_client()`) read each
table at the version recorded with the last completed load (`lakeload.delta.load_versions`).

>>> removal_app("lakeload-users_pipeline")
'lakeload-users_pipeline.removals'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import unquote

if TYPE_CHECKING:
    from lakeload.delta.snapshot_files import RemoveEntry, SnapshotFile
    from lakeload.schema.schema import Schema


def removal_app(app: str) -> str:
    """The application id tagging the removal commits of nested tables (a second commit in one load)."""
    return f"{app}.removals"


def nested_parents_first(schema: Schema, root_name: str, names: Iterable[str]) -> list[str]:
    """The nested tables among `names` (descendants of `root_name`), every parent before its children.

    >>> from lakeload.schema.schema import Schema
    >>> schema = Schema("crm")
    >>> schema.update_table({"name": "users", "columns": {}})
    >>> schema.update_table({"name": "users__pets", "parent": "users", "columns": {}})
    >>> schema.update_table({"name": "users__pets__toys", "parent": "users__pets", "columns": {}})
    >>> nested_parents_first(schema, "users", ["users__pets__toys", "users", "users__pets"])
    ['users__pets', 'users__pets__toys']
    """
    wanted = set(names)
    order: list[str] = []
    frontier = [root_name]
    while frontier:
        children = [n for n, t in schema.tables.items() if t.get("parent") in frontier and n in wanted]
        order += children
        frontier = children
    return order


def removes_of(files: list[SnapshotFile]) -> list[RemoveEntry]:
    """Remove entries for `DeltaTarget.commit` of snapshot files (`DeltaTarget.files()`).

    Log paths are URL-encoded; delta-rs encodes the paths of actions itself, so they are decoded here.
    """
    return [{"path": unquote(f["path"]), "size": f["size"], "partition_values": f["partition_values"]} for f in files]

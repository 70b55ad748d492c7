"""Load (driver side) of one Delta tree of a package (a root table and its nested tables), done again when
another writer commits to it meanwhile.

A replace and a merge compute their commits from what they read (the files to remove, the rows that match),
so their commits are strict (`DeltaTarget.commit`): each lands only on top of the snapshot it was computed
from. When another writer committed first, nothing of that commit landed: the tree is opened again and the
work is done again from what is there now, up to `CONFLICT_ATTEMPTS` times with a growing pause, then a
`DeltaConflictError` tells the user to load the package again later. An append only adds files, which
delta-rs lands on top of whatever was committed meanwhile.

What is done again depends on how far the load got (each step's mark, `lakeload.delta.marks`):
- before the root's commit: all of the tree's work. A nested removal commit that landed before the conflict
  stays (it only took nested rows below root rows this load replaces) and is computed anew;
- after the root's commit, for each nested table still without this load's rows, read before the root is
  read again, so the root then holds every root commit the nested table's snapshot depends on:
  - merge (`MergeJob.run` with `again`): the nested rows below the root rows this load replaced are removed
    again (another load's rows may have arrived below them since), and this load's nested rows are added
    only below its root rows that are still there;
  - replace: while the root holds this load's rows, the nested table is overwritten with this load's nested
    rows; once a later replace has overwritten the root, the nested tables are that load's to fill.
Every nested commit is strict too, and a merge whose root commit removed root rows commits to each of its
nested tables even with nothing to add there (the mark alone), so of two loads' commits to one nested table the
later one was computed from a snapshot that holds the earlier: nothing lost, nothing duplicated, no nested row
left below a root row that is gone.
"""

from __future__ import annotations

import logging
import random
import time
from typing import TYPE_CHECKING

from lakeload.delta.commit import DeltaTarget, committed_files
from lakeload.delta.commit_order import removes_of
from lakeload.delta.marks import REMOVALS, LoadMark
from lakeload.delta.merge import MergeJob
from lakeload.delta.merge_repair import repair_nested
from lakeload.delta.merge_scd2 import Scd2Job
from lakeload.errors import TableWriteConflict
from lakeload.schema.replace import replaces_partitions
from lakeload.schema.scd2 import is_scd2
from lakeload.schema.schema import table_write_disposition

if TYPE_CHECKING:
    from lakeload.delta.package_writer import PackageWriter
    from lakeload.schema.schema import Schema
    from lakeload.storage.manifest import NormalizedPackage, PackageFile

logger = logging.getLogger("lakeload.load")
CONFLICT_ATTEMPTS = 8  # tries of one tree's work while other writers keep committing to it
FIRST_PAUSE = 0.2  # seconds before the second try, doubled before each next one (at most MAX_PAUSE)
MAX_PAUSE = 5.0


def conflict_pause(attempt: int) -> float:
    """Seconds to wait after the `attempt`-th try lost, shortened at random so that two losers part ways.

    >>> 0.1 <= conflict_pause(1) <= 0.2 and conflict_pause(20) <= 5.0
    True
    """
    return min(MAX_PAUSE, FIRST_PAUSE * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)


class TreeLoad:
    """The Delta commits of one package for one tree, tried again on conflicts."""

    def __init__(
        self, loader: PackageWriter, schema: Schema, package: NormalizedPackage, by_table: dict[str, list[PackageFile]],
        tree: list[str],
    ) -> None:
        self.loader = loader
        self.schema = schema
        self.package = package
        self.by_table = by_table
        self.tree = tree  # root first, parents before children
        self.root_name = tree[0]
        self.mark = LoadMark(loader.pipeline_name, package["load_id"])
        self.disposition = schema.tables[self.root_name].get("write_disposition", "append")
        self.merge: MergeJob | Scd2Job | None = None
        if self.disposition == "merge" and is_scd2(schema.tables[self.root_name]):
            self.merge = Scd2Job(loader, schema, package, by_table, self.root_name, self.mark)
        elif self.disposition == "merge":
            self.merge = MergeJob(loader, schema, package, by_table, self.root_name, self.mark, repair_nested)
        elif replaces_partitions(schema.tables[self.root_name]):  # a delete-insert by the partition columns
            self.merge = MergeJob(loader, schema, package, by_table, self.root_name, self.mark, repair_nested).replacing_partitions()
        self.attempts = 0  # tries made (1 when nobody else committed meanwhile)

    def run(self) -> list[str]:
        """Commit the package's rows of the tree; returns the tables replaced (all of them for a `replace`)."""
        for attempt in range(1, CONFLICT_ATTEMPTS + 1):
            self.attempts = attempt
            targets = self.loader.open_tree(self.schema, self.tree)
            try:
                self._once(targets, again=attempt > 1)
            except TableWriteConflict as exc:
                if attempt == CONFLICT_ATTEMPTS:
                    raise self.loader.conflict_error(
                        f"Other writers committed to {self.loader.format_label} table '{self.root_name}' (or its nested tables) "
                        f"{attempt} times while load {self.mark.load_id} wrote to it ({exc}). What this load committed "
                        "is whole and marked, the rest is not committed. Fix: run `pipeline.load()` to finish the "
                        "package once the other writers are done."
                    ) from None
                logger.info("%s table '%s': %s; reading it again (try %d of %d)", self.loader.format_label, self.root_name,
                            exc, attempt + 1, CONFLICT_ATTEMPTS)
                time.sleep(conflict_pause(attempt))
            else:
                break
        if self.disposition == "replace" and self.merge is None:
            return [name for name in self.tree if name == self.root_name or self._replaced(name)]
        return [name for name, mode in self._append_modes().items() if mode == "replace"] if self.merge is None else []

    def _replaced(self, name: str) -> bool:
        """Whether a nested table of a `replace` root is replaced with it: unless given `append` of its own."""
        return table_write_disposition(self.schema.tables, name) == "replace"

    def _append_modes(self) -> dict[str, str]:
        """Under a root that appends, a nested table given `replace` of its own (`make_nested_hints`) is overwritten
        when this load has rows for it, as dlt does; the others append."""
        return {name: "replace" if self.by_table.get(name) and table_write_disposition(self.schema.tables, name) == "replace"
                else "append" for name in self.tree}

    def _once(self, targets: dict[str, DeltaTarget], again: bool) -> None:
        if self.merge is not None:
            self.merge.run(targets, again)
        elif self.disposition == "replace":
            self._replace(targets, again)
        else:
            self.loader.write_tree(list(targets.values()), self.package, self.by_table, self._append_modes(), self.mark)

    def _replace(self, targets: dict[str, DeltaTarget], again: bool) -> None:
        """Empty the nested tables (children first), overwrite the root, append the new nested rows (parents
        first); after the root's commit, `_fill_nested` instead."""
        root = targets[self.root_name]
        nested = [t for name, t in targets.items() if name != self.root_name]
        if root.committed(self.mark):
            self._fill_nested(root, nested)
            return
        for target in reversed(nested):
            if target.committed(self.mark) or (target.committed(self.mark.of_step(REMOVALS)) and not again):
                continue
            if not self._replaced(target.name):
                continue
            files = target.files()
            if files:
                target.commit([], removes_of(files), "append", self.mark.of_step(REMOVALS), strict=True)
        write = self.loader.write_tree
        write([root], self.package, self.by_table, {self.root_name: "replace"}, self.mark, strict=True)
        write(nested, self.package, self.by_table, {t.name: "append" for t in nested}, self.mark, strict=True)

    def _fill_nested(self, root: DeltaTarget, nested: list[DeltaTarget]) -> None:
        """After the root's overwrite: each nested table without this load's rows gets them in place of what it
        holds, while the root still holds this load's rows (read after the nested tables)."""
        pending = [t for t in nested if not t.committed(self.mark)]
        if not pending:
            return
        for target in pending:
            target.open()
        root.open()
        prefix = f"{self.mark.load_id}-"
        if not any(f["path"].rsplit("/", 1)[-1].startswith(prefix) for f in root.files()):
            logger.info("%s table '%s' was replaced by a later load: its nested tables are that load's",
                        self.loader.format_label, root.name)
            return
        adds = self.loader.package_adds(pending, self.mark.load_id, self.by_table, "replace")
        for target in pending:
            removes = removes_of(target.files()) if self._replaced(target.name) else []
            target.commit(adds[target.name], removes, "append", self.mark, strict=True)
            self.loader.committed += committed_files(target.name, adds[target.name])

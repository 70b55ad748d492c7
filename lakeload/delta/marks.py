"""Driver side: the mark that tells whether one load committed one step to a Delta table.

Every commit of a load carries a Delta application transaction (a `txn` action) whose application id names
the pipeline, the step and the load itself, `lakeload-<pipeline>[.<step>]/<load_id>`, at the load id in
microseconds as its version. A table's snapshot keeps the latest version of every application id, so a
rerun asks exactly "did this load commit this step?", never "is there a newer load?": a load whose id is
older than the table's last one (the same pipeline name run from two working folders, a clock that stepped
back) is loaded, not skipped.

Commits made by lakeload before these marks carry `lakeload-<pipeline>[.<step>]` (one application id per
pipeline). Such a mark is still read, for packages an older lakeload left pending, but only its exact
version counts as this load's.

>>> mark = LoadMark("users_pipeline", "1795290972.5539668")
>>> mark.app, mark.version
('lakeload-users_pipeline/1795290972.5539668', 1795290972553966)
>>> mark.of_step("removals").app
'lakeload-users_pipeline.removals/1795290972.5539668'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deltalake import DeltaTable

REMOVALS = "removals"  # a nested table's removals in a merge or replace (its second commit in one load)
REFRESH = "refresh"  # a table emptied by `refresh="drop_data"`


def txn_version(load_id: str) -> int:
    """A load id (seconds since the epoch, with a fraction) as a transaction version."""
    return int(Decimal(load_id) * 1_000_000)


@dataclass(frozen=True)
class LoadMark:
    """The application transaction of one step of one load of one pipeline."""

    pipeline_name: str
    load_id: str
    step: str = ""  # "": the load's data; REMOVALS or REFRESH

    @property
    def legacy_app(self) -> str:
        """The application id lakeload used before the marks named the load (one per pipeline and step)."""
        return f"lakeload-{self.pipeline_name}" + (f".{self.step}" if self.step else "")

    @property
    def app(self) -> str:
        """The application id of this step of this load."""
        return f"{self.legacy_app}/{self.load_id}"

    @property
    def version(self) -> int:
        return txn_version(self.load_id)

    def of_step(self, step: str) -> LoadMark:
        """The mark of another step of the same load."""
        return replace(self, step=step)

    def found_in(self, table: DeltaTable | None) -> bool:
        """Whether `table`'s snapshot holds this step of this load (False for a table that does not exist)."""
        if table is None:
            return False
        return self.version in (table.transaction_version(self.app), table.transaction_version(self.legacy_app))

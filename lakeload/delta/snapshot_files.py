"""The data files of a Delta table's snapshot as the driver handles them, and what a rewrite makes of them.

`DeltaTarget.files()` lists the snapshot's files (`SnapshotFile`; a read needs only a `ListedFile`); a merge prunes them by their statistics, reads
them and rewrites those that hold removed rows (`Rewritten`: the new files' add actions, the kernel's `TAddAction`,
and the files they replace); a commit removes the replaced files (`RemoveEntry`, `commit_order.removes_of`).

>>> file: SnapshotFile = {"path": "part-0.parquet", "size": 612, "partition_values": {}, "stats": {"num_records": 2}}
>>> file["stats"]["num_records"]
2
"""

from __future__ import annotations

from typing import Any, TypedDict

from lakeload.kernel.contracts import TAddAction


class ListedFile(TypedDict):
    """A data file as a snapshot read lists it (`spark_io.read_snapshot`): its path relative to the table folder, as
    in the log (URL-encoded), and its partition values (the log's strings)."""

    path: str
    partition_values: dict[str, str | None]


class SnapshotFile(ListedFile):
    """A data file of a table's snapshot (`DeltaTarget.files`): also its size and `stats`, the file's flattened add
    action as delta-rs lists it (`num_records`, `min.<column>`, `null_count.<column>`, ...)."""

    size: int
    stats: dict[str, Any]


class RemoveEntry(TypedDict):
    """A file a commit removes (`DeltaTarget.commit`): its path (not URL-encoded: delta-rs encodes it), size and
    partition values."""

    path: str
    size: int
    partition_values: dict[str, str | None]


Rewritten = dict[str, tuple[list[TAddAction], list[SnapshotFile]]]
"""Per table, the add actions of the files a rewrite wrote and the snapshot files they replace."""

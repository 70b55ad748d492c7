"""Driver side: which stored files a merge (`lakeload.delta.merge`) reads: those of the partitions its loaded rows
can match, and, for a one-column-range key, those whose key statistics overlap the loaded keys.

A partition prunes when every match includes it, so that a stored row can only match a loaded row of its own
partition: the partition columns matched with every key (a Delta table's, an Iceberg table's identity ones), a
`merge_key`'s partition columns when no primary key matches alone, and an Iceberg transform of a column every key
has (a stored row matching a loaded one has that column's value, so its transform). A replace of the loaded
partitions matches by the transforms themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lakeload.delta.merge_keys import UNKNOWN, file_partition, may_hold_keys
from lakeload.kernel.delta.files import partition_value
from lakeload.kernel.delta.splits import PARTITION_KEY

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeload.delta.commit import DeltaTarget
    from lakeload.delta.snapshot_files import SnapshotFile
    from lakeload.kernel.contracts import TPartitionSplit


@dataclass(frozen=True)
class MatchKeys:
    """What a merge matches stored rows by: its primary key, `merge_key`, the partition columns matched with every
    key, and the transformed partitions computed as `PARTITION_KEY<position>` columns of the loaded rows."""

    primary_key: list[str]
    merge_key: list[str]
    partition_by: list[str]
    derived: tuple[tuple[int, TPartitionSplit], ...] = ()

    def pruned_by(self, target: DeltaTarget) -> list[str]:
        """The partition columns (or `PARTITION_KEY` columns) that prune `target`'s files."""
        derived = {f"{PARTITION_KEY}{i}" for i, _ in self.derived}
        return [c for c in target.value_partitions
                if c in self.partition_by or c in derived or (not self.primary_key and c in self.merge_key)]


def derived_partitions(target: DeltaTarget, primary_key: list[str], merge_key: list[str]) -> tuple[tuple[int, TPartitionSplit], ...]:
    """The transformed partitions of `target` whose column every key of the merge has."""
    keys = [k for k in (primary_key, merge_key) if k]
    return tuple((i, t) for i, t in target.transformed_partitions if keys and all(t["column"] in k for k in keys))


def candidate_files(target: DeltaTarget, files: list[SnapshotFile], incoming: DataFrame | None, keys: MatchKeys,
                    key_ranges: dict[str, tuple[Any, Any]]) -> list[SnapshotFile]:
    """The `files` that may hold rows matching `incoming` (None: no partition pruning); `key_ranges`: each primary key
    column's lowest and highest loaded value."""
    pruned_by = keys.pruned_by(target)
    if pruned_by and incoming is not None:
        wanted = {tuple(partition_value(row[c]) for c in pruned_by) for row in incoming.select(*pruned_by).distinct().collect()}
        found = [file_partition(f, pruned_by) for f in files]
        files = [f for f, key in zip(files, found, strict=True) if UNKNOWN in key or key in wanted]
    if keys.primary_key and not keys.merge_key and files:
        files = [f for f in files if may_hold_keys(f["stats"], key_ranges)]
    return files

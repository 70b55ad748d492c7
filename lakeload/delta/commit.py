"""Driver side: one Delta table's transaction log, through delta-rs.

Executors write the data files; this module only reads the log and commits actions:
- every commit carries the mark of its load and step (`lakeload.delta.marks`), so a package loaded again
  after a crash sees its own commit and never commits its files twice;
- a commit whose actions depend on what it read (a merge, a replace: `strict`) is made against the very
  snapshot it read and fails when anything else was committed since (`DeltaWriteConflict`, and the loader
  reads the table again and redoes the work); an append only adds files and lands whatever was committed
  since (delta-rs checks that for it);
- the partition columns of an existing table cannot change (a clear error before any file is written);
- new columns are added to the table schema before files that have them are committed;
- a commit that loses against a concurrent writer raises `DeltaConflictError`: the table is untouched
  and the package stays pending for `pipeline.load()`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from lakeload.config.bucket_credentials import secret_values
from lakeload.delta.commit_retry import commit_with_retry, read_with_retry
from lakeload.delta.log_damage import damaged, log_damage
from lakeload.delta.marks import LoadMark
from lakeload.errors import DeltaConflictError, DeltaWriteConflict, DestinationError, StorageUnavailableError
from lakeload.kernel.filesystem.retry import RetryPolicy, StorageRetriesExhausted

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from lakeload.delta.snapshot_files import RemoveEntry, SnapshotFile
    from lakeload.kernel.contracts import TAddAction, TLoadedFile, TPartitionSplit


@dataclass
class DeltaTarget:
    """One Delta table of a load: where it is and the table as this load sees it."""

    name: str
    uri: str
    storage_options: dict[str, str]
    schema: pa.Schema  # Delta-compatible, from the lakeload schema
    partition_by: tuple[str, ...] = ()
    table: DeltaTable | None = field(default=None, repr=False)
    retry: RetryPolicy = field(default_factory=RetryPolicy, repr=False)  # of commits (see `commit_retry`)

    def __repr__(self) -> str:  # storage options carry credentials
        return f"DeltaTarget(name={self.name!r}, uri={self.uri!r})"

    def open(self) -> DeltaTable | None:
        """The current snapshot, or None when the table does not exist yet."""
        from deltalake import DeltaTable

        def snapshot() -> DeltaTable | None:
            if not DeltaTable.is_deltatable(self.uri, storage_options=self.storage_options):
                return None
            return DeltaTable(self.uri, storage_options=self.storage_options)

        try:
            self.table = read_with_retry(self, snapshot)
        except Exception as exc:
            what = log_damage(exc)
            if what:
                raise damaged(self.name, self.uri, what) from None
            error = StorageUnavailableError if isinstance(exc, StorageRetriesExhausted) else DestinationError
            raise error(f"Cannot open Delta table '{self.name}' at {self.uri}: {self._message(exc)}") from None
        return self.table

    def read_version(self) -> int | None:
        """The version of the opened snapshot (None: the table does not exist yet)."""
        return None if self.table is None else self.table.version()

    def at_version(self, version: int | None) -> DeltaTarget:
        """This table as it was at `version` (a negative or None version: not there yet)."""
        from deltalake import DeltaTable

        if version is None or version < 0:
            return replace(self, table=None)
        table = read_with_retry(self, lambda: DeltaTable(self.uri, storage_options=self.storage_options, version=version))
        return replace(self, table=table)

    def committed(self, mark: LoadMark) -> bool:
        """Whether the opened snapshot holds the commit of `mark` (this step of this load)."""
        return mark.found_in(self.table)

    @property
    def partition_columns(self) -> tuple[str, ...]:
        """Every column the table is partitioned by."""
        return self.partition_by

    @property
    def match_partitions(self) -> tuple[str, ...]:
        """The partition columns a merge matches rows by, beside its keys (all of a Delta table's)."""
        return self.partition_by

    @property
    def transformed_partitions(self) -> tuple[tuple[int, TPartitionSplit], ...]:
        """Partition fields of transforms: none (Delta partitions by column values)."""
        return ()

    @property
    def value_partitions(self) -> tuple[str, ...]:
        """The partition columns whose values `files()` gives each file (all of a Delta table's)."""
        return self.partition_by

    def files(self) -> list[SnapshotFile]:
        """The current snapshot's data files: path (as in the log), size, partition values (log strings), stats."""
        if self.table is None:
            return []
        from lakeload.kernel.delta.files import partition_value

        return [
            {
                "path": a["path"],
                "size": a["size_bytes"],
                "partition_values": {c: partition_value(a.get(f"partition.{c}")) for c in self.partition_by},
                "stats": a,
            }
            for a in pa.table(self.table.get_add_actions(flatten=True)).to_pylist()
        ]

    def check_partitions(self) -> None:
        """Refuse to write when the table exists with other partition columns."""
        if self.table is None:
            return
        existing = list(self.table.metadata().partition_columns)
        if existing != list(self.partition_by):
            raise DestinationError(
                f"Partition columns of Delta table '{self.name}' cannot change: the table is partitioned by "
                f"{existing}, the schema asks for {list(self.partition_by)}. Keep the `partition` column hints "
                "the table was created with, or load into a new table (or drop this one first)."
            )

    def stored_schema(self) -> pa.Schema:
        """The Arrow schema of the opened snapshot (empty when the table does not exist)."""
        if self.table is None:
            return pa.schema([])
        return pa.schema(self.table.schema().to_arrow())  # type: ignore[arg-type]

    def table_schema(self) -> pa.Schema:
        """The existing table's columns (in their order) followed by this load's new ones."""
        if self.table is None:
            return self.schema
        existing = self.stored_schema()
        return pa.schema([*existing, *(f for f in self.schema if f.name not in existing.names)])

    def evolve(self, strict: bool = False) -> None:
        """Add this load's new columns to an existing table (a metadata-only commit; `strict`: only on top of
        the opened snapshot, which then moves to the new version)."""
        if self.table is None:
            return
        from deltalake import Schema as DeltaSchema
        from deltalake.transaction import CommitProperties

        existing = set(self.stored_schema().names)
        new = [f for f in self.schema if f.name not in existing]
        if new:
            properties = CommitProperties(max_commit_retries=0) if strict else None
            self.table.alter.add_columns(DeltaSchema.from_arrow(pa.schema(new)).fields, commit_properties=properties)

    def commit(
        self, adds: list[TAddAction], removes: list[RemoveEntry], mode: str, mark: LoadMark | None = None,
        configuration: dict[str, str] | None = None, replace_schema: bool = False, strict: bool = False,
    ) -> None:
        """Commit `adds` (and `removes`) in one transaction, tagged with `mark` when given; `configuration` sets
        table properties of a table this commit creates. With `replace_schema` (an `overwrite`), the table takes
        this target's schema instead of gaining its new columns.

        `strict`: the commit lands only on top of the opened snapshot (what its actions were computed from),
        else it raises `DeltaWriteConflict` and nothing is committed; once landed, the target holds the new
        version, so the next strict commit of the same load builds on it. Without `strict`, the target must be
        opened again before its next commit."""
        from deltalake import Schema as DeltaSchema
        from deltalake.exceptions import CommitFailedError
        from deltalake.transaction import (
            AddAction,
            CommitProperties,
            RemoveAction,
            Transaction,
            create_table_with_add_actions,
        )

        now = int(time.time() * 1000)
        add_actions: list[Any] = [
            AddAction(a["path"], a["size"], a["partition_values"], a["modification_time"], True, a["stats"]) for a in adds
        ]
        remove_actions: list[Any] = [
            RemoveAction(r["path"], True, now, r.get("size"), r.get("partition_values")) for r in removes
        ]
        properties = CommitProperties(
            app_transactions=[Transaction(mark.app, mark.version)] if mark else None,
            max_commit_retries=0 if strict else None,
        )
        partition_by = list(self.partition_by)

        def attempt() -> None:
            if self.table is None:
                create_table_with_add_actions(
                    self.uri, DeltaSchema.from_arrow(self.schema), add_actions, mode="error", partition_by=partition_by,
                    configuration=configuration, storage_options=self.storage_options, commit_properties=properties,
                )
                return
            if mode != "overwrite":  # an overwrite commits the schema with the data; appends need it first
                self.evolve(strict)
            schema = DeltaSchema.from_arrow(self.schema) if replace_schema else self.table_schema()
            self.table.create_write_transaction(
                [*remove_actions, *add_actions], mode, schema, partition_by=partition_by,
                commit_properties=properties,
            )

        try:
            commit_with_retry(self, attempt, mark)
        except StorageRetriesExhausted as exc:
            raise StorageUnavailableError(
                f"Commit to Delta table '{self.name}' at {self.uri} failed: {self._message(exc)}. Nothing of this load "
                "is committed to it; run `pipeline.load()` to load the package again once the bucket answers."
            ) from None
        except CommitFailedError as exc:
            if strict or self.table is None:  # (two writers creating the table: the loser appends to it next time)
                raise DeltaWriteConflict(
                    f"Another writer committed to Delta table '{self.name}' after this load read it "
                    f"({self._message(exc)}). Nothing of this commit landed; the load reads the table again."
                ) from None
            raise DeltaConflictError(
                f"Another writer committed to Delta table '{self.name}' at the same time ({self._message(exc)}). "
                "Nothing of this load was committed to it; run `pipeline.load()` to load the package again."
            ) from None
        except Exception as exc:
            if self.table is None and "exists" in str(exc).lower():
                raise DeltaWriteConflict(
                    f"Delta table '{self.name}' was created by another writer while this load created it. "
                    "Run `pipeline.load()` to load the package again."
                ) from None
            raise DestinationError(f"Commit to Delta table '{self.name}' at {self.uri} failed: {self._message(exc)}") from None
        if strict:
            self._moved_on()

    def _moved_on(self) -> None:
        """After a strict commit: the target holds the version it created (the first, or the one after the
        opened snapshot, which a strict `evolve` moved on already)."""
        from deltalake import DeltaTable

        if self.table is None:
            self.table = read_with_retry(self, lambda: DeltaTable(self.uri, storage_options=self.storage_options, version=0))
        else:  # a strict commit lands right after the snapshot it was made on (evolve moved it on already)
            table = self.table
            read_with_retry(self, lambda: table.load_as_version(table.version() + 1))

    def _message(self, exc: BaseException) -> str:
        """The first line of a delta-rs error, with every secret of the storage options removed."""
        lines = str(exc).strip().splitlines()
        text = lines[0] if lines else type(exc).__name__
        for secret in secret_values(self.storage_options):
            text = text.replace(secret, "***")
        return text


def committed_files(table_name: str, adds: list[TAddAction]) -> list[TLoadedFile]:
    """Load-result entries for committed add actions."""
    return [
        {"table": table_name, "path": f"{table_name}/{a['path']}", "rows": json.loads(a["stats"])["numRecords"], "bytes": a["size"]}
        for a in adds
    ]

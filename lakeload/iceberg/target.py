"""Driver side: one Iceberg table of a load, committed with pyiceberg; the table protocol the Delta loader's tree
loads and merges use (`lakeload.delta.commit.DeltaTarget` is the other), so every write disposition and merge
strategy lakeload does on Delta runs on Iceberg with the same Spark jobs.

- Data files live in `<table>/data/`, written by executors with the table's field ids (`lakeload.iceberg.schema`);
  their paths here are relative to that folder.
- Before files are written the table exists with every column of the load (`prepare`: one metadata-only commit
  creating it or adding columns), so the field ids the files carry are the table's.
- Every commit is one snapshot (`fast_append`, or `overwrite` when it removes files), its summary marked with the
  load and step (`lakeload.mark`), so a rerun asks the table's history "did this load commit this step?".
- A `strict` commit lands only on top of the snapshot it read (pyiceberg's own retries off), else it raises
  `IcebergWriteConflict` and the tree load reads the table again; an append lands on top of whatever was
  committed since (pyiceberg re-applies it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from lakeload.errors import (
    DestinationError,
    IcebergConflictError,
    IcebergWriteConflict,
    StorageUnavailableError,
)
from lakeload.iceberg.data_files import data_files
from lakeload.iceberg.partitions import add_fields, same_spec
from lakeload.iceberg.schema import iceberg_schema, with_field_ids
from lakeload.kernel.delta.splits import PARTITION_KEY
from lakeload.kernel.filesystem.retry import RetryPolicy

if TYPE_CHECKING:
    from pyiceberg.manifest import DataFile
    from pyiceberg.table import Table

    from lakeload.delta.marks import LoadMark
    from lakeload.delta.snapshot_files import RemoveEntry, SnapshotFile
    from lakeload.iceberg.catalog import DatasetCatalog
    from lakeload.kernel.contracts import TAddAction, TPartitionSplit

logger = logging.getLogger("lakeload.load")
_VALUE_TYPES = frozenset({"StringType", "IntegerType", "LongType"})  # the types `_stats` gives bounds of
MARK = "lakeload.mark"  # the snapshot summary property naming the load and step that made it
LOAD_ID = "lakeload.load_id"
DATA = "data"


@dataclass
class IcebergTarget:
    """One Iceberg table of a load: its catalog entry and the table as this load sees it."""

    name: str
    catalog: DatasetCatalog
    schema: pa.Schema  # Iceberg-compatible, from the lakeload schema
    partition_by: tuple[str, ...] = ()
    table: Table | None = field(default=None, repr=False)
    retry: RetryPolicy = field(default_factory=RetryPolicy, repr=False)
    partitions: tuple[TPartitionSplit, ...] = ()  # its partition fields (`lakeload.iceberg.partitions`)
    partition_names: dict[str, str] = field(default_factory=dict)  # partition field names by column, when given
    properties: dict[str, str] = field(default_factory=dict)  # table properties set when the table is made
    planned: tuple[int, Any, list[SnapshotFile]] | None = field(default=None, repr=False, compare=False)  # files() of a snapshot

    @property
    def uri(self) -> str:
        return self.catalog.location(self.name)

    @property
    def data_dir(self) -> str:
        """The fsspec path of the folder data files are written into (the kernel writer's table folder)."""
        return f"{self.catalog.table_dir(self.name)}/{DATA}"

    def open(self) -> Table | None:
        """The table as the catalog has it now (None: not created yet); refused when it lives elsewhere than
        lakeload writes its data files (`<dataset>/<table>`)."""
        self.table = self.catalog.load(self.name)
        if self.table is not None:
            fs = self.catalog.client.fs
            if fs._strip_protocol(self.table.location()).rstrip("/") != fs._strip_protocol(self.uri).rstrip("/"):
                raise DestinationError(
                    f"Iceberg table '{self.name}' is registered at {self.table.location()}, not at {self.uri} where "
                    "this dataset keeps it. Register the table at the dataset's location, or load into another dataset."
                )
        return self.table

    def read_version(self) -> int | None:
        """The opened snapshot's sequence number (None: no table; -1: a table without snapshots)."""
        if self.table is None:
            return None
        snapshot = self.table.current_snapshot()
        return -1 if snapshot is None else int(snapshot.sequence_number or 0)

    def at_version(self, version: int | None) -> IcebergTarget:
        """This table as it was at the snapshot of sequence number `version` (None or negative: not there yet)."""
        if version is None or version < 0 or self.table is None:
            return replace(self, table=None)
        snapshots = [s for s in self.table.snapshots() if s.sequence_number == version]
        if not snapshots:
            return replace(self, table=None)
        return replace(self, table=_at_snapshot(self.table, snapshots[0].snapshot_id))

    def committed(self, mark: LoadMark) -> bool:
        """Whether a snapshot of the opened table's current history carries `mark`."""
        if self.table is None:
            return False
        from pyiceberg.table.snapshots import ancestors_of

        current = self.table.current_snapshot()
        if current is None:
            return False
        return any(
            s.summary is not None and s.summary.additional_properties.get(MARK) == mark.app
            for s in ancestors_of(current, self.table.metadata)
        )

    @property
    def partition_columns(self) -> tuple[str, ...]:
        """Every column a partition field of the table is derived from."""
        return tuple(dict.fromkeys(s["column"] for s in self.partitions))

    @property
    def match_partitions(self) -> tuple[str, ...]:
        """The partition columns a merge matches rows by, beside its keys, as on Delta: the identity partitions
        (a record whose partition value changes is a new row, and merges read only the partitions they load)."""
        return tuple(s["column"] for s in self.partitions if s["transform"] == "identity")

    @property
    def value_partitions(self) -> tuple[str, ...]:
        """The partition columns whose value in each file `files()` gives: identity ones by its statistics (a file
        holds one partition), for strings and integers (other identity partitions are not pruned by value), and the
        `PARTITION_KEY<position>` of each transform by its partition record."""
        if self.table is None:
            return ()
        schema = self.table.schema()
        identities = tuple(
            s["column"] for s in self.partitions
            if s["transform"] == "identity" and type(schema.find_type(s["column"])).__name__ in _VALUE_TYPES
        )
        return identities + tuple(f"{PARTITION_KEY}{position}" for position, _ in self.transformed_partitions)

    @property
    def transformed_partitions(self) -> tuple[tuple[int, TPartitionSplit], ...]:
        """The partition fields of transforms (not identity), with their positions in the spec: a merge that matches
        by them computes `PARTITION_KEY<position>` columns (`lakeload.kernel.delta.splits.with_partition_keys`)."""
        return tuple((i, s) for i, s in enumerate(self.partitions) if s["transform"] != "identity")

    def files(self) -> list[SnapshotFile]:
        """The current snapshot's data files, paths relative to the data folder, with flattened statistics (planned
        once per snapshot: a merge asks several times)."""
        if self.table is None or self.table.current_snapshot() is None:
            return []
        snapshot_id = self.table.current_snapshot().snapshot_id  # type: ignore[union-attr]
        cached = self.planned
        if cached is not None and cached[0] == snapshot_id and cached[1] is self.table:
            return list(cached[2])
        found = self._plan()
        self.planned = (snapshot_id, self.table, found)
        return list(found)

    def _plan(self) -> list[SnapshotFile]:
        assert self.table is not None
        prefix = f"{self.table.location().rstrip('/')}/{DATA}/"
        found: list[SnapshotFile] = []
        for task in self.table.scan().plan_files():
            data_file = task.file
            if task.delete_files:
                raise DestinationError(
                    f"Iceberg table '{self.name}' has delete files (written by another engine in merge-on-read mode); "
                    "lakeload merges copy-on-write. Compact the table (rewrite_data_files) first."
                )
            path = data_file.file_path
            if not path.startswith(prefix):
                raise DestinationError(
                    f"Iceberg table '{self.name}' has a data file outside its data folder ({path}); lakeload writes "
                    f"and rewrites files under {prefix} only."
                )
            found.append({"path": path[len(prefix):], "size": int(data_file.file_size_in_bytes),
                          "partition_values": {}, "stats": self._stats(data_file)})
        return found

    def _stats(self, data_file: DataFile) -> dict[str, Any]:
        from pyiceberg.conversions import from_bytes
        from pyiceberg.types import IntegerType, LongType, StringType

        assert self.table is not None
        schema = self.table.schema()
        stats: dict[str, Any] = {"num_records": int(data_file.record_count)}
        for position, _ in self.transformed_partitions:
            stats[f"partition.{PARTITION_KEY}{position}"] = data_file.partition[position]
        for field_id, count in (data_file.null_value_counts or {}).items():
            column = schema.find_column_name(field_id)
            if column is not None:
                stats[f"null_count.{column}"] = int(count)
        for side, bounds in (("min", data_file.lower_bounds), ("max", data_file.upper_bounds)):
            for field_id, raw in (bounds or {}).items():
                column = schema.find_column_name(field_id)
                kind = schema.find_type(field_id) if column is not None else None
                if kind is not None and isinstance(kind, (IntegerType, LongType, StringType)):
                    stats[f"{side}.{column}"] = from_bytes(kind, raw)
        return stats

    def check_partitions(self) -> None:
        """Refuse to write when the table exists with another partition spec than the hints ask for."""
        if self.table is None or same_spec(self.table.spec(), self.table.schema(), self.partitions):
            return
        asked = [f"{s['transform']}({s['column']})" for s in self.partitions]
        raise DestinationError(
            f"The partition spec of Iceberg table '{self.name}' cannot change: the table has {self.table.spec()}, "
            f"the hints ask for {asked or 'none'}. Keep the partition hints the table was created with, or load into "
            "a new table (or drop this one first)."
        )

    def stored_schema(self) -> pa.Schema:
        if self.table is None:
            return pa.schema([])
        return iceberg_schema(self.table.schema().as_arrow())

    def table_schema(self) -> pa.Schema:
        """The existing table's columns (in their order) followed by this load's new ones, with field ids once the
        table exists."""
        if self.table is None:
            return self.schema
        existing = self.stored_schema()
        merged = pa.schema([*existing, *(f for f in self.schema if f.name not in existing.names)])
        return with_field_ids(merged, self.table.schema()) if not self._new_columns() else merged

    def _new_columns(self) -> list[pa.Field]:
        existing = set(self.stored_schema().names)
        return [f for f in self.schema if f.name not in existing]

    def prepare(self) -> None:
        """Make the table hold every column of this load before files are written: create it, or add the new
        columns (a metadata-only commit, on top of whatever is there; the opened snapshot moves to it)."""
        from pyiceberg.exceptions import CommitFailedException, TableAlreadyExistsError

        if self.table is not None and not self._new_columns():
            return
        for _ in range(8):
            try:
                with self.catalog.committing(self.name):
                    self.open()
                    if self.table is None:
                        self.table = self._create()
                    elif self._new_columns():
                        with self.table.update_schema() as update:
                            update.union_by_name(pa.schema(self._new_columns()))
                return
            except (CommitFailedException, TableAlreadyExistsError):
                continue
            except Exception as exc:
                raise self._error(exc, "add columns to") from None
        raise IcebergConflictError(f"Other writers kept changing Iceberg table '{self.name}' while this load added its columns.")

    def _create(self) -> Table:
        from pyiceberg.schema import Schema as _Schema  # noqa: F401 (pyiceberg converts the Arrow schema itself)

        self.catalog.ensure_namespace()
        catalog = self.catalog.catalog
        tx = catalog.create_table_transaction(self.catalog.identifier(self.name), schema=self.schema, location=self.uri)
        if self.partitions:
            with tx.update_spec() as update:
                add_fields(update, self.partitions, self.partition_names)
        properties = {**self.properties,
                      "schema.name-mapping.default": tx.table_metadata.schema().name_mapping.model_dump_json()}
        for split in self.partitions:  # whole values: a file's partition is derived from its column statistics
            properties[f"write.metadata.metrics.column.{split['column']}"] = "full"
        tx.set_properties(properties)
        tx.commit_transaction()
        return catalog.load_table(self.catalog.identifier(self.name))

    def commit(
        self, adds: list[TAddAction], removes: list[RemoveEntry], mode: str, mark: LoadMark | None = None,
        configuration: dict[str, str] | None = None, replace_schema: bool = False, strict: bool = False,
    ) -> None:
        """Commit `adds` (and the removal of `removes`; with mode `overwrite`, of every current file) as one
        snapshot marked with `mark`; `strict`: only on top of the opened snapshot (see the module docstring)."""
        from pyiceberg.exceptions import CommitFailedException, ValidationException

        if self.table is None:
            self.prepare()
        try:
            with self.catalog.committing(self.name):
                self._commit(adds, removes, mode, mark, strict)
        except (CommitFailedException, ValidationException) as exc:
            if strict:
                raise IcebergWriteConflict(
                    f"Another writer committed to Iceberg table '{self.name}' after this load read it ({_first_line(exc)}). "
                    "Nothing of this commit landed; the load reads the table again."
                ) from None
            raise IcebergConflictError(
                f"Other writers kept committing to Iceberg table '{self.name}' ({_first_line(exc)}). Nothing of this "
                "load was committed to it; run `pipeline.load()` to load the package again."
            ) from None
        except (IcebergConflictError, DestinationError):
            raise
        except Exception as exc:
            raise self._error(exc, "commit to") from None
        if strict:
            self.open()

    def _commit(self, adds: list[TAddAction], removes: list[RemoveEntry], mode: str, mark: LoadMark | None, strict: bool) -> None:
        assert self.table is not None
        table = _without_retries(self.table) if strict else self.catalog.catalog.load_table(self.catalog.identifier(self.name))
        properties = {MARK: mark.app, LOAD_ID: mark.load_id} if mark else {}
        prefix = f"{self.uri}/{DATA}/"
        tx = table.transaction()
        new_files = list(data_files(table.io, tx.table_metadata, (prefix + a["path"] for a in adds)))
        gone = {prefix + r["path"] for r in removes}
        if mode == "overwrite" or gone:
            current = [t.file for t in table.scan().plan_files()] if table.current_snapshot() else []
            with tx.update_snapshot(snapshot_properties=properties).overwrite() as producer:
                for data_file in current:
                    if mode == "overwrite" or data_file.file_path in gone:
                        producer.delete_data_file(data_file)
                for data_file in new_files:
                    producer.append_data_file(data_file)
        else:
            with tx.update_snapshot(snapshot_properties=properties).fast_append() as producer:
                for data_file in new_files:
                    producer.append_data_file(data_file)
        tx.commit_transaction()

    def _error(self, exc: BaseException, action: str) -> DestinationError:
        from lakeload.kernel.filesystem.retry import StorageRetriesExhausted

        error = StorageUnavailableError if isinstance(exc, StorageRetriesExhausted) else DestinationError
        return error(f"Cannot {action} Iceberg table '{self.name}' at {self.uri} ({self.catalog.describe()}): {_first_line(exc)}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _without_retries(table: Table) -> Table:
    """`table` whose commits pyiceberg does not retry on a concurrent update (the table's properties unchanged)."""
    from pyiceberg.table import Table as IcebergTable

    properties = {**table.metadata.properties, "commit.retry.num-retries": "0"}
    metadata = table.metadata.model_copy(update={"properties": properties})
    return IcebergTable(table.name(), metadata, table.metadata_location, table.io, table.catalog)


def _at_snapshot(table: Table, snapshot_id: int) -> Table:
    """`table` read as of one snapshot (its current snapshot set to it, in memory only)."""
    from pyiceberg.table import Table as IcebergTable
    from pyiceberg.table.refs import SnapshotRef

    refs = {**table.metadata.refs, "main": SnapshotRef.model_validate({"snapshot-id": snapshot_id, "type": "branch"})}
    metadata = table.metadata.model_copy(update={"current_snapshot_id": snapshot_id, "refs": refs})
    return IcebergTable(table.name(), metadata, table.metadata_location, table.io, table.catalog)

"""What a type handler gets: one table slice, read and written through Delta, through Arrow or Spark.

`DeltaConnection` holds the Delta side: opening the table, the write mode's check of rows already in
the slice, the files of the slice, and the metadata recorded on a materialization. The two data planes
are `lakeload.dagster.delta_arrow` (in-process Arrow, delta-rs writes and reads) and
`lakeload.dagster.delta_spark` (Spark executors write Parquet, delta-rs commits). A type handler only
converts its type to and from one of them, so a new handler needs no Delta code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote

import pyarrow as pa

from lakeload.dagster.config import WriteMode
from lakeload.dagster.location import DeltaLocation, TableLocation
from lakeload.dagster.predicates import arrow_filter, sql_predicate
from lakeload.dagster.slices import TableSlice
from lakeload.delta.snapshot_files import ListedFile
from lakeload.destinations.impl.filesystem.client import destination_error
from lakeload.errors import DestinationError, LakeloadError
from lakeload.kernel.delta.files import partition_value

if TYPE_CHECKING:
    from deltalake import DeltaTable


class SliceFile(ListedFile):
    """A data file that may hold rows of the slice (`DeltaConnection.slice_files`): its log entry's size and rows."""

    size: int
    rows: int | None  # `numRecords` of its statistics (None: the log has none)


class SliceNotEmptyError(LakeloadError):
    """`mode="error"` and the slice already has rows."""


@dataclass(frozen=True)
class WriteSettings:
    mode: str = WriteMode.overwrite.value
    schema_mode: str = "merge"
    table_config: dict[str, str] | None = None


class DeltaConnection:
    """One table slice of the I/O manager; secrets stay in `location` and never reach a message."""

    def __init__(self, location: DeltaLocation, table_slice: TableSlice, settings: WriteSettings | None = None) -> None:
        self.location = location
        self.slice = table_slice
        self.settings = settings or WriteSettings()
        self.target: TableLocation = location.table(table_slice.schema, table_slice.table)
        self._table: DeltaTable | None = None

    def __repr__(self) -> str:
        return f"DeltaConnection({self.target.uri!r})"

    @property
    def uri(self) -> str:
        return self.target.uri

    def error(self, exc: BaseException, action: str) -> DestinationError:
        """A `DestinationError` for a failed delta-rs call: names the table, never a secret."""
        return destination_error(exc, self.location.root_uri, self.location.storage_options, f"{action} {self.slice.name} in")

    def open(self) -> DeltaTable | None:
        """The table's current snapshot (None when it does not exist yet)."""
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        options = dict(self.location.storage_options)
        try:
            self._table = DeltaTable(self.uri, storage_options=options)
        except TableNotFoundError:
            self._table = None
            return None
        except Exception as exc:
            error = self.error(exc, "open Delta table")
        else:
            return self._table
        raise error

    @property
    def table(self) -> DeltaTable | None:
        return self._table

    def table_schema(self) -> pa.Schema | None:
        return None if self._table is None else pa.schema(self._table.schema().to_arrow())  # type: ignore[arg-type]

    def partition_columns(self) -> list[str]:
        return [] if self._table is None else list(self._table.metadata().partition_columns)

    def predicate(self, schema: pa.Schema) -> str | None:
        return sql_predicate(self.slice, schema)

    def slice_files(self) -> list[SliceFile]:
        """The add actions (path as in the log, size, rows, partition values) of the files that may hold
        rows of the slice: exactly the slice's files when it filters on partition columns."""
        if self._table is None:
            return []
        schema = self.table_schema()
        assert schema is not None
        actions = pa.table(self._table.get_add_actions(flatten=True)).to_pylist()  # type: ignore[arg-type]
        predicate = self.predicate(schema)
        if predicate is not None:
            root = self.uri.rstrip("/")
            # file URIs name the physical files (Hive-escaped folders); log paths are URL-encoded once more
            kept = {u[len(root) + 1:] for u in self._table.file_uris(file_pruning_predicate=predicate)}
            actions = [a for a in actions if unquote(a["path"]) in kept]
        partition_columns = self.partition_columns()
        return [
            {"path": a["path"], "size": a["size_bytes"], "rows": a.get("num_records"),
             "partition_values": {c: partition_value(a.get(f"partition.{c}")) for c in partition_columns}}
            for a in actions
        ]

    def slice_is_exact(self) -> bool:
        """Whether the slice's files hold only rows of the slice (it filters on partition columns only)."""
        return set(self.slice.partition_columns) <= set(self.partition_columns())

    def rows_in_slice(self) -> int:
        """How many rows the slice holds now."""
        files = self.slice_files()
        exact = not self.slice.partitions or self.slice_is_exact()
        if exact and all(f["rows"] is not None for f in files):
            return sum(int(f["rows"] or 0) for f in files)
        if self._table is None:
            return 0
        schema = self.table_schema()
        assert schema is not None
        dataset = self._table.to_pyarrow_dataset(file_pruning_predicate=self.predicate(schema))
        return int(dataset.count_rows(filter=arrow_filter(self.slice, schema)))

    def proceed(self) -> bool:
        """Open the table and say whether to write under the write mode; raises for `error` when the slice
        has rows."""
        mode = self.settings.mode
        if self.open() is None or mode not in (WriteMode.error.value, WriteMode.ignore.value):
            return True
        rows = self.rows_in_slice()
        if rows and mode == WriteMode.error.value:
            what = "partition" if self.slice.partitions else "table"
            raise SliceNotEmptyError(
                f"Delta table {self.slice.name} at {self.uri}: the {what} already has {rows} rows and the I/O manager's "
                "mode is 'error'. Use mode='overwrite' to replace them or mode='append' to add rows."
            )
        return rows == 0

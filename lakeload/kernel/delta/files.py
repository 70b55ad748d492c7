"""Executor-safe: Delta data files written from Arrow batches on Spark executors.

Runs inside Spark's Python workers (a `mapInArrow` function): rows arrive as Arrow batches, are cast
to the table's Delta-compatible schema, split by partition values into Hive folders (partition
columns are not stored in the files, as Delta requires) and written as Parquet straight into the
table folder, local or in a bucket. Each task returns, per file, the metadata of a Delta add action
(path, size, partition values, statistics); the driver commits them. Rows never leave the executors.

Imports only pyarrow, fsspec and executor-safe lakeload modules.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import lakeload.kernel.spark.working as wio
from lakeload.kernel.contracts import TAddAction, TFsOptions, TPackageFile, TPartitionSplit, TTableActions
from lakeload.kernel.delta.splits import split_rows
from lakeload.kernel.filesystem.fs import url_to_fs
from lakeload.kernel.filesystem.retry import RetryPolicy, call_with_retry

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
FILE_COLUMN = "_lakeload_file"  # the data file a row was read from (merge rewrites)
ROW_INDEX = "_lakeload_row"  # a row's position in its data file (merge rewrites drop rows by position)
ACTION_SCHEMA = pa.schema([("action", pa.string())])


def delta_type(arrow_type: pa.DataType) -> pa.DataType:
    """The Arrow type Delta can store for `arrow_type` (UTC microsecond timestamps; time and wide decimals as text)."""
    if pa.types.is_timestamp(arrow_type):
        return pa.timestamp("us", tz="UTC" if arrow_type.tz else None)
    if pa.types.is_time(arrow_type) or pa.types.is_decimal256(arrow_type) or pa.types.is_null(arrow_type):
        return pa.string()
    if pa.types.is_fixed_size_binary(arrow_type):
        return pa.binary()
    return arrow_type


def delta_schema(schema: pa.Schema) -> pa.Schema:
    """`schema` with every type made Delta-compatible; all columns nullable (Delta's schema evolution needs it)."""
    return pa.schema([pa.field(f.name, delta_type(f.type), nullable=True) for f in schema])


def conform(data: pa.Table | pa.RecordBatch, schema: pa.Schema) -> pa.Table:
    """`data` with exactly `schema`'s columns in its order: extra columns dropped, missing ones null."""
    names = data.schema.names
    arrays = []
    for target in schema:
        if target.name not in names:
            arrays.append(pa.nulls(data.num_rows, target.type))
            continue
        column = data.column(names.index(target.name))
        arrays.append(column if column.type == target.type else column.cast(target.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def partition_value(value: Any) -> str | None:
    """A partition value as Delta serializes it in the log (None for null)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _dt.datetime):
        moment: _dt.datetime = value if value.tzinfo is None else value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return moment.isoformat(sep=" ", timespec="microseconds")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def partition_dir(partition_by: tuple[str, ...], values: dict[str, str | None]) -> str:
    """The Hive folder of one partition, values escaped as delta-rs escapes them (`k=a%20b/`)."""
    parts = []
    for name in partition_by:
        value = values[name]
        parts.append(f"{name}={HIVE_NULL if value is None else quote(value, safe='')}")
    return "/".join(parts)


def _stat_value(value: Any, is_max: bool) -> Any:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        if is_max and value.microsecond % 1000:  # log stats have milliseconds: round the max up, never below a value
            value = value + _dt.timedelta(microseconds=1000 - value.microsecond % 1000)
        return value.isoformat(timespec="milliseconds") + "Z"
    if isinstance(value, _dt.date):
        return value.isoformat()
    return value


def _has_min_max(arrow_type: pa.DataType) -> bool:
    return bool(
        pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type) or pa.types.is_string(arrow_type)
        or pa.types.is_large_string(arrow_type) or pa.types.is_date(arrow_type) or pa.types.is_timestamp(arrow_type)
    )  # fmt: skip


@dataclass
class FileStats:
    """Delta statistics of one data file, folded batch by batch."""

    rows: int = 0
    nulls: dict[str, int] = field(default_factory=dict)
    mins: dict[str, Any] = field(default_factory=dict)
    maxs: dict[str, Any] = field(default_factory=dict)
    unusable: set[str] = field(default_factory=set)  # columns with NaN: no min/max

    def add(self, table: pa.Table) -> None:
        self.rows += table.num_rows
        for name, column in zip(table.schema.names, table.columns, strict=True):
            self.nulls[name] = self.nulls.get(name, 0) + column.null_count
            if not _has_min_max(column.type) or name in self.unusable or column.null_count == len(column):
                continue
            if pa.types.is_floating(column.type) and pc.any(pc.is_nan(column)).as_py():
                self.unusable.add(name)
                continue
            low, high = pc.min_max(column).values()
            low, high = low.as_py(), high.as_py()
            self.mins[name] = low if name not in self.mins else min(self.mins[name], low)
            self.maxs[name] = high if name not in self.maxs else max(self.maxs[name], high)

    def to_json(self) -> str:
        usable = [n for n in self.mins if n not in self.unusable]
        return json.dumps(
            {
                "numRecords": self.rows,
                "minValues": {n: _stat_value(self.mins[n], False) for n in usable},
                "maxValues": {n: _stat_value(self.maxs[n], True) for n in usable},
                "nullCount": self.nulls,
            }
        )


@dataclass
class DeltaFileSpec:
    """Where and how a task writes Delta data files; shipped to executors (credentials stay in fs_kwargs)."""

    bucket_url: str
    fs_kwargs: TFsOptions
    table_dir: str  # filesystem path of the table folder (no protocol for buckets)
    schema: pa.Schema  # the Delta table schema, partition columns included
    partition_by: tuple[str, ...] = ()
    prefix: str = ""  # file name prefix: the load id and the operation
    is_local: bool = True
    retry: RetryPolicy = field(default_factory=RetryPolicy)  # of the PUTs into a bucket
    splits: tuple[TPartitionSplit, ...] = ()  # one file per partition of these transforms, columns kept (Iceberg)

    def __repr__(self) -> str:
        return f"DeltaFileSpec(bucket_url={self.bucket_url!r}, table_dir={self.table_dir!r})"


class _OpenFile:
    """One Parquet file being written for one partition."""

    def __init__(self, spec: DeltaFileSpec, relative: str, values: dict[str, str | None], file_schema: pa.Schema) -> None:
        self.relative = relative
        self.values = values
        self.stats = FileStats()
        self.final = f"{spec.table_dir}/{relative}"
        if spec.is_local:
            os.makedirs(os.path.dirname(self.final), exist_ok=True)
            self.local = f"{self.final}.lakeload-tmp"
        else:
            handle, self.local = tempfile.mkstemp(suffix=".parquet")
            os.close(handle)
        self.writer = pq.ParquetWriter(self.local, file_schema, compression="snappy", use_compliant_nested_type=True)

    def write(self, table: pa.Table) -> None:
        self.writer.write_table(table)
        self.stats.add(table)

    def publish(self, spec: DeltaFileSpec) -> TAddAction:
        self.writer.close()
        size = os.path.getsize(self.local)
        if spec.is_local:
            os.replace(self.local, self.final)
        else:
            fs, _ = url_to_fs(spec.bucket_url, spec.fs_kwargs, spec.retry)
            try:  # one PUT: the object appears whole; again after a transient fault (same name)
                call_with_retry(spec.retry, lambda: fs.put_file(self.local, self.final), f"put {self.final}")
            finally:
                os.remove(self.local)
        return {
            "path": self.relative,  # delta-rs URL-encodes paths itself when it writes the log
            "size": size,
            "partition_values": self.values,
            "modification_time": int(time.time() * 1000),
            "stats": self.stats.to_json(),
        }

    def discard(self) -> None:
        try:
            self.writer.close()
        finally:
            if os.path.exists(self.local):
                os.remove(self.local)


def _partitions(table: pa.Table, partition_by: tuple[str, ...]) -> Iterator[tuple[dict[str, str | None], pa.Table]]:
    if not partition_by:
        yield {}, table
        return
    keys = table.select(list(partition_by)).group_by(list(partition_by)).aggregate([]).to_pylist()
    for key in keys:
        mask = None
        for name in partition_by:
            column = table.column(name)
            part = pc.is_null(column) if key[name] is None else pc.equal(column, pa.scalar(key[name], column.type))
            mask = part if mask is None else pc.and_(mask, part)
        values = {name: partition_value(key[name]) for name in partition_by}
        yield values, table.filter(mask).drop_columns(list(partition_by))


def _file_groups(table: pa.Table, spec: DeltaFileSpec) -> Iterator[tuple[dict[str, str | None], tuple[Any, ...], pa.Table]]:
    """The rows of `table` by the data file they go to: Delta's Hive partitions, or the split of `spec.splits`."""
    if spec.splits:
        for key, part in split_rows(table, spec.splits):
            yield {}, key, part
        return
    for values, part in _partitions(table, spec.partition_by):
        yield values, tuple(values.get(n) for n in spec.partition_by), part


def write_files(spec: DeltaFileSpec, batches: Iterable[pa.RecordBatch | pa.Table], tag: str) -> list[TAddAction]:
    """Write `batches` as data files of the table (one per partition); returns add-action metadata."""
    file_schema = pa.schema([f for f in spec.schema if f.name not in spec.partition_by])
    open_files: dict[tuple[Any, ...], _OpenFile] = {}
    try:
        for batch in batches:
            table = conform(batch, spec.schema)
            for values, key, part in _file_groups(table, spec):
                current = open_files.get(key)
                if current is None:
                    folder = partition_dir(spec.partition_by, values)
                    name = f"part-{spec.prefix}-{tag}-{len(open_files):04d}.snappy.parquet"
                    current = open_files[key] = _OpenFile(spec, f"{folder}/{name}" if folder else name, values, file_schema)
                current.write(part)
        return [f.publish(spec) for f in open_files.values() if f.stats.rows]
    except BaseException:
        for f in open_files.values():
            f.discard()
        raise


def task_tag() -> str:
    """This Spark task's part of data file names: its partition and attempt (unique within one job)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    return f"{context.partitionId():05d}-{context.attemptNumber()}" if context else "00000-0"


def write_task(spec: DeltaFileSpec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The `mapInArrow` body: write this Spark task's rows, yield one JSON add action per file."""
    actions = write_files(spec, batches, task_tag())
    yield pa.RecordBatch.from_pydict({"action": [json.dumps(a) for a in actions]}, schema=ACTION_SCHEMA)


def write_package_files(spec: DeltaFileSpec, files: list[TPackageFile]) -> list[TAddAction]:
    """A `run_tasks` task: rewrite normalized Parquet files of a package as data files of the table.

    File names derive from the package file ids, so a load run again overwrites what a crashed run left.
    """
    actions: list[TAddAction] = []
    for file in files:
        with wio.open_input(file["path"]) as raw:
            actions += write_files(spec, pq.ParquetFile(raw).iter_batches(batch_size=64_000), file["file_id"])
    return actions


def write_tables_package_files(specs: dict[str, DeltaFileSpec], item: tuple[str, list[TPackageFile]]) -> TTableActions:
    """A `run_tasks` task over several tables: `item` is a table name and some of its package files, rewritten
    as data files of that table (see `write_package_files`); returns the table name and the add actions."""
    table, files = item
    return {"table": table, "actions": write_package_files(specs[table], files)}

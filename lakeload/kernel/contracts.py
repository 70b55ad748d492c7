"""Executor-safe: the typed shapes of what crosses the driver/executor boundary, in one place.

Kernel tasks receive picklable payload dataclasses (next to their tasks: `CopyPayload`, `SinkPayload`,
`DeltaFileSpec`, ...) and return JSON-able results; those results, and the entries of a package's `files` list
that normalize writes into `package.json` and the loaders read back, have the shapes below. The driver side
imports them from here (the layer order lets it; this module imports nothing but the standard library).

Known shapes are TypedDicts; the genuinely arbitrary data (a user's record, a normalized row's values, fsspec's
keyword arguments) has a named alias that says so.

>>> entry: TPackageFile = {"table": "users", "path": "data/users.a1.parquet", "rows": 2, "file_id": "a1",
...                        "ext": "parquet", "bytes": 612, "split": 0}
>>> entry["table"], entry.get("chunk", False)
('users', False)
"""

from __future__ import annotations

from typing import Any, TypedDict

# -- arbitrary data, named -------------------------------------------------------------------------------------
TDataRecord = dict[str, Any]
"""One item a resource yielded, as a dict: the user's keys and values, nothing lakeload knows in advance."""

TRow = dict[str, Any]
"""One normalized row of a table: column name -> value (the user's values, flattened and coerced, plus the
`_dlt_*` columns). Its columns are the table's `TColumnSchema`s; the values are the user's data."""

TFsOptions = dict[str, Any]
"""Keyword arguments of an fsspec filesystem's constructor (credentials, endpoints, client settings): each
protocol (s3fs, gcsfs, adlfs, paramiko) takes its own, so lakeload passes them on as they are."""


# -- a package's files ----------------------------------------------------------------------------------------
class _PackageFileBase(TypedDict):
    table: str  # the table the rows belong to
    path: str  # where the file is: absolute (a task's result) or relative to the package (in `package.json`)
    rows: int


class TPackageFile(_PackageFileBase, total=False):
    """One file normalize wrote, an entry of `package.json`'s `files` (and of a `SplitReport`'s `files`).

    A final file (`TableFileWriter.close`) has `file_id`, `ext` and `bytes`; the normalize tasks add the `split`
    it came from. Pass 1 also returns staged files the driver settles before `package.json` is written: Arrow
    chunks (`chunk`) and draft Parquet files (`draft`, the column name -> Arrow type text they were written in).
    """

    file_id: str  # the file's id in its name and in the layout's `{file_id}`
    ext: str  # `parquet`, `jsonl`, `jsonl.gz`, `csv`, `csv.gz`
    bytes: int  # its size as written
    split: int  # the index of the extracted file it came from
    chunk: bool  # an Arrow IPC chunk for `finalize_split`, never loaded
    draft: dict[str, str]  # a draft Parquet file: its columns' Arrow types (`writers.schema_signature`)


class TLoadedFile(TypedDict):
    """A file a load published: its table, its path relative to the dataset, its rows and bytes."""

    table: str
    path: str
    rows: int
    bytes: int


class TSinkResult(TypedDict):
    """What a sink task returns for one file (`kernel.load.sink.deliver_file`)."""

    table: str
    batches_sent: int
    batches_skipped: int  # batches a run before delivered already
    pid: int  # the worker process (tests check where the sink ran)


# -- Delta ----------------------------------------------------------------------------------------------------
class TAddAction(TypedDict):
    """One Delta data file a task wrote, as the driver commits it (delta-rs' `AddAction` fields)."""

    path: str  # relative to the table folder, not URL-encoded (delta-rs encodes it in the log)
    size: int
    partition_values: dict[str, str | None]
    modification_time: int  # milliseconds since the epoch
    stats: str  # the Delta statistics JSON: numRecords, minValues, maxValues, nullCount


class TTableActions(TypedDict):
    """The add actions of one table's rewritten package files (`kernel.delta.files.write_tables_package_files`)."""

    table: str
    actions: list[TAddAction]


# -- the task runner's envelope -------------------------------------------------------------------------------
class TLakeloadFailure(TypedDict, total=False):
    """A `lakeload.errors` exception as data, so that the driver raises its class again (`kernel.spark.runner`)."""

    lakeload_error: str  # the class name in `lakeload.errors`
    lakeload_message: str
    lakeload_attributes: dict[str, str | int | float | bool | None]  # its plain attributes only


class TTaskOk(TypedDict):
    """A task's result as the runner returns it (JSON): what the task returned and its item's index."""

    ok: Any  # the task's own result shape (a `SplitReport`, a list of `TPackageFile`, `TSinkResult`, ...)
    index: int


class TTaskError(TLakeloadFailure):
    """A task's exception as the runner returns it (JSON), instead of a JVM stack trace."""

    error: str  # `<class name>: <message>`
    error_type: str
    trace: str  # the last frames of the traceback
    index: int


class TPartitionSplit(TypedDict):
    """One partition field of a table whose files hold their partition columns (Iceberg): rows are split into files
    by `transform` of `column` (`identity`, `year`, `month`, `day`, `hour`, `truncate` with `param` the width,
    `bucket` with `param` the number of buckets)."""

    column: str
    transform: str
    param: int | None

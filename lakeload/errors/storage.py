"""Errors of the places data is kept: the bucket (unreachable, a damaged package file, Delta tables and their
log) and the pipeline's working folder (locked by another run, a garbled file, nothing to attach, no such package).
"""

from __future__ import annotations

from lakeload.errors.base import DestinationError, LakeloadError, LoadError


class DamagedPackageFileError(LoadError):
    """A normalized package file differs from what normalize wrote (size, Parquet magic bytes, footer or rows).

    Raised before `_dlt_loads` is written; a package on this machine's disk is checked whole before any of its
    files is published. Loading the package again cannot succeed: the message says to drop it and run again.
    """

    def __init__(self, path: str, table: str, load_id: str, problem: str) -> None:
        self.path, self.table, self.load_id, self.problem = path, table, load_id, problem
        super().__init__(
            f"Package file {path} (table '{table}') of load package {load_id} is damaged: {problem}. "
            "The load stopped before marking the package loaded in _dlt_loads. Fix: drop the package with "
            "pipeline.drop_pending_packages() and run the pipeline again, so that its data is extracted and "
            "normalized anew."
        )


class StorageUnavailableError(DestinationError, LoadError):
    """The bucket did not answer, or kept failing with transient faults (resets, 5xx, throttling), through
    every attempt of the retry policy (`[destination.filesystem] retry_attempts`, `connect_timeout`,
    `read_timeout`, `unreachable_timeout`). A pending package stays pending: `pipeline.load()` loads it
    once the bucket answers."""


class DatabaseUnavailableError(DestinationError, LoadError):
    """A database file (the DuckDB destination's) cannot be opened or written: its folder does not exist, it is
    read-only, it is not a database, or another process holds it (DuckDB lets one process write a database at a
    time). `path` is the file, `reason` what was found; the message says the fix. A pending package stays
    pending: the next run loads it."""

    def __init__(self, path: str, reason: str, fix: str) -> None:
        self.path, self.reason, self.fix = path, reason, fix
        super().__init__(f"Cannot write the DuckDB database {path}: {reason}. Fix: {fix}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.path, self.reason, self.fix))


class ColumnTypeConflictError(DestinationError, LoadError):
    """A table already in the database (one not created by lakeload, or changed by hand) has a column whose type
    cannot hold what the load brings: `table` is the table, `conflicts` each column as (name, the table's type,
    the type the load needs). Nothing of the package landed; it stays pending for the next run once fixed."""

    def __init__(self, table: str, conflicts: list[tuple[str, str, str]], cause: str) -> None:
        self.table, self.conflicts, self.cause = table, conflicts, cause
        listed = "; ".join(f"'{name}' is {found} in the table, the load has {wanted}" for name, found, wanted in conflicts)
        super().__init__(
            f"Cannot load table '{table}': {listed or cause}. Fix: change the column's type in the database "
            "(ALTER TABLE ... ALTER COLUMN ... TYPE ...), or give the resource a column hint of the table's type "
            "(columns={...: {'data_type': ...}}), or load into another dataset; the package stays pending and the "
            f"next run loads it. (DuckDB said: {cause})"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.table, self.conflicts, self.cause))


class TableConflictError(LoadError):
    """Another writer committed to the same table (Delta or Iceberg) first; the package stays pending and can be
    loaded again (`except TableConflictError:` catches both formats' conflicts)."""


class TableWriteConflict(TableConflictError):
    """A commit made on top of the snapshot it read found another writer's commit there first. Nothing of it
    landed; the loader reads the table again and redoes the table's work (a `TableConflictError` reaches the
    user only when that keeps happening)."""


class DeltaConflictError(TableConflictError):
    """Another writer committed to the same Delta table first; the package stays pending and can be loaded again."""


class DeltaWriteConflict(DeltaConflictError, TableWriteConflict):
    """`TableWriteConflict` of a Delta table (a `DeltaConflictError` reaches the user only when it keeps happening)."""


class IcebergConflictError(TableConflictError):
    """Another writer committed to the same Iceberg table first; the package stays pending and can be loaded again."""


class IcebergWriteConflict(IcebergConflictError, TableWriteConflict):
    """`TableWriteConflict` of an Iceberg table (an `IcebergConflictError` reaches the user only when it keeps
    happening)."""


class IcebergCatalogError(DestinationError):
    """The Iceberg catalog cannot be opened or used (its configuration in `[iceberg_catalog]`, its database or
    server), or a table's metadata in the bucket cannot be read. The message names the catalog or the table and
    the fix."""


class DeltaLogDamagedError(DestinationError):
    """A Delta table's transaction log (`_delta_log`) lacks commits it had, or holds a commit file that cannot be
    read. Nothing is written to the table; the message names it and says how to restore it or load it anew."""


class IcebergTableNotFoundError(DestinationError, ValueError):
    """An Iceberg table asked for by name is not in the schema, is not an Iceberg table, or has not been created yet."""


class DeltaTableNotFoundError(DestinationError, ValueError):
    """A Delta table asked for by name is not in the schema, is not a Delta table, or has not been created yet."""


class PipelineLockedError(LakeloadError):
    """Another process (or thread) runs a step of the same pipeline in the same working folder.

    `holder` is what the holder wrote about itself (`pid`, `host`, `started_at`); `waited` the seconds waited
    (None with `[pipeline] lock = "fail"`).
    """

    def __init__(self, pipeline_name: str, lock_path: str, holder: dict[str, object], waited: float | None) -> None:
        self.pipeline_name = pipeline_name
        self.lock_path = lock_path
        self.holder = holder
        self.holder_pid = holder.get("pid")
        self.waited = waited
        who = self.describe(holder)
        if waited is None:
            what = f"Pipeline '{pipeline_name}' is in use by {who}"
            fix = ('Run it again when that run has finished, or set [pipeline] lock = "wait" (env PIPELINE__LOCK=wait) '
                   "to wait for it.")
        else:
            what = f"Pipeline '{pipeline_name}' is still in use by {who} after waiting {waited:.0f} s"
            fix = "Run it again when that run has finished, or raise [pipeline] lock_timeout (seconds) to wait longer."
        super().__init__(
            f"{what} (lock file {lock_path}). Two runs of one pipeline in one working folder would destroy each "
            f"other's load packages. {fix} The lock goes away with the process that holds it: nothing to clean up "
            "after a crash."
        )

    @staticmethod
    def describe(holder: dict[str, object]) -> str:
        """`holder` in words: "another process (pid 4711 on host h, since 2026-01-01T10:00:00+00:00)"."""
        if holder.get("thread"):
            return f"another thread of this process (pid {holder.get('pid')})"
        if not holder.get("pid"):
            return "another process"
        since = f", since {holder['started_at']}" if holder.get("started_at") else ""
        return f"another process (pid {holder['pid']} on host {holder.get('host', '?')}{since})"


class WorkingFolderCorruptedError(LakeloadError):
    """A file of the pipeline's working folder (`state.json`, `schemas/<name>.schema.json`) is truncated or garbled.

    `lakeload.pipeline(...)` still returns the pipeline, so that `pipeline.drop()` can start it afresh; the steps
    that need the file raise this error, naming the file (never quoting it) and the fix.
    """

    def __init__(self, pipeline_name: str, path: str, what: str) -> None:
        self.pipeline_name, self.path = pipeline_name, path
        super().__init__(
            f"The {what} of pipeline '{pipeline_name}' cannot be read: {path} is truncated or not valid JSON (a "
            "crash while it was written, a full disk, an edit). Fix: restore the file from a backup, or call "
            "pipeline.drop() to start the working folder afresh: the next run restores the state and schemas from "
            "the bucket, as in a new folder (pending load packages are dropped with it). From the command line: "
            f"`lakeload pipeline {pipeline_name} drop-pending-packages`, then `lakeload pipeline {pipeline_name} sync`."
        )


class CannotRestorePipelineError(LakeloadError):
    """`lakeload.attach()` found no pipeline: its working folder has no state (dlt's CannotRestorePipelineException).

    `pipeline_name` and `pipelines_dir` name what was looked for; `folder` is the working folder itself.
    """

    def __init__(self, pipeline_name: str, pipelines_dir: str, folder: str, reason: str) -> None:
        self.pipeline_name, self.pipelines_dir, self.folder = pipeline_name, pipelines_dir, folder
        super().__init__(
            f"Pipeline '{pipeline_name}' in pipelines_dir={pipelines_dir} could not be attached: {reason}. Run it "
            f"once with lakeload.pipeline('{pipeline_name}', ...), pass the pipelines_dir it was run with, or pass "
            "destination= (and dataset_name=) to attach() to restore its state from the bucket."
        )


class PipelineNotActive(LakeloadError):
    """`pipeline.deactivate()` on a pipeline that is not the active one (dlt's `PipelineNotActive`)."""

    def __init__(self, pipeline_name: str) -> None:
        self.pipeline_name = pipeline_name
        super().__init__(
            f"Pipeline '{pipeline_name}' is not active, so it cannot be deactivated. Only the pipeline created, "
            "attached, run or activated last is active: call pipeline.activate() first, or check pipeline.is_active."
        )


class LoadPackageNotFoundError(LakeloadError, KeyError):
    """`pipeline.get_load_package_info(load_id)` found no extracted, normalized or loaded package with that id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

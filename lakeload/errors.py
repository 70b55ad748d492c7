"""The one exception hierarchy of lakeload.

Every error a user can meet derives from :class:`LakeloadError` and says what went wrong and how to fix it.
"""

from __future__ import annotations


class LakeloadError(Exception):
    """Base of every lakeload error."""


class ConfigurationError(LakeloadError):
    """A configuration value is missing, malformed or inconsistent."""


class ConfigFieldMissingError(ConfigurationError):
    """A required configuration value was not found in any of the places looked up."""

    def __init__(self, section: str, field: str, keys_tried: list[str], files_read: list[str]) -> None:
        self.section = section
        self.field = field
        self.keys_tried = keys_tried
        self.files_read = files_read
        lines = [f"Missing required configuration value '{field}' for [{section}].", "Looked up, in order:"]
        lines += [f"  {i}. {k}" for i, k in enumerate(keys_tried, 1)]
        if files_read:
            lines.append("TOML files read: " + ", ".join(files_read))
        lines.append(f"Fix: set one of the environment variables above, or add '{field}' under [{section}] in .lakeload/config.toml.")
        super().__init__("\n".join(lines))


class ConfigValueMissingError(ConfigFieldMissingError, KeyError):
    """Arguments of a source or resource function (or a `lakeload.config[...]` key) found nowhere.

    `missing` maps every missing argument to the places looked up, in order: TOML paths (`sources.crm.api_key`)
    and environment variables (`SOURCES__CRM__API_KEY`). Values are never part of the message. A `KeyError`
    too, as dlt's `ConfigFieldMissingException`.
    """

    def __init__(
        self, what: str, missing: dict[str, list[str]], secrets: set[str], files_read: list[str], arguments: bool = True
    ) -> None:
        first = next(iter(missing))
        self.section, self.field, self.keys_tried, self.files_read = what, first, missing[first], files_read
        self.missing = missing
        names = ", ".join(f"'{name}'" for name in missing)
        lines = [f"Missing configuration for {what}: {names}."]
        for name, tried in missing.items():
            lines.append(f"'{name}' was looked up, in order, as:")
            lines += [f"  {key}" for key in tried]
        lines.append("TOML files read: " + (", ".join(files_read) if files_read else "none"))
        where = [f"'{name}' in .lakeload/{'secrets' if name in secrets else 'config'}.toml" for name in missing]
        lines.append(
            ("Fix: pass it in the call, or set " if arguments else "Fix: set ")
            + "; ".join(where) + " under one of the tables above, or one of the environment variables above."
        )
        ConfigurationError.__init__(self, "\n".join(lines))

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ConfigValueNotSecretError(ConfigurationError):
    """A secret (an argument defaulting to `lakeload.secrets.value`) was found in a config.toml, as dlt refuses."""

    def __init__(self, key: str, origin: str) -> None:
        self.key, self.origin = key, origin
        super().__init__(
            f"'{key}' is a secret but is set in {origin}, which holds no secrets. Fix: move it to "
            ".lakeload/secrets.toml (same table) or to an environment variable."
        )


class ConfigFileError(ConfigurationError):
    """A configuration file (`.lakeload/config.toml`, `secrets.toml`, ...) cannot be read or is not valid TOML.

    `path`, `line` and `column` (1-based; None when unknown) say where; the file's content is never quoted
    (it may hold secrets).
    """

    TOML_FIX = (
        "Fix the TOML syntax there (text values need quotes: layout = \"{table_name}/{load_id}.{file_id}.{ext}\"; "
        "tables are written [destination.filesystem]; a key may appear once per table; see https://toml.io), "
        "or move the file away."
    )

    def __init__(
        self, path: str, problem: str, line: int | None = None, column: int | None = None, fix: str = TOML_FIX
    ) -> None:
        self.path = path
        self.line = line
        self.column = column
        where = f" at line {line}, column {column}" if line is not None and column is not None else ""
        super().__init__(f"Cannot read configuration file {path}{where}: {problem}. {fix}")


class UnknownConfigKeyWarning(UserWarning):
    """A configuration file or environment variable sets a key lakeload does not read (usually a typo).

    Not an error: the value is ignored and lakeload's default is used. `lakeload config show` lists such keys.
    """


class DestinationError(LakeloadError):
    """The destination refused an operation or is not reachable."""


class LayoutError(ConfigurationError):
    """The filesystem layout template is invalid."""


class SchemaError(LakeloadError):
    """Data does not fit the schema and cannot be coerced."""


class DataValidationError(SchemaError):
    """Data breaks a schema contract set to `freeze` (dlt's `DataValidationError`): a new table, a new column or a
    value of another type than its column's. Nothing of the package reaches the bucket; the message says how to
    change the contract."""

    def __init__(
        self, schema_name: str | None, table_name: str, column_name: str | None, entity: str, mode: str, message: str
    ) -> None:
        self.schema_name = schema_name
        self.table_name = table_name
        self.column_name = column_name
        self.schema_entity = entity  # "tables", "columns" or "data_type" (dlt's names)
        self.contract_mode = mode
        self.detail = message
        column = f", column `{column_name}`" if column_name else ""
        super().__init__(
            f"Schema `{schema_name}`, table `{table_name}`{column}: contract on `{entity}` with mode `{mode}` is "
            f"violated. {message} To accept the change, relax the contract, e.g. "
            f"`schema_contract={{\"{entity}\": \"evolve\"}}` (or \"discard_row\"/\"discard_value\" to drop the "
            "data) on the resource, the source or `pipeline.run()`."
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.schema_name, self.table_name, self.column_name, self.schema_entity,
                             self.contract_mode, self.detail))


class IntegerOutOfRangeError(SchemaError):
    """An integer beyond the 64-bit range (2**63 and above) in a `bigint` column of a Parquet or CSV file.

    dlt fails on it too; the message names the table and column and the column types that hold such values.
    """

    def __init__(self, table_name: str, column_name: str) -> None:
        self.table_name, self.column_name = table_name, column_name
        super().__init__(
            f"Table `{table_name}`, column `{column_name}`: an integer is beyond the 64-bit range of its `bigint` "
            f"type (-2**63 .. 2**63-1). Fix: declare the column's type on the resource or in run(), e.g. "
            f"columns={{\"{column_name}\": {{\"data_type\": \"decimal\"}}}} (or \"wei\" or \"text\"), "
            "or load this table with loader_file_format=\"jsonl\"."
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.table_name, self.column_name))


class TableNotFoundError(SchemaError, KeyError):
    """A schema has no table of the asked name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ExtractError(LakeloadError):
    """A resource failed or produced data lakeload cannot store."""


class SourceError(ExtractError):
    """A source cannot read its files: the bucket is unreachable, refuses the credentials, or a reader is unknown."""


class IncrementalError(ExtractError):
    """Incremental loading (`lakeload.sources.incremental`) is misconfigured or met data it cannot filter."""


class IncrementalCursorPathMissing(IncrementalError):
    """An item has no value at the incremental's cursor path (dlt's `IncrementalCursorPathMissing`)."""

    def __init__(self, resource_name: str, cursor_path: str, item: object, detail: str = "") -> None:
        self.resource_name, self.cursor_path, self.item = resource_name, cursor_path, item
        super().__init__(
            f"Resource '{resource_name}': the cursor path '{cursor_path}' was not found in the item {_shown(item)}. "
            f"{detail}Every item must hold the cursor; use the field names of the data as the resource yields it "
            "(before normalization), or create the incremental with on_cursor_value_missing='include' (keep such "
            "items) or 'exclude' (drop them)."
        )


class IncrementalCursorPathHasValueNone(IncrementalError):
    """An item holds None at the incremental's cursor path (dlt's `IncrementalCursorPathHasValueNone`)."""

    def __init__(self, resource_name: str, cursor_path: str, item: object) -> None:
        self.resource_name, self.cursor_path, self.item = resource_name, cursor_path, item
        super().__init__(
            f"Resource '{resource_name}': the cursor path '{cursor_path}' is None in the item {_shown(item)}. Every "
            "item must hold a cursor value; create the incremental with on_cursor_value_missing='include' (keep such "
            "items) or 'exclude' (drop them)."
        )


class IncrementalCursorInvalidCoercion(IncrementalError):
    """A cursor value of the data cannot be compared with the incremental's start or end value."""

    def __init__(self, resource_name: str, cursor_path: str, bound: str, bound_value: object, row_value: object, detail: str) -> None:
        self.resource_name, self.cursor_path = resource_name, cursor_path
        super().__init__(
            f"Resource '{resource_name}': the cursor '{cursor_path}' value {row_value!r} "
            f"({type(row_value).__name__}) cannot be compared with the {bound} {bound_value!r} "
            f"({type(bound_value).__name__}): {detail}. Give the incremental a {bound} of the data's type, or cast "
            "the cursor in the data (e.g. with resource.add_map())."
        )


class IncrementalPrimaryKeyMissing(IncrementalError):
    """An item lacks a primary key column that incremental de-duplication needs."""

    def __init__(self, resource_name: str, column: str, item: object) -> None:
        self.resource_name, self.primary_key_column, self.item = resource_name, column, item
        super().__init__(
            f"Resource '{resource_name}': the primary key column '{column}' is missing in the item {_shown(item)}. "
            "Every item must hold the key that de-duplicates rows at the incremental's boundary; fix the data or "
            "give the incremental another primary_key (primary_key=() turns de-duplication off)."
        )


def _shown(item: object, limit: int = 200) -> str:
    text = repr(item)
    return text if len(text) <= limit else text[:limit] + "..."


class NormalizeError(LakeloadError):
    """The Spark normalize job failed."""


class LoadError(LakeloadError):
    """Loading a package into the destination failed. The package stays pending and is retried by `pipeline.load()`."""


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


class SparkSetupError(LakeloadError):
    """Spark or Java could not be started."""


class WorkingUrlRequiredError(ConfigurationError):
    """A remote Spark Connect server cannot read this machine's disk: `[spark] working_url` must name a bucket."""


class PipelineStepFailed(LakeloadError):
    """A pipeline step failed; `step` names it and `__cause__` is the original error.

    When the cause is a `LakeloadError`, the raised error is also an instance of the cause's class (see
    `step_failed`), so `except DeltaConflictError:` around `run()` works as well as `except PipelineStepFailed:`.
    """

    def __init__(self, step: str, load_id: str | None, message: str) -> None:
        self.step = step
        self.load_id = load_id
        self.detail = message
        where = f" (load package {load_id})" if load_id else ""
        # Exception's own __init__: a cause class mixed in (see `step_failed`) may take other arguments
        Exception.__init__(self, f"Pipeline step '{step}' failed{where}: {message}")

    def __str__(self) -> str:  # a KeyError mixed in would quote the message
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[object, ...]:
        base = next(c for c in type(self).__mro__ if c in _STEP_CLASSES)
        mixed = None if type(self) is base else type(self).__bases__[1]
        return (_rebuilt_step_failed, (base, mixed, self.step, self.load_id, self.detail), dict(self.__dict__))


class ExtractStepFailed(PipelineStepFailed, ExtractError):
    """The extract step failed; nothing of this run was loaded and the pipeline state is unchanged."""


class NormalizeStepFailed(PipelineStepFailed, NormalizeError):
    """The normalize step failed; the extracted package stays pending (the message says how to retry or drop it)."""


class LoadStepFailed(PipelineStepFailed, LoadError):
    """The load step failed; the normalized package stays pending (the message says how to retry or drop it)."""


STEP_FAILURES: dict[str, type[PipelineStepFailed]] = {
    "extract": ExtractStepFailed,
    "normalize": NormalizeStepFailed,
    "load": LoadStepFailed,
}
_STEP_CLASSES = (PipelineStepFailed, *STEP_FAILURES.values())
_MIXED: dict[tuple[type[PipelineStepFailed], type[LakeloadError]], type[PipelineStepFailed]] = {}


def _mixed_class(base: type[PipelineStepFailed], cause: type[LakeloadError]) -> type[PipelineStepFailed]:
    """`base` and `cause` in one class (made once per pair), or `base` when they cannot be combined or `cause` is
    also a builtin error (a `KeyError`, `ValueError`, ...): dlt's step error is none of those, nor is lakeload's."""
    builtin = any(c not in (Exception, BaseException, object) and not issubclass(c, LakeloadError) for c in cause.__mro__)
    if builtin or issubclass(base, cause) or issubclass(cause, PipelineStepFailed):
        return base
    if (base, cause) not in _MIXED:
        try:
            mixed = type(f"{base.__name__}_{cause.__name__}", (base, cause), {"__module__": __name__})
        except TypeError:  # incompatible layouts: the cause stays reachable as __cause__ only
            mixed = base
        _MIXED[(base, cause)] = mixed
    return _MIXED[(base, cause)]


def step_failed(step: str, load_id: str | None, message: str, cause: BaseException | None = None) -> PipelineStepFailed:
    """The `PipelineStepFailed` of `step`, also an instance of the step's own error (`LoadError` for load, ...)
    and of `cause`'s class when that is a `LakeloadError` (whose attributes it carries too): dlt users catch
    `PipelineStepFailed`, lakeload's README shows `except DeltaConflictError:`, and both must work.

    >>> isinstance(step_failed("load", "1795296531.14", "bucket gone"), LoadError)
    True
    >>> isinstance(step_failed("load", "1", "lost", DeltaConflictError("lost")), DeltaConflictError)
    True
    """
    base = STEP_FAILURES.get(step, PipelineStepFailed)
    kind = _mixed_class(base, type(cause)) if isinstance(cause, LakeloadError) else base
    error = kind(step, load_id, message)
    if kind is not base and cause is not None:
        error.__dict__.update({k: v for k, v in vars(cause).items() if k not in error.__dict__})
    return error


def _rebuilt_step_failed(
    base: type[PipelineStepFailed], mixed: type[LakeloadError] | None, step: str, load_id: str | None, message: str
) -> PipelineStepFailed:
    """Unpickles a step error (`PipelineStepFailed.__reduce__`): its class is made again from the same pair."""
    return (_mixed_class(base, mixed) if mixed is not None else base)(step, load_id, message)


class StorageUnavailableError(DestinationError, LoadError):
    """The bucket did not answer, or kept failing with transient faults (resets, 5xx, throttling), through
    every attempt of the retry policy (`[destination.filesystem] retry_attempts`, `connect_timeout`,
    `read_timeout`, `unreachable_timeout`). A pending package stays pending: `pipeline.load()` loads it
    once the bucket answers."""


class DeltaConflictError(LoadError):
    """Another writer committed to the same Delta table first; the package stays pending and can be loaded again."""


class DeltaWriteConflict(DeltaConflictError):
    """A commit made on top of the snapshot it read found another writer's commit there first. Nothing of it
    landed; the loader reads the table again and redoes the table's work (a `DeltaConflictError` reaches the
    user only when that keeps happening)."""


class MissingDependencyError(ConfigurationError, ImportError):
    """An optional package lakeload needs for this feature is not installed; the message names the extra to install."""


class DeltaLogDamagedError(DestinationError):
    """A Delta table's transaction log (`_delta_log`) lacks commits it had, or holds a commit file that cannot be
    read. Nothing is written to the table; the message names it and says how to restore it or load it anew."""


class DeltaTableNotFoundError(DestinationError, ValueError):
    """A Delta table asked for by name is not in the schema, is not a Delta table, or has not been created yet."""


class InvalidNameError(ConfigurationError, ValueError):
    """A pipeline, dataset, schema or table name would put files outside the bucket's dataset folder or the
    pipeline's working folder (empty, `.`/`..`, a path separator, NUL); the message names the value and the fix."""


class UnsafeLayoutPathError(LayoutError, InvalidNameError):
    """A layout (its template, an extra placeholder value or callback) renders a path that leaves the dataset folder."""


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


class LoadPackageNotFoundError(LakeloadError, KeyError):
    """`pipeline.get_load_package_info(load_id)` found no extracted, normalized or loaded package with that id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

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


class ExtractError(LakeloadError):
    """A resource failed or produced data lakeload cannot store."""


class SourceError(ExtractError):
    """A source cannot read its files: the bucket is unreachable, refuses the credentials, or a reader is unknown."""


class NormalizeError(LakeloadError):
    """The Spark normalize job failed."""


class LoadError(LakeloadError):
    """Loading a package into the destination failed. The package stays pending and is retried by `pipeline.load()`."""


class SparkSetupError(LakeloadError):
    """Spark or Java could not be started."""


class PipelineStepFailed(LakeloadError):
    """A pipeline step failed; `step` names it and `__cause__` is the original error."""

    def __init__(self, step: str, load_id: str | None, message: str) -> None:
        self.step = step
        self.load_id = load_id
        where = f" (load package {load_id})" if load_id else ""
        super().__init__(f"Pipeline step '{step}' failed{where}: {message}")


class DeltaConflictError(LoadError):
    """Another writer committed to the same Delta table first; the package stays pending and can be loaded again."""


class MissingDependencyError(ConfigurationError, ImportError):
    """An optional package lakeload needs for this feature is not installed; the message names the extra to install."""


class DeltaTableNotFoundError(DestinationError, ValueError):
    """A Delta table asked for by name is not in the schema, is not a Delta table, or has not been created yet."""

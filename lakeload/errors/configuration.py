"""Configuration errors: a value missing, not secret, a file that cannot be read, a name or layout path that
would leave its folder, an optional package not installed; and the warning about keys lakeload does not read.
"""

from __future__ import annotations

from lakeload.errors.base import ConfigurationError, LayoutError


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


class WorkingUrlRequiredError(ConfigurationError):
    """A remote Spark Connect server cannot read this machine's disk: `[spark] working_url` must name a bucket."""


class MissingDependencyError(ConfigurationError, ImportError):
    """An optional package lakeload needs for this feature is not installed; the message names the extra to install."""


class UnsupportedDestinationError(ConfigurationError, ImportError):
    """A destination dlt has and lakeload does not (postgres, bigquery, ...): lakeload loads into the filesystem
    destination (local folders and buckets) and DuckDB; the message names them. An `ImportError`, so that
    `from lakeload.destinations import postgres` fails as an import."""


class InvalidNameError(ConfigurationError, ValueError):
    """A pipeline, dataset, schema or table name would put files outside the bucket's dataset folder or the
    pipeline's working folder (empty, `.`/`..`, a path separator, NUL); the message names the value and the fix."""


class UnsafeLayoutPathError(LayoutError, InvalidNameError):
    """A layout (its template, an extra placeholder value or callback) renders a path that leaves the dataset folder."""

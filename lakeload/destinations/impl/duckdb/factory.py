"""`lakeload.destinations.duckdb(...)`: a DuckDB database file as the destination, as dlt's `duckdb` destination.

The database is `<pipeline_name>.duckdb` in the working directory unless `credentials` names another: a path, a
`duckdb:///path` URL, `:memory:`, or an open `duckdb.DuckDBPyConnection`; from configuration,
`[destination.duckdb] credentials = "..."` (env `DESTINATION__DUCKDB__CREDENTIALS`). The dataset is a schema of
the database. Normalize writes Parquet files (or jsonl ones with `loader_file_format="jsonl"`; dlt's
`"insert_values"` is written as Parquet); the driver loads each package with DuckDB's own readers in one
transaction (`lakeload.load.duckdb_loader`).

Configuration as dlt's DuckDB destination reads it (factory argument > `[destination.duckdb]` > `[destination]`):
`replace_strategy` (`truncate-and-insert`, the default, or `insert-from-staging`: rows go into the staging dataset
`<dataset>_staging` first, then are copied), `staging_dataset_name_layout` (`%s_staging`), and
`enable_dataset_name_normalization` (true: the dataset's schema name goes through the naming convention, as
dlt's; `MyData` becomes `my_data` with `snake_case`); `[load] truncate_staging_dataset` empties the staging tables
after each load.

>>> duckdb("/tmp/x.duckdb").database_path("quick_start")
'/tmp/x.duckdb'
>>> duckdb().database_path("quick_start").endswith("/quick_start.duckdb")
True
>>> duckdb().schema_names("MyData", "snake_case", "p")
('my_data', 'my_data_staging')
>>> duckdb(enable_dataset_name_normalization=False).schema_names("MyData", "snake_case", "p")
('MyData', 'MyData_staging')
"""

from __future__ import annotations

import os
from dataclasses import fields, replace
from typing import Any

from lakeload.config.resolver import resolve
from lakeload.destinations.reference import Destination, DestinationCapabilities
from lakeload.errors import ConfigurationError
from lakeload.schema.naming import get_naming

_CAPABILITY_NAMES = {f.name for f in fields(DestinationCapabilities)}
MEMORY = ":memory:"
REPLACE_STRATEGIES = ("truncate-and-insert", "insert-from-staging")
DLT_REPLACE_STRATEGIES = (*REPLACE_STRATEGIES, "staging-optimized")  # dlt's three; its DuckDB destination has two
# the files it loads (DuckDB's own readers); dlt's default `insert_values` is taken and written as Parquet
LOADER_FILE_FORMATS = ("parquet", "jsonl", "insert_values")
SETTINGS = {"replace_strategy": str, "staging_dataset_name_layout": str, "enable_dataset_name_normalization": bool}


class duckdb(Destination):  # noqa: N801 - dlt's factory name
    """A DuckDB database (see the module docstring)."""

    type_name = "duckdb"

    def __init__(self, credentials: Any = None, destination_name: str | None = None, **arguments: Any) -> None:
        settings = {k: v for k, v in arguments.items() if k in SETTINGS}
        capabilities = {k: v for k, v in arguments.items() if k not in SETTINGS}
        unknown = set(capabilities) - _CAPABILITY_NAMES
        if unknown:
            raise ConfigurationError(
                f"Unknown duckdb destination arguments {sorted(unknown)}; known: {sorted(SETTINGS)} and the "
                f"capabilities {sorted(_CAPABILITY_NAMES)}."
            )
        self.credentials, self.given_name, self.capability_overrides = credentials, destination_name, capabilities
        self.settings = settings

    @property
    def name(self) -> str:
        return self.given_name or self.destination_type.rsplit(".", 1)[-1]  # dlt: the last part of its type

    @property
    def destination_name(self) -> str:
        """The name given, else the type's (dlt's `destination_name`: "duckdb" for the shorthand)."""
        return self.name

    def capabilities(self) -> DestinationCapabilities:
        """dlt's capabilities of its DuckDB destination, as far as lakeload loads them: Parquet (preferred) and jsonl
        files, no table formats."""
        found = DestinationCapabilities(
            preferred_loader_file_format="parquet", supported_loader_file_formats=LOADER_FILE_FORMATS, supported_table_formats=(),
            supported_merge_strategies=("delete-insert", "upsert", "scd2", "insert-only", "cdc"), merge_falls_back_to_append=False,
            merges_in_place=True,
            supported_replace_strategies=REPLACE_STRATEGIES, max_identifier_length=65536,
            has_case_sensitive_identifiers=False,  # (DuckDB keeps the case it is given, but matches names without it)
        )
        return replace(found, **self.capability_overrides)

    def connection(self) -> Any:
        """The open connection given as credentials, if one was."""
        return None if isinstance(self.credentials, (str, os.PathLike)) or self.credentials is None else self.credentials

    def database_path(self, pipeline_name: str | None) -> str:
        """The database file (or `:memory:`) as the credentials, the configuration or dlt's default name it."""
        given = self.credentials
        if given is None:
            given = resolve(("destination", self.name), "credentials", pipeline_name).value
        if given is None:
            return os.path.abspath(f"{pipeline_name or 'lakeload'}.duckdb")
        if not isinstance(given, (str, os.PathLike)):
            raise ConfigurationError(
                f"Destination '{self.name}': credentials must be a database path, 'duckdb:///<path>', ':memory:' or a "
                f"duckdb connection, not {type(given).__name__}."
            )
        text = os.fspath(given)
        if text.startswith("duckdb:///"):
            text = text[len("duckdb:///"):]
        return text if text == MEMORY else os.path.abspath(text)

    def location(self, pipeline_name: str | None = None) -> str:
        return MEMORY if self.connection() is not None else self.database_path(pipeline_name)

    def with_credentials(self, credentials: Any) -> duckdb:
        return duckdb(credentials, self.given_name, **self.capability_overrides, **self.settings)

    def setting(self, key: str, pipeline_name: str | None, default: Any) -> Any:
        """A setting of dlt's DuckDB configuration: the factory's argument, else `[destination.<name>] <key>` (or
        `[destination] <key>`), else `default`."""
        value = resolve(("destination", self.name), key, pipeline_name, explicit=self.settings.get(key), hint=SETTINGS[key]).value
        return default if value is None else value

    def replace_strategy(self, pipeline_name: str | None) -> str:
        """How a `replace` loads (`truncate-and-insert` or `insert-from-staging`), as dlt's `replace_strategy`."""
        return str(self.setting("replace_strategy", pipeline_name, REPLACE_STRATEGIES[0]))

    def check_replace_strategy(self, strategy: str) -> None:
        """A `ConfigurationError` naming the strategies this destination has, when it lacks `strategy` (dlt fails the
        load of a `replace` table then too)."""
        supported = self.capabilities().supported_replace_strategies
        if strategy not in supported:
            known = "it is not one of dlt's" if strategy not in DLT_REPLACE_STRATEGIES else "the DuckDB destination lacks it"
            raise ConfigurationError(
                f"Destination '{self.name}': replace_strategy '{strategy}' cannot be used ({known}). Fix: set "
                f"[destination.{self.name}] replace_strategy (or DESTINATION__REPLACE_STRATEGY) to one of "
                f"{', '.join(supported)}; the package stays pending and the next run loads it."
            )

    def truncate_staging_dataset(self, pipeline_name: str | None) -> bool:
        """Whether the staging dataset's tables are emptied after each load (dlt's `[load] truncate_staging_dataset`)."""
        return bool(resolve(("load",), "truncate_staging_dataset", pipeline_name, hint=bool).value)

    def schema_names(self, dataset_name: str, naming: str, pipeline_name: str | None) -> tuple[str, str]:
        """The DuckDB schemas of the dataset and of its staging dataset, named as dlt names them: through the naming
        convention unless `enable_dataset_name_normalization` is false, the staging one by `staging_dataset_name_layout`."""
        layout = str(self.setting("staging_dataset_name_layout", pipeline_name, "%s_staging"))
        names = (dataset_name, layout % dataset_name if "%s" in layout else layout)
        if not self.setting("enable_dataset_name_normalization", pipeline_name, True):
            return names
        convention = get_naming(naming)
        return convention.normalize_table_identifier(names[0]), convention.normalize_table_identifier(names[1])

    def __repr__(self) -> str:
        return f"duckdb(destination_name={self.name!r}, credentials={self.credentials!r})"


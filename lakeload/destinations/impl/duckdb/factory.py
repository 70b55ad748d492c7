"""`lakeload.destinations.duckdb(...)`: a DuckDB database file as the destination, as dlt's `duckdb` destination.

The database is `<pipeline_name>.duckdb` in the working directory unless `credentials` names another: a path, a
`duckdb:///path` URL, `:memory:`, or an open `duckdb.DuckDBPyConnection`; from configuration,
`[destination.duckdb] credentials = "..."` (env `DESTINATION__DUCKDB__CREDENTIALS`). The dataset is a schema of
the database. Normalize writes Parquet files; the driver loads each package with DuckDB's own Parquet reader in
one transaction (`lakeload.load.duckdb_loader`).

>>> duckdb("/tmp/x.duckdb").database_path("quick_start")
'/tmp/x.duckdb'
>>> duckdb().database_path("quick_start").endswith("/quick_start.duckdb")
True
"""

from __future__ import annotations

import os
from dataclasses import fields, replace
from typing import Any

from lakeload.config.resolver import resolve
from lakeload.destinations.reference import Destination, DestinationCapabilities
from lakeload.errors import ConfigurationError

_CAPABILITY_NAMES = {f.name for f in fields(DestinationCapabilities)}
MEMORY = ":memory:"


class duckdb(Destination):  # noqa: N801 - dlt's factory name
    """A DuckDB database (see the module docstring)."""

    destination_type = "duckdb"

    def __init__(self, credentials: Any = None, destination_name: str | None = None, **capabilities: Any) -> None:
        unknown = set(capabilities) - _CAPABILITY_NAMES
        if unknown:
            raise ConfigurationError(
                f"Unknown duckdb destination arguments {sorted(unknown)}; known capabilities: {sorted(_CAPABILITY_NAMES)}."
            )
        self.credentials, self.destination_name, self.capability_overrides = credentials, destination_name, capabilities

    @property
    def name(self) -> str:
        return self.destination_name or self.destination_type

    def capabilities(self) -> DestinationCapabilities:
        """dlt's capabilities of its DuckDB destination, as far as lakeload loads them: Parquet files, no table formats."""
        found = DestinationCapabilities(
            preferred_loader_file_format="parquet", supported_loader_file_formats=("parquet",), supported_table_formats=(),
            supported_merge_strategies=("delete-insert", "upsert", "insert-only"), merge_falls_back_to_append=False,
            supported_replace_strategies=("truncate-and-insert",), max_identifier_length=65536,
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
        return duckdb(credentials, self.destination_name, **self.capability_overrides)

    def __repr__(self) -> str:
        return f"duckdb(destination_name={self.name!r}, credentials={self.credentials!r})"

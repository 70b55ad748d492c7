"""`lakeload.destination(...)`: named destinations, and the decorator that makes a sink destination.

>>> dest = destination("production_bucket", destination_type="filesystem", bucket_url="/tmp/prod")
>>> @destination(batch_size=50)
... def my_sink(items, table): ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lakeload.config.resolver import resolve
from lakeload.destinations.reference import Destination
from lakeload.errors import ConfigurationError, UnsupportedDestinationError

DESTINATION_TYPES = ("filesystem", "duckdb")
SINK_OPTIONS = (
    "batch_size", "loader_file_format", "naming_convention", "skip_dlt_columns_and_tables", "max_table_nesting", "run_on",
)


def unsupported_destination(name: str) -> UnsupportedDestinationError:
    """The error for a destination dlt has and lakeload does not (postgres, bigquery, ...).

    >>> print(unsupported_destination("postgres"))  # doctest: +ELLIPSIS
    lakeload has no postgres destination (dlt's dlt.destinations.postgres): ...
    """
    return UnsupportedDestinationError(
        f"lakeload has no {name} destination (dlt's dlt.destinations.{name}): lakeload's destinations are "
        "filesystem (lakeload.destinations.filesystem: a local folder or an s3/gs/az/sftp/memory bucket, with plain, "
        "Delta or Iceberg tables) and duckdb (lakeload.destinations.duckdb), plus your own sinks (@lakeload.destination). "
        f"Fix: load into one of those, or keep dlt for {name}."
    )


def _dlt_only(reference: str) -> str:
    """The name of the dlt destination `reference` names that lakeload lacks ("postgres" for "postgres" and
    "dlt.destinations.postgres"), "" for any other."""
    from lakeload.destinations import DLT_ONLY_DESTINATIONS

    for prefix in ("dlt.destinations.", "lakeload.destinations.", ""):
        if reference.startswith(prefix) and reference[len(prefix):] in DLT_ONLY_DESTINATIONS:
            return reference[len(prefix):]
    return ""


def _named(destination_name: str, destination_type: str | None, **kwargs: Any) -> Any:
    dlt_only = _dlt_only(destination_name)
    kind = destination_type or (None if dlt_only and "." in destination_name
                                else resolve(("destination", destination_name), "destination_type").value)
    if kind is None and dlt_only:
        raise unsupported_destination(dlt_only)
    if kind is None:
        raise ConfigurationError(
            f"Destination '{destination_name}' has no type. Pass destination_type='filesystem' (or 'duckdb'), or set "
            f"[destination.{destination_name}] destination_type = \"filesystem\" in .lakeload/config.toml "
            f"(env DESTINATION__{destination_name.upper()}__DESTINATION_TYPE)."
        )
    kind = _type_path(str(kind))
    if _dlt_only(kind):
        raise unsupported_destination(_dlt_only(kind))
    if kind not in DESTINATION_TYPES:
        raise ConfigurationError(f"Unknown destination_type {kind!r}; lakeload has {DESTINATION_TYPES}.")
    if kind == "duckdb":
        from lakeload.destinations.impl.duckdb.factory import duckdb

        return duckdb(destination_name=destination_name, **kwargs)
    from lakeload.destinations.impl.filesystem.factory import filesystem

    return filesystem(destination_name=destination_name, **kwargs)


def destination(func_or_name: Callable[..., Any] | str | None = None, /, destination_type: str | None = None,
                name: str | None = None, **kwargs: Any) -> Any:
    """A named destination (`destination("prod", destination_type="filesystem")`) or a sink decorator.

    As a decorator, bare or with options (`batch_size`, `loader_file_format`, `naming_convention`,
    `skip_dlt_columns_and_tables`, `max_table_nesting`, `name`, `run_on`), it turns `f(items, table)` into a
    destination whose function runs in this process (or, with `run_on="executors"`, on Spark executors).
    """
    from lakeload.destinations.impl.sink.factory import sink

    if isinstance(func_or_name, str):
        return _named(func_or_name, destination_type, **kwargs)
    unknown = set(kwargs) - set(SINK_OPTIONS)
    if unknown:
        raise ConfigurationError(f"Unknown sink destination options {sorted(unknown)}; known: {SINK_OPTIONS}.")
    if callable(func_or_name):
        return sink(func_or_name, destination_name=name, **kwargs)

    def decorate(func: Callable[..., Any]) -> Any:
        return sink(func, destination_name=name, **kwargs)

    return decorate


def resolve_destination(destination: Any) -> Destination | None:
    """A destination from a destination object (a factory, a sink, a user's own `Destination`), a shorthand type
    or a configured destination name."""
    from lakeload.destinations.impl.filesystem.factory import filesystem

    if destination is None or isinstance(destination, Destination):
        return destination
    if isinstance(destination, type) and issubclass(destination, Destination):  # the factory itself (dlt allows it)
        return destination()
    if isinstance(destination, str):
        destination = _type_path(destination)
        if destination == "filesystem":
            return filesystem()
        if destination == "duckdb":
            from lakeload.destinations.impl.duckdb.factory import duckdb

            return duckdb()
        return _named(destination, None)
    raise ConfigurationError(
        f"Unsupported destination {destination!r}: pass 'filesystem', a configured destination name, "
        "lakeload.destinations.filesystem(...), a @lakeload.destination sink, or a lakeload.destinations.Destination."
    )


def _type_path(reference: str) -> str:
    """A destination type given by its module path, as dlt allows: "dlt.destinations.filesystem" (or lakeload's
    spelling) is "filesystem"; anything else is returned as it is.

    >>> _type_path("dlt.destinations.duckdb"), _type_path("lakeload.destinations.filesystem"), _type_path("prod")
    ('duckdb', 'filesystem', 'prod')
    """
    for prefix in ("dlt.destinations.", "lakeload.destinations."):
        if reference.startswith(prefix) and reference[len(prefix):] in DESTINATION_TYPES:
            return reference[len(prefix):]
    return reference


def resolve_staging(staging: Any, destination: Destination | None) -> Destination | None:
    """The staging destination of `destination` (dlt's `staging=`): "filesystem", a filesystem destination or a
    configured name of one; refused for a destination that loads no staged files."""
    if staging is None:
        return None
    found = resolve_destination(staging)
    if found is None or found.type_name != "filesystem":
        raise ConfigurationError(f"staging= takes the filesystem destination (a bucket), not {staging!r}.")
    if destination is None or destination.type_name != "duckdb":
        raise ConfigurationError(
            f"staging= is for a database destination (duckdb), not {destination!r}: the filesystem destination "
            "writes into its bucket directly."
        )
    return found

"""`lakeload.destination(name, destination_type=...)`: named destinations, typed in code or config."""

from __future__ import annotations

from typing import Any

from lakeload.config.resolver import resolve
from lakeload.errors import ConfigurationError

DESTINATION_TYPES = ("filesystem",)


def destination(destination_name: str, destination_type: str | None = None, **kwargs: Any) -> Any:
    """A named destination; its type comes from the argument or `[destination.<name>] destination_type`.

    >>> dest = destination("production_bucket", destination_type="filesystem", bucket_url="/tmp/prod")
    """
    kind = destination_type or resolve(("destination", destination_name), "destination_type").value
    if kind is None:
        raise ConfigurationError(
            f"Destination '{destination_name}' has no type. Pass destination_type='filesystem', or set "
            f"[destination.{destination_name}] destination_type = \"filesystem\" in .lakeload/config.toml "
            f"(env DESTINATION__{destination_name.upper()}__DESTINATION_TYPE)."
        )
    if kind not in DESTINATION_TYPES:
        raise ConfigurationError(f"Unknown destination_type {kind!r}; lakeload has {DESTINATION_TYPES}.")
    from lakeload.destinations.impl.filesystem.factory import filesystem

    return filesystem(destination_name=destination_name, **kwargs)

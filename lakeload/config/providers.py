"""The configuration providers a script registered (`lakeload.config.register_provider`), read by the resolver
after every built-in place, in the order registered (dlt's provider order).

>>> from lakeload.common.configuration.providers import CustomLoaderDocProvider
>>> with registered_only():
...     register_provider(CustomLoaderDocProvider("defaults", lambda: {"sources": {"api": {"page_size": 5}}}))
...     [p.name for p in registered()]
['defaults']
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lakeload.common.configuration.providers import CustomLoaderDocProvider
from lakeload.errors import ConfigurationError

_registered: list[CustomLoaderDocProvider] = []


def register_provider(provider: Any) -> None:
    """Add `provider` after the environment, the values set in code and the TOML files: it gives the values none of
    them has. A name registered already is refused (dlt's `DuplicateConfigProviderException`)."""
    if not isinstance(provider, CustomLoaderDocProvider):
        raise ConfigurationError(
            f"Cannot register {type(provider).__name__} as a configuration provider: lakeload reads providers that "
            "serve a document, lakeload.common.configuration.providers.CustomLoaderDocProvider(name, loader) with "
            "a loader returning the values as a dict."
        )
    if any(p.name == provider.name for p in _registered):
        raise ConfigurationError(
            f"A configuration provider named {provider.name!r} is registered already; give this one another name."
        )
    _registered.append(provider)


def registered() -> list[CustomLoaderDocProvider]:
    """The registered providers, in the order they are read."""
    return list(_registered)


@contextmanager
def registered_only() -> Iterator[None]:
    """Register providers for the duration of the block only (tests)."""
    saved = list(_registered)
    try:
        yield
    finally:
        _registered[:] = saved

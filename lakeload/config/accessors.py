"""`lakeload.config` and `lakeload.secrets`: dlt's dictionary-like access to configuration, and the
`lakeload.config.value` / `lakeload.secrets.value` defaults that source and resource arguments are injected into.

    api_key = lakeload.secrets["sources.my_source.api_key"]      # exactly this key: env var, then TOML
    lakeload.config["sources.my_source.page_size"] = 50           # in memory, never written to a file
    page_size = lakeload.config.get("sources.my_source.page_size", int)

A key is read at exactly its dotted path (`SOURCES__MY_SOURCE__API_KEY`, then `[sources.my_source] api_key`
in the TOML files), as dlt's accessors do; `lakeload.secrets` reads only where secrets may be (environment,
secrets.toml, values set through `lakeload.secrets`). A value set here takes the place of its TOML file
(secrets.toml for `lakeload.secrets`, config.toml for `lakeload.config`): environment variables still win.
Strings are cast as dlt does (`"5"` -> 5, `"true"` -> True, JSON objects and lists parsed).
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar

T = TypeVar("T")


class ConfigValueSentinel:
    """The default `lakeload.config.value` / `lakeload.secrets.value`: "inject this argument from configuration"."""

    def __init__(self, literal: str, secret: bool) -> None:
        self.literal = literal
        self.secret = secret

    def __repr__(self) -> str:
        return f"{'SecretValue' if self.secret else 'ConfigValue'}({self.literal}) awaiting injection"

    __str__ = __repr__


CONFIG_VALUE: Any = ConfigValueSentinel("lakeload.config.value", secret=False)
SECRET_VALUE: Any = ConfigValueSentinel("lakeload.secrets.value", secret=True)


class _Accessor:
    """What `lakeload.config` and `lakeload.secrets` share; `secret` says which one this is."""

    secret: ClassVar[bool] = False
    value: ClassVar[Any] = CONFIG_VALUE

    def __getitem__(self, key: str) -> Any:
        from lakeload.config.coercion import auto_cast
        from lakeload.config.resolver import lookup
        from lakeload.errors import ConfigValueMissingError

        found = lookup(key, secrets_only=self.secret)
        if found.value is None:
            what = f"lakeload.{'secrets' if self.secret else 'config'}[{key!r}]"
            raise ConfigValueMissingError(
                what, {key: found.keys_tried}, {key} if self.secret else set(), found.files_read, arguments=False
            )
        return auto_cast(found.value) if isinstance(found.value, str) else found.value

    def __setitem__(self, key: str, value: Any) -> None:
        from lakeload.config import memory

        memory.set_value(key, value, self.secret)

    def __contains__(self, key: str) -> bool:
        from lakeload.config.resolver import lookup

        return lookup(key, secrets_only=self.secret).value is not None

    def get(self, key: str, expected_type: type[T] | None = None) -> T | None:
        """The value at `key`, or None when it is not set; with `expected_type` (int, bool, float, dict, list,
        str) a string is converted to it, as dlt's `config.get(key, expected_type)`.

        >>> import lakeload
        >>> lakeload.config.get("sources.my_source.page_size", int) is None  # not set
        True
        >>> with lakeload.config.values({"sources.my_source.page_size": "50"}):
        ...     lakeload.config.get("sources.my_source.page_size", int)
        50
        """
        from lakeload.config.coercion import coerce_value
        from lakeload.config.resolver import lookup

        found = lookup(key, secrets_only=self.secret)
        if found.value is None or expected_type is None:
            return found.value  # type: ignore[no-any-return]
        return coerce_value(found.value, expected_type, found.source or key)  # type: ignore[no-any-return]

    @contextmanager
    def values(self, values: Mapping[str, Any]) -> Iterator[None]:
        """Set `values` (dotted keys) for the duration of the block, then restore what was set before.

        >>> import lakeload
        >>> with lakeload.config.values({"sources.my_source.page_size": 5}):   # e.g. around pipeline.run(my_source())
        ...     lakeload.config["sources.my_source.page_size"]
        5
        >>> "sources.my_source.page_size" in lakeload.config
        False
        """
        from lakeload.config import memory

        with memory.preserved():
            for key, value in values.items():
                self[key] = value
            yield

    @staticmethod
    def register_provider(provider: Any) -> None:
        """Read `provider` (a `lakeload.common.configuration.providers.CustomLoaderDocProvider`) after every other
        place, as dlt's `config.register_provider`; `lakeload.config` and `lakeload.secrets` share the providers.

        >>> import lakeload
        >>> from lakeload.common.configuration.providers import CustomLoaderDocProvider
        >>> from lakeload.config.providers import registered_only
        >>> with registered_only():
        ...     lakeload.config.register_provider(CustomLoaderDocProvider("doc", lambda: {"a": {"b": 1}}))
        ...     lakeload.config["a.b"]
        1
        """
        from lakeload.config.providers import register_provider

        register_provider(provider)

    def describe(self) -> str:
        """Where this accessor looks, highest precedence first (never values)."""
        from lakeload.config.resolver import documents

        name = "lakeload.secrets" if self.secret else "lakeload.config"
        places = ["environment variables"] + [
            doc.origin for doc in documents() if doc.secrets or not self.secret
        ]
        return f"{name}(" + ", ".join(places) + ")"


class SecretsAccessor(_Accessor):
    """`lakeload.secrets`: secrets by dotted key, from the environment, secrets.toml and values set in code."""

    secret: ClassVar[bool] = True
    value: ClassVar[Any] = SECRET_VALUE

    def __repr__(self) -> str:
        return self.describe()


class ConfigModule(types.ModuleType, _Accessor):
    """The class of the `lakeload.config` package: the package is also dlt's `config` accessor."""

    def __repr__(self) -> str:
        return self.describe()


secrets = SecretsAccessor()

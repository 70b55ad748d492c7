"""Configuration providers a script brings (dlt's `dlt.common.configuration.providers`).

`CustomLoaderDocProvider(name, loader)` calls `loader()` once and serves the dict it returns as one more
configuration document: registered with `lakeload.config.register_provider(provider)` (or
`lakeload.secrets.register_provider`), lakeload's one resolver (`lakeload.config.resolver`) reads it after the
environment, the values set in code and every TOML file, with the same keys (`sources.<source>.<key>`,
pipeline-scoped `<pipeline>.sources...` first); `lakeload config show` names it as a value's source.

>>> provider = CustomLoaderDocProvider("yaml_docs", lambda: {"sources": {"github": {"page_size": 50}}})
>>> provider.get_value("page_size", None, None, "sources", "github")
(50, 'sources.github.page_size')
>>> provider.get_value("page_size", None, "my_pipeline", "sources", "github")
(None, 'my_pipeline.sources.github.page_size')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["CustomLoaderDocProvider"]


class CustomLoaderDocProvider:
    """A provider serving the dict its `loader` returns (dlt's `CustomLoaderDocProvider`).

    `name` names it in `lakeload config show` and in errors; `supports_secrets=False` makes a secret found in it an
    error, as a secret in config.toml is; `locations` say where the loader reads from (shown with its name).
    """

    def __init__(
        self, name: str, loader: Callable[[], Mapping[str, Any]], supports_secrets: bool = True,
        locations: Sequence[str] | None = None,
    ) -> None:
        document = loader()
        if not isinstance(document, Mapping):
            raise TypeError(
                f"The loader of configuration provider {name!r} returned {type(document).__name__}; it must return a "
                "dict of values by section, e.g. {'sources': {'my_source': {'api_key': '...'}}}."
            )
        self._name = name
        self._supports_secrets = supports_secrets
        self._locations = list(locations or [])
        self._document: dict[str, Any] = dict(document)

    @property
    def name(self) -> str:
        return self._name

    @property
    def supports_secrets(self) -> bool:
        return self._supports_secrets

    @property
    def locations(self) -> list[str]:
        return list(self._locations)

    @property
    def is_writable(self) -> bool:
        return True

    @property
    def document(self) -> dict[str, Any]:
        """The values it serves, by section (what the loader returned, and what `set_value` set since)."""
        return self._document

    def get_value(self, key: str, hint: Any, pipeline_name: str | None, *sections: str) -> tuple[Any, str]:
        """The value at `[pipeline_name.]sections.key` (None when it has none) and that dotted path (dlt's)."""
        path = (*((pipeline_name,) if pipeline_name else ()), *sections, key)
        node: Any = self._document
        for part in path:
            if not isinstance(node, Mapping) or part not in node:
                return None, ".".join(path)
            node = node[part]
        return node, ".".join(path)

    def set_value(self, key: str, value: Any, pipeline_name: str | None, *sections: str) -> None:
        """Set the value at `[pipeline_name.]sections.key` in this provider's document."""
        node = self._document
        for part in (*((pipeline_name,) if pipeline_name else ()), *sections):
            node = node.setdefault(part, {})
        node[key] = value

    def to_toml(self) -> str:
        """The document as TOML text (with tomlkit, as dlt writes it)."""
        import tomlkit

        return str(tomlkit.dumps(self._document))

    def to_yaml(self) -> str:
        """The document as YAML text (with PyYAML, keys in their order, as dlt writes it)."""
        import yaml

        return str(yaml.dump(self._document, allow_unicode=True, default_flow_style=False, sort_keys=False))

    def __repr__(self) -> str:
        return f"CustomLoaderDocProvider({self._name!r}, supports_secrets={self._supports_secrets})"

"""Values set in code (`lakeload.config["a.b"] = v`, `lakeload.secrets["a.b"] = v`), kept in memory, never written.

As dlt's accessors do, a value set through `lakeload.secrets` takes the place of `secrets.toml` and one set
through `lakeload.config` the place of `config.toml`: each wins over its file, environment variables win
over both. The resolver reads these trees as two more configuration documents (see `resolver.documents`).

>>> set_value("sources.my_source.page_size", 10, secret=False)
>>> tree(secret=False)["sources"]["my_source"]["page_size"]
10
>>> clear()
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from lakeload.config.open_types import ConfigTree
from lakeload.errors import ConfigurationError

_trees: dict[bool, ConfigTree] = {True: {}, False: {}}  # by secret


def split_key(key: str) -> tuple[str, ...]:
    """`"sources.my_source.api_key"` as its parts; a `ConfigurationError` on an empty part.

    >>> split_key("sources.my_source.api_key")
    ('sources', 'my_source', 'api_key')
    """
    parts = tuple(key.split("."))
    if not all(parts):
        raise ConfigurationError(
            f"Configuration key {key!r} has an empty part: write dotted names such as 'sources.my_source.api_key'."
        )
    return parts


def set_value(key: str, value: Any, secret: bool) -> None:
    """Set `key` (dotted) in the in-memory secrets (`secret=True`) or config tree; a table replaces what was there."""
    *sections, name = split_key(key)
    node = _trees[secret]
    for part in sections:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[name] = dict(value) if isinstance(value, Mapping) else value


def tree(secret: bool) -> ConfigTree:
    """The in-memory secrets or config tree (the live object: read it, do not change it)."""
    return _trees[secret]


def clear() -> None:
    """Forget every value set in code."""
    for values in _trees.values():
        values.clear()


@contextmanager
def preserved() -> Iterator[None]:
    """Restore both trees on exit: values set inside the block are forgotten (dlt's `config.values(...)`)."""
    saved = {secret: copy.deepcopy(values) for secret, values in _trees.items()}
    try:
        yield
    finally:
        for secret, values in saved.items():
            _trees[secret].clear()
            _trees[secret].update(values)

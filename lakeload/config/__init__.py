"""Configuration: one resolver for explicit arguments, env vars and TOML files.

The package is also dlt's `config` accessor (`lakeload.config["sources.crm.page_size"]`,
`lakeload.config.value`; see `lakeload.config.accessors`), as `lakeload.secrets` is for secrets.

>>> from lakeload.config import show_configuration
>>> lines = show_configuration(pipeline_name="quick_start")
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from lakeload.config.accessors import CONFIG_VALUE, ConfigModule

value: Any = CONFIG_VALUE  # `def src(page_size: int = lakeload.config.value)` (also a class attribute; typed here)

_EXPORTS = {
    "show_configuration": "lakeload.runtime.config_report",
    "render_configuration": "lakeload.runtime.config_report",
    "ConfigLine": "lakeload.config.lines",
    "Credentials": "lakeload.config.credentials",
    "resolve": "lakeload.config.resolver",
    "resolve_section": "lakeload.config.resolver",
}
__all__ = [
    "ConfigLine",
    "Credentials",
    "render_configuration",
    "resolve",
    "resolve_section",
    "show_configuration",
]

if TYPE_CHECKING:
    from lakeload.config.credentials import Credentials
    from lakeload.config.resolver import resolve, resolve_section


def __getattr__(name: str) -> Any:
    """Import exported names lazily (the resolver is imported by modules `show` itself imports)."""
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'lakeload.config' has no attribute {name!r}")


sys.modules[__name__].__class__ = ConfigModule  # `lakeload.config[...]`, `.get`, `.values`, `.value`

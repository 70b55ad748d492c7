"""Contracts every layer shares: the active-pipeline context, and (next) the typed shapes of data that crosses
layers. Imports nothing from lakeload but `schema` and `errors`.

It also mirrors what user code imports from `dlt.common`, so that a dlt script runs with `import lakeload as dlt`
and `lakeload.common` in place of `dlt.common`: `typing` (dlt's type aliases), `json`, `pendulum`, `time`,
`logger`, `runtime.signals`, `schema` and `schema.typing`, `utils`, `configuration.providers`,
`storages.fsspec_filesystem` (`FileItemDict`, which the files sources yield), and here `pendulum`, `json`, `Decimal`,
`logger` and `sleep`, imported on first use. lakeload's own modules use none of these names but `FileItemDict`.

>>> from lakeload.common import Decimal, json, pendulum
>>> json.dumps({"at": pendulum.datetime(2024, 5, 1), "price": Decimal("1.10")})
'{"at":"2024-05-01T00:00:00+00:00","price":"1.10"}'
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from decimal import Decimal

    from lakeload.common import logger
    from lakeload.common.json import json
    from lakeload.common.pendulum import pendulum
    from lakeload.common.runtime.signals import sleep

__all__ = ["Decimal", "json", "logger", "pendulum", "sleep"]

_EXPORTS = {  # name -> (module, its attribute; None: the module itself)
    "Decimal": ("decimal", "Decimal"),
    "json": ("lakeload.common.json", "json"),
    "logger": ("lakeload.common.logger", None),
    "pendulum": ("lakeload.common.pendulum", "pendulum"),
    "sleep": ("lakeload.common.runtime.signals", "sleep"),
}
# submodules named as what they hold: the package's attribute is what they hold (the `pendulum` module, the
# `json` object), as in dlt, also after `import lakeload.common.pendulum` (which binds the submodule here)
_HOLDERS = ("json", "pendulum")


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name, attribute = _EXPORTS[name]
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        if name in _HOLDERS and isinstance(value, types.ModuleType) and value.__name__ == f"{__name__}.{name}":
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

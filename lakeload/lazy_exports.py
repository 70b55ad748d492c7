"""Executor-safe: a package's names imported from their modules on first use (PEP 562 `__getattr__`).

Packages that hold executor modules (`lakeload`, `lakeload.sql`) export their driver-side names this way, so
that a Spark worker importing one of their executor modules loads nothing else of theirs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, exports: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: `exports` maps each name to its module; a name once imported is
    kept in `namespace` (the package's globals)."""

    def getattr_(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return getattr_

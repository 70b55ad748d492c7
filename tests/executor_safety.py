"""Test helper: what an executor-side module imports itself (read from its source, not by importing it)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_docstring(module_name: str) -> str:
    """The module's docstring (executor-side modules start theirs with `Executor-safe:`)."""
    return importlib.import_module(module_name).__doc__ or ""


def module_source(module_name: str) -> Path:
    """The module's file (a package's `__init__.py`)."""
    return Path(str(importlib.import_module(module_name).__file__))


def imported_names(module_name: str, submodules: bool = False) -> list[str]:
    """Every module name the module's own `import` / `from ... import` statements name; with `submodules`,
    also the lakeload modules a `from package import module` names (`from lakeload.schema import typed_json`)."""
    tree = ast.parse(module_source(module_name).read_text())
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
            if submodules and node.module:
                names += [f"{node.module}.{a.name}" for a in node.names if _is_lakeload_module(f"{node.module}.{a.name}")]
    return names


def _is_lakeload_module(name: str) -> bool:
    """`from lakeload.schema import typed_json` names a module, `from lakeload.errors import X` a name."""
    return name.startswith("lakeload.") and ROOT.joinpath(*name.split(".")).with_suffix(".py").exists()

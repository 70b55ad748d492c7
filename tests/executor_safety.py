"""Test helper: what an executor-side module imports itself (read from its source, not by importing it)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path


def module_docstring(module_name: str) -> str:
    """The module's docstring (executor-side modules start theirs with `Executor-safe:`)."""
    return importlib.import_module(module_name).__doc__ or ""


def imported_names(module_name: str) -> list[str]:
    """Every module name the module's own `import` / `from ... import` statements name."""
    tree = ast.parse(Path(str(importlib.import_module(module_name).__file__)).read_text())
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
    return names

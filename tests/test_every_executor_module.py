"""Every executor-side module of lakeload (`executor_*.py`, anywhere in the package) and everything it imports.

Executor modules run in Spark's Python workers: each says so (`Executor-safe:` in its docstring), and the
lakeload modules they import, directly or not, are executor-safe too (marked so, a package's empty
`__init__`, or one of the shared definitions in `SHARED`), so that a worker never loads the driver's
configuration, runtime, loaders or SQL client. The area tests (`tests/delta`, `tests/normalize`, ...) check
the third-party imports of their own modules more narrowly.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from executor_safety import imported_names, module_docstring, module_source

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lakeload"
EXECUTOR_MODULES = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts) for p in PACKAGE.rglob("executor_*.py"))
SHARED = {"lakeload.errors", "lakeload.schema.contract"}  # the error hierarchy and dlt's contract modes: no imports
THIRD_PARTY = {"pyarrow", "numpy", "orjson", "pendulum", "fsspec", "pyspark", "paramiko", "google"}
DRIVER_ONLY = ("deltalake", "duckdb", "rich", "dagster", "sqlglot", "pydantic")  # libraries only the driver needs


def _marked(module: str) -> bool:
    return module_docstring(module).startswith("Executor-safe:")


def _is_package(module: str) -> bool:
    return module_source(module).name == "__init__.py"


def _reachable() -> dict[str, str]:
    """Every lakeload module an executor module imports, directly or not: the module that imports it first."""
    found: dict[str, str] = {}
    todo = [(m, m) for m in EXECUTOR_MODULES]
    while todo:
        module, via = todo.pop()
        if module in found:
            continue
        found[module] = via
        todo += [(name, module) for name in imported_names(module, submodules=True) if name.split(".")[0] == "lakeload"]
    return found


def test_the_walk_finds_the_executor_modules_of_every_area() -> None:
    for module in ("lakeload.normalize.executor_tasks", "lakeload.delta.executor_rewrite", "lakeload.spark.executor_daemon",
                   "lakeload.spark.executor_runner", "lakeload.destinations.impl.filesystem.executor_fs"):
        assert module in EXECUTOR_MODULES


@pytest.mark.parametrize("module", sorted(_reachable()))
def test_what_executors_load_is_executor_safe(module: str) -> None:
    via = _reachable()[module]
    empty_package = _is_package(module) and not ast.parse(module_source(module).read_text()).body
    assert _marked(module) or empty_package or module in SHARED, f"{module} (imported by {via})"
    for name in imported_names(module, submodules=True):
        top = name.split(".")[0]
        assert top == "lakeload" or top in THIRD_PARTY or top in sys.stdlib_module_names or top == "__future__", (
            f"{module} imports {name}"
        )


def test_a_worker_importing_every_executor_module_loads_nothing_driver_side() -> None:
    """At run time too: the packages around executor modules (`lakeload.sql`, `lakeload.load`, ...) load
    nothing when a worker imports one of them (their exports are lazy)."""
    tops = ("lakeload", *DRIVER_ONLY)
    code = "import sys\n" + "".join(f"import {m}\n" for m in EXECUTOR_MODULES) + (
        f"print('\\n'.join(sorted(m for m in sys.modules if m.split('.')[0] in {tops!r})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert [m for m in loaded if m.split(".")[0] != "lakeload"] == []
    assert [m for m in loaded if not (_is_package(m) or _marked(m) or m in SHARED)] == []

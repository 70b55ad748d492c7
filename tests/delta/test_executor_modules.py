"""The Delta modules shipped to Spark executors import only executor-safe modules (their own imports)."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

EXECUTOR_MODULES = ["lakeload.delta.executor_files", "lakeload.delta.executor_read"]
ALLOWED = {
    *sys.stdlib_module_names, "__future__", "pyarrow", "pyspark",  # pyspark: TaskContext, inside the Spark task only
    "lakeload.destinations.impl.filesystem.executor_fs", *EXECUTOR_MODULES,
}


@pytest.mark.parametrize("module_name", EXECUTOR_MODULES)
def test_executor_module_imports_only_executor_safe_modules(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert (module.__doc__ or "").startswith("Executor-safe:")
    tree = ast.parse(Path(str(module.__file__)).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        for name in names:
            assert name in ALLOWED or name.split(".")[0] in ALLOWED - {"pyspark"} or name == "pyspark", name


def test_importing_them_on_a_worker_loads_no_driver_side_module() -> None:
    """What a Spark worker's Python process loads when a Delta task unpickles its function."""
    import subprocess

    code = (
        "import sys\n" + "".join(f"import {m}\n" for m in EXECUTOR_MODULES)
        + "print(sorted(m for m in sys.modules if m.startswith(('lakeload.config', 'lakeload.runtime', "
        "'lakeload.sql', 'lakeload.load', 'deltalake', 'pyspark')) or m.endswith(('factory', 'configuration', 'client'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

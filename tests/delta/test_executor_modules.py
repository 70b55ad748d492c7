"""The Delta modules shipped to Spark executors import only executor-safe modules (their own imports)."""

from __future__ import annotations

import sys

import pytest
from executor_safety import imported_names, module_docstring

EXECUTOR_MODULES = [
    "lakeload.delta.executor_files", "lakeload.delta.executor_read", "lakeload.delta.executor_rewrite",
    "lakeload.delta.executor_keys", "lakeload.delta.executor_drops",
]
ALLOWED_PACKAGES = {*sys.stdlib_module_names, "__future__", "pyarrow", "numpy"}
# pyspark itself only: TaskContext, imported inside the Spark task
ALLOWED_MODULES = {
    "pyspark", "lakeload.destinations.impl.filesystem.executor_fs", "lakeload.destinations.impl.filesystem.executor_retry",
    "lakeload.spark.executor_working", *EXECUTOR_MODULES
}


@pytest.mark.parametrize("module_name", EXECUTOR_MODULES)
def test_executor_module_imports_only_executor_safe_modules(module_name: str) -> None:
    assert module_docstring(module_name).startswith("Executor-safe:")
    for name in imported_names(module_name):
        assert name in ALLOWED_MODULES or name.split(".")[0] in ALLOWED_PACKAGES, name


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

"""The executor-safe kernel, and lakeload's layers, checked once for the whole package.

- `lint-imports` keeps the contracts in `pyproject.toml` ([tool.importlinter]): one-way layers, no import
  circles between the modules of a package, no driver-only library in the kernel (every import counted, inside
  functions and under TYPE_CHECKING too).
- A Spark worker that imports every kernel module loads no driver-side lakeload module and no driver-only library
  (at run time: package `__init__`s and lazy exports included).
- The kernel's own third-party imports are the few libraries a bare Spark worker with lakeload installed has.
- `run_tasks` and `map_in_arrow` send only kernel functions to executors.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from lakeload.spark.kernel_code import require_kernel

ROOT = Path(__file__).resolve().parents[2]
# what executors may load of lakeload: the kernel and the layers below it
EXECUTOR_SAFE = ("lakeload.kernel", "lakeload.common", "lakeload.schema", "lakeload.errors", "lakeload.about",
                 "lakeload.lazy_exports", "lakeload.user_warnings")
THIRD_PARTY = {"pyarrow", "numpy", "orjson", "pendulum", "fsspec", "pyspark", "paramiko", "google", "mmh3"}
DRIVER_ONLY = ("deltalake", "duckdb", "rich", "dagster", "sqlglot", "pydantic", "streamlit")


def _graph() -> grimp.ImportGraph:
    return grimp.build_graph("lakeload", include_external_packages=True)


def _kernel_modules(graph: grimp.ImportGraph) -> list[str]:
    return sorted(m for m in graph.modules if m == "lakeload.kernel" or m.startswith("lakeload.kernel."))


def test_the_import_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "3 kept, 0 broken" in done.stdout


def test_the_kernel_holds_the_code_of_every_area() -> None:
    modules = _kernel_modules(_graph())
    for area in ("normalize.tasks", "delta.files", "spark.runner", "spark.daemon", "filesystem.fs", "load.copy"):
        assert f"lakeload.kernel.{area}" in modules


def test_kernel_modules_import_only_what_a_bare_worker_has() -> None:
    graph = _graph()
    wrong = []
    for module in _kernel_modules(graph):
        for imported in graph.find_modules_directly_imported_by(module):
            top = imported.split(".")[0]
            if top == "lakeload":
                if not imported.startswith(EXECUTOR_SAFE):
                    wrong.append(f"{module} -> {imported}")
            elif top not in THIRD_PARTY and top not in sys.stdlib_module_names:
                wrong.append(f"{module} -> {imported}")
    assert wrong == []


def test_a_worker_importing_every_kernel_module_loads_nothing_driver_side() -> None:
    modules = _kernel_modules(_graph())
    tops = ("lakeload", *DRIVER_ONLY)
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + (
        f"print('\\n'.join(sorted(m for m in sys.modules if m.split('.')[0] in {tops!r})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert [m for m in loaded if not m.startswith("lakeload")] == []
    assert [m for m in loaded if m != "lakeload" and not m.startswith(EXECUTOR_SAFE)] == []


def test_only_kernel_functions_go_to_executors() -> None:
    from lakeload.kernel.load.copy import copy_files
    from lakeload.kernel.spark.warm import probe

    require_kernel(probe)
    require_kernel(functools.partial(functools.partial(copy_files, None), None))
    with pytest.raises(TypeError, match="not executor code"):
        require_kernel(lambda batches: batches)
    with pytest.raises(TypeError, match="test_kernel_boundary"):
        require_kernel(functools.partial(_driver_side, 1))


def test_run_tasks_refuses_a_function_outside_the_kernel(spark: object) -> None:
    from lakeload.kernel.spark.warm import probe
    from lakeload.spark.session import run_tasks

    with pytest.raises(TypeError, match="not executor code"):
        run_tasks(spark, _driver_side, 1, [1], "refused")  # type: ignore[arg-type]
    assert run_tasks(spark, probe, (3, 0.0), [1, 2], "probe") == [3, 6]  # type: ignore[arg-type]


def _driver_side(payload: int, item: int) -> int:
    return payload + item

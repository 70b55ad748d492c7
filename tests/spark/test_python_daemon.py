"""The Python daemon of local sessions: pyspark's own, from the installed package, and frozen modules in workers.

Spark puts `pyspark.zip`, py4j's zip and `spark-core`'s jar first on the workers' path; lakeload's daemon
(`lakeload.kernel.spark.daemon`) drops them when they are the installed package's own copies, so the workers
load pyspark with its compiled bytecode and pyspark's per-task `importlib.invalidate_caches()` does not re-read
the archives.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lakeload.kernel.spark.daemon import bundled_entries
from lakeload.spark import python_daemon
from lakeload.spark.python_daemon import DAEMON_KEY, DAEMON_MODULE, lakeload_installed, with_python_daemon


def installed_pyspark(site: Path) -> Path:
    """A site directory holding a `pyspark` package with Spark's archives inside it, as pip installs it."""
    home = site / "pyspark"
    (home / "python" / "lib").mkdir(parents=True)
    (home / "jars").mkdir()
    (home / "__init__.py").write_text("")
    (site / "py4j").mkdir()
    (site / "py4j" / "__init__.py").write_text("")
    for archive in ("python/lib/pyspark.zip", "python/lib/py4j-src.zip", "jars/spark-core.jar"):
        (home / archive).write_bytes(b"")
    return home


def test_the_installed_packages_own_archives_are_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = installed_pyspark(tmp_path / "site")
    monkeypatch.setenv("SPARK_HOME", str(home))
    archives = [str(home / "python/lib/pyspark.zip"), str(home / "python/lib/py4j-src.zip"), str(home / "jars/spark-core.jar")]
    path = ["", *archives, str(tmp_path / "elsewhere.zip"), str(tmp_path / "site")]
    assert bundled_entries(path) == archives


def test_a_spark_distribution_elsewhere_keeps_its_archives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    installed_pyspark(tmp_path / "site")
    distribution = installed_pyspark(tmp_path / "opt" / "spark")  # SPARK_HOME: a Spark download, not the package
    monkeypatch.setenv("SPARK_HOME", str(distribution))
    path = [str(distribution / "python/lib/pyspark.zip"), str(tmp_path / "site")]
    assert bundled_entries(path) == []


def test_without_an_installed_pyspark_or_py4j_nothing_is_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = installed_pyspark(tmp_path / "site")
    monkeypatch.setenv("SPARK_HOME", str(home))
    archives = [str(home / "python/lib/pyspark.zip"), str(home / "python/lib/py4j-src.zip")]
    assert bundled_entries(archives) == []  # only the archives could provide pyspark
    shutil.rmtree(tmp_path / "site" / "py4j")
    assert bundled_entries([*archives, str(tmp_path / "site")]) == []  # pyspark installed, py4j only in its zip


def test_local_sessions_of_this_interpreter_get_the_daemon(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(python_daemon, "lakeload_installed", lambda: True)
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    for master in ("local[*]", "local[2]", "local-cluster[2,1,1024]"):
        assert with_python_daemon(master, {"a": "b"}) == {"a": "b", DAEMON_KEY: DAEMON_MODULE}
    assert DAEMON_KEY not in with_python_daemon("spark://cluster:7077", {})  # executors elsewhere: pyspark's
    assert with_python_daemon("local[2]", {DAEMON_KEY: "my.daemon"})[DAEMON_KEY] == "my.daemon"
    assert DAEMON_KEY not in with_python_daemon("local[2]", {"spark.pyspark.python": "/other/venv/bin/python"})
    monkeypatch.setenv("PYSPARK_PYTHON", "/other/venv/bin/python")
    assert DAEMON_KEY not in with_python_daemon("local[2]", {})
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    assert DAEMON_KEY in with_python_daemon("local[2]", {})
    monkeypatch.setattr(python_daemon, "lakeload_installed", lambda: False)
    assert DAEMON_KEY not in with_python_daemon("local[2]", {})


def test_lakeload_found_only_through_sys_path_is_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> Any:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    assert not lakeload_installed()


def test_workers_load_pyspark_from_the_package_and_freeze_their_modules(spark: Any) -> None:
    def probe(_: Iterator[int]) -> Iterator[tuple[str, bool, bool, int]]:
        import gc
        import sys

        from lakeload.kernel.spark import runner as executor_runner

        executor_runner.task_runner(lambda payload, item: item, None, [0], None)(0)
        on_path = any("pyspark" in p and p.endswith((".zip", ".jar")) for p in sys.path)
        yield sys.modules["pyspark"].__file__ or "", on_path, executor_runner._FROZEN, gc.get_freeze_count()

    assert lakeload_installed()  # the test environment installs lakeload (editable)
    assert spark.conf.get(DAEMON_KEY) == DAEMON_MODULE
    for pyspark_file, archive_on_path, frozen, frozen_objects in spark.sparkContext.parallelize(range(2), 2).mapPartitions(probe).collect():
        assert ".zip" not in pyspark_file and pyspark_file.endswith("pyspark/__init__.py")
        assert not archive_on_path
        assert frozen and frozen_objects > 10_000  # pyspark's, pyarrow's, lakeload's: out of the cycle collector's walk

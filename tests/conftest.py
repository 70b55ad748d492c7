"""Shared fixtures: one real local Spark session per test process, isolated config and folders."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# real S3/Azure/GCS/SFTP servers on loopback, one local Spark Connect server, Iceberg REST catalogs (tests/servers/)
pytest_plugins = ["servers.fixtures", "servers.spark_connect", "servers.iceberg_rest"]

SPARK_MASTER = os.environ.get("LAKELOAD_TEST_SPARK_MASTER", "local[2]")
# A small run whose Spark session writes the JVM class-data archive (lakeload.spark.class_archive) at its exit
WARM_UP = """
import sys, lakeload
pipeline = lakeload.pipeline("warm_up", destination=lakeload.destinations.filesystem(sys.argv[1] + "/bucket"),
                             dataset_name="ds", pipelines_dir=sys.argv[1] + "/pipelines")
pipeline.run([{"id": 1, "tags": ["a"], "nested": {"x": 1.5}}], table_name="t", loader_file_format="parquet")
"""

# The JVMs the tests start (this process's, every child's and the Connect server's: spark-submit passes SPARK_SUBMIT_OPTS
# to the driver JVM it launches) compile with C1 only and collect with the serial GC: the tests' jobs are small, and
# on 2 cores C2's compiler threads were half of a fresh session's CPU (a start and two small jobs: 16.8 JVM CPU-s,
# 8.6 with C1 only, 7.5 with the serial GC too). The suite's own session ran tests/load and tests/normalize 6% faster
# so. A user's sessions keep the JVM's defaults.
JIT_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def pytest_configure(config: pytest.Config) -> None:
    """All test processes share one JVM class-data archive, written once before the tests start.

    Tests give every test its own HOME; the archive stays in the real user cache (`XDG_CACHE_HOME`), where
    lakeload keeps it for a user too, so the Spark sessions of the suite's child processes start from it.
    """
    import subprocess
    import sys
    import tempfile

    os.environ.setdefault("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache"))
    os.environ.setdefault("SPARK_SUBMIT_OPTS", JIT_OPTIONS)
    os.environ["SPARK__WARM"] = "false"  # no warm engine started by itself (lakeload.spark.warm_engine)
    from lakeload.spark.class_archive import class_archive

    archive = class_archive({})
    if archive is None or archive.part is None:  # written already (or no Java: the tests say so)
        return
    repo = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": repo, "SPARK__MASTER": "local[1]"}
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([sys.executable, "-c", WARM_UP, folder], env=env, cwd=folder, capture_output=True, timeout=600)


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """The one Spark session of this test process (lakeload's pipelines pick it up as the active one)."""
    from lakeload.spark.session import get_spark

    session = get_spark(SPARK_MASTER, {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"})
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def isolated_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No lakeload/dlt env vars, TOML files or values set in code (`lakeload.config[...] = v`) leak into a test."""
    from lakeload.config import memory

    for name in list(os.environ):
        upper = name.upper()
        if upper.startswith(("DESTINATION__", "NORMALIZE__", "DATA_WRITER__", "RUNTIME__", "SPARK__", "EXTRACT__", "SOURCES__",
                             "SCHEMA__", "LOAD__")) or (
            "__DESTINATION__" in upper or "__SOURCES__" in upper
        ):
            monkeypatch.delenv(name, raising=False)
    # the suite runs Spark in its processes: no warm engine started by itself (tests of it turn it on)
    monkeypatch.setenv("SPARK__WARM", "false")
    memory.clear()
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture(autouse=True)
def declared_config_keys() -> Iterator[None]:
    """Every key lakeload's resolver looks up must be declared in `lakeload.config.known_keys`: the typo
    warnings compare configuration files and environment variables against that registry."""
    yield
    from lakeload.config.known_keys import unregistered_lookups

    missing = sorted(unregistered_lookups(clear=True))
    assert not missing, f"resolve() looked up keys not declared in lakeload/config/known_keys.py root(): {missing}"


@pytest.fixture
def bucket(tmp_path: Path) -> Path:
    path = tmp_path / "bucket"
    path.mkdir()
    return path


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's temporary folder as the working directory (where dlt's defaults put a DuckDB file)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def pipelines_dir(tmp_path: Path) -> Path:
    return tmp_path / "pipelines"


@pytest.fixture(params=["local", "s3"])
def bucket_kind(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """A local folder or a fresh prefix on the S3 test server (see `servers.buckets.Bucket`)."""
    from servers.buckets import Bucket

    if request.param == "local":
        url = str(tmp_path / "bucket")
        return Bucket(url, None, {"DESTINATION__FILESYSTEM__BUCKET_URL": url})
    from servers.fixtures import fresh_prefix

    s3 = request.getfixturevalue("s3_server")
    url = s3.url(fresh_prefix("cli"))
    env = {"DESTINATION__FILESYSTEM__BUCKET_URL": url, **s3.credential_env("DESTINATION__FILESYSTEM__CREDENTIALS")}
    return Bucket(url, s3.credentials(), env)


@pytest.fixture
def other_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder (not yet created) on a file system other than `tmp_path`'s: no hard link reaches it."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev or not os.access(shm, os.W_OK):
        pytest.skip("needs a writable file system other than the temporary folder's")
    folder = Path(os.path.realpath(shm)) / f"lakeload-test-{os.getpid()}"
    yield folder
    shutil.rmtree(folder, ignore_errors=True)

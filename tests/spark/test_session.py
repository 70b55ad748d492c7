"""Java checks give an error that says exactly how to install Java, and the JVM's launch overlaps the start's
imports (no Spark started here)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lakeload.errors import SparkSetupError
from lakeload.spark.java import check_java, java_version
from lakeload.spark.pandas_warning import PANDAS_WARNING

LAUNCH_CHILD = textwrap.dedent("""
    import sys, time
    from lakeload.spark import jvm_stderr, session

    def launch(app_name, master, conf):  # stands in for the JVM's boot: returns once the imports have begun
        deadline = time.monotonic() + 60
        while "pyspark.testing.utils" not in sys.modules:
            assert time.monotonic() < deadline, "the start's imports did not run while the JVM booted"
            time.sleep(0.005)
        return "gateway"

    assert "pandas" not in sys.modules
    jvm_stderr.launch_gateway = launch
    assert session._launch("local[1]", {}) == "gateway"
    assert "pandas" in sys.modules and sys.modules["pyspark.testing.utils"].have_numpy  # complete on return
    print("launched")
""")


def fake_java(folder: Path, version_line: str) -> Path:
    java = folder / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(0o755)
    return java


def test_missing_java_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(SparkSetupError, match="apt-get install -y openjdk-17-jre-headless"):
        check_java()


def test_old_java_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    java = fake_java(tmp_path / "jdk11", 'openjdk version "11.0.2" 2019-01-15')
    assert java_version(str(java)) == 11
    assert java_version(str(fake_java(tmp_path / "jdk8", 'java version "1.8.0_292"'))) == 8
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk11"))
    with pytest.raises(SparkSetupError, match="Java 11"):
        check_java()


def test_java_17_is_accepted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_java(tmp_path / "jdk17", 'openjdk version "17.0.15" 2025-04-15')
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk17"))
    assert check_java().endswith("jdk17/bin/java")


def test_the_contexts_imports_run_while_the_jvm_boots(tmp_path: Path) -> None:
    """PySpark's start imports pandas (its version check, ~0.5 s) at its first call into the JVM; lakeload does it
    in a thread during the JVM's boot, when the driver would only wait, and silenced as before."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    result = subprocess.run([sys.executable, "-c", LAUNCH_CHILD], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "launched"
    assert PANDAS_WARNING not in result.stderr

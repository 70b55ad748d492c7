"""Java checks give an error that says exactly how to install Java (no Spark started here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakeload.errors import SparkSetupError
from lakeload.spark.session import check_java, java_version


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

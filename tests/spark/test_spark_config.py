"""Spark settings from TOML and env, their precedence, and what a session gets (no new session in this process)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lakeload.errors import ConfigurationError
from lakeload.spark import settings as spark_settings
from lakeload.spark.settings import (
    SparkSettings,
    default_conf,
    key_from_env,
    resolve_spark_settings,
    session_conf,
    with_lazy_jit,
)

CHILD = Path(__file__).with_name("spark_config_child.py")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture(autouse=True)
def fresh_warnings() -> Iterator[None]:
    spark_settings._warned.clear()
    yield
    spark_settings._warned.clear()


def test_toml_tables_merge_key_by_key_most_specific_first() -> None:
    write(Path.home() / ".lakeload" / "config.toml", '[spark.conf]\n"spark.executor.cores" = 3\n"spark.executor.memory" = "1g"\n')
    write(Path(".lakeload/config.toml"),
          '[spark.conf]\n"spark.executor.memory" = "2g"\n"spark.sql.shuffle.partitions" = 8\n'
          "spark.sql.adaptive.enabled = false\n"  # unquoted dotted key: nested tables, joined back
          '[p1.spark.conf]\n"spark.sql.shuffle.partitions" = 16\n')
    write(Path(".lakeload/secrets.toml"), '[spark.conf]\n"spark.authenticate.secret" = "s3cr3t"\n')
    resolved = resolve_spark_settings("p1", environ={})
    assert resolved.conf == {
        "spark.sql.shuffle.partitions": "16", "spark.authenticate.secret": "s3cr3t", "spark.executor.memory": "2g",
        "spark.sql.adaptive.enabled": "false", "spark.executor.cores": "3",
    }
    assert resolved.sources["spark.sql.shuffle.partitions"].endswith(".lakeload/config.toml [p1.spark.conf]")
    assert resolved.sources["spark.executor.cores"].endswith("home/.lakeload/config.toml [spark.conf]")
    assert resolve_spark_settings("other", environ={}).conf["spark.sql.shuffle.partitions"] == "8"


def test_env_beats_toml_and_a_single_key_beats_the_json_object() -> None:
    write(Path(".lakeload/config.toml"), '[spark]\nmaster = "local[3]"\n[spark.conf]\n"spark.executor.memory" = "2g"\n')
    env = {
        "SPARK__CONF": '{"spark.executor.memory": "4g", "spark.sql.shuffle.partitions": 4, "spark.hadoop.fs.x.y": "z"}',
        "SPARK__CONF__SPARK__SQL__SHUFFLE__PARTITIONS": "5",
        "P1__SPARK__CONF__SPARK__EXECUTOR__MEMORYOVERHEAD": "1g",
        "SPARK__MASTER": "local[2]",
    }
    resolved = resolve_spark_settings("p1", environ=env)
    assert resolved.conf == {
        "spark.executor.memoryOverhead": "1g", "spark.sql.shuffle.partitions": "5", "spark.executor.memory": "4g",
        "spark.hadoop.fs.x.y": "z",
    }
    assert resolved.sources["spark.executor.memoryOverhead"] == "environment variable P1__SPARK__CONF__SPARK__EXECUTOR__MEMORYOVERHEAD"
    assert resolved.sources["spark.executor.memory"] == "environment variable SPARK__CONF"
    assert (resolved.master, resolved.master_source) == ("local[2]", "environment variable SPARK__MASTER")
    assert resolve_spark_settings("p1", environ={}).master == "local[3]"


def test_env_names_take_sparks_spelling_or_fail_with_the_fix() -> None:
    assert key_from_env("X", "SPARK__SQL__SESSION__TIMEZONE") == "spark.sql.session.timeZone"
    assert key_from_env("X", "SPARK__SQL__CATALOG__SPARK_CATALOG") == "spark.sql.catalog.spark_catalog"
    with pytest.raises(ConfigurationError, match=r"SPARK__CONF__SPARK__HADOOP__FS__S3A__ENDPOINT does not name.*SPARK__CONF="):
        resolve_spark_settings(environ={"SPARK__CONF__SPARK__HADOOP__FS__S3A__ENDPOINT": "http://x"})
    with pytest.raises(ConfigurationError, match="must be a JSON object of Spark settings"):
        resolve_spark_settings(environ={"SPARK__CONF": "spark.executor.memory=2g"})
    with pytest.raises(ConfigurationError, match="Spark settings are strings, numbers or booleans"):
        resolve_spark_settings(environ={"SPARK__CONF": '{"spark.jars": ["a.jar"]}'})


def test_master_key_wins_over_spark_master_in_conf() -> None:
    write(Path(".lakeload/config.toml"), '[spark.conf]\n"spark.master" = "local[1]"\n')
    assert resolve_spark_settings(environ={}) == SparkSettings(
        "local[1]", f"{os.path.abspath('.lakeload/config.toml')} [spark.conf]", {}, {})
    resolved = resolve_spark_settings(environ={"SPARK__MASTER": "local[2]"})
    assert resolved.master == "local[2]" and "spark.master" not in resolved.conf


def test_new_session_settings_precedence(caplog: pytest.LogCaptureFixture) -> None:
    configured = SparkSettings(conf={"spark.ui.enabled": "true", "spark.sql.shuffle.partitions": "8",
                                     "spark.executor.memory": "2g", "spark.sql.session.timeZone": "Europe/Berlin"})
    with caplog.at_level(logging.WARNING, "lakeload.spark"):
        conf = session_conf(configured, {"spark.executor.memory": "3g"}, {"spark.sql.shuffle.partitions": "3"})
    assert conf["spark.ui.enabled"] == "true"  # configured beats lakeload's default
    assert conf["spark.ui.showConsoleProgress"] == "false"  # default kept
    assert conf["spark.executor.memory"] == "3g"  # get_spark(conf=...) beats configured
    assert conf["spark.sql.shuffle.partitions"] == "3"  # spark-submit's beats everything
    assert conf["spark.sql.session.timeZone"] == "UTC" and "'Europe/Berlin' is ignored" in caplog.text


def test_active_session_is_used_as_is_with_one_warning(
    spark: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from lakeload.spark.session import get_spark, session_for

    monkeypatch.setenv("SPARK__MASTER", "spark://elsewhere:7077")
    monkeypatch.setenv("SPARK__CONF", '{"spark.sql.shuffle.partitions": "7", "spark.default.parallelism": "2"}')
    with caplog.at_level(logging.WARNING, "lakeload.spark"):
        assert get_spark(pipeline_name="p") is spark
        assert session_for("p", spark) is spark
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and warnings[0].endswith(
        "so these configured ones are ignored: spark.master, spark.sql.shuffle.partitions. "
        "Set them where that session is created, or let lakeload start the session.")
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"  # a running session is never changed


def run_child(tmp_path: Path, env: dict[str, str], *command: str) -> dict[str, Any]:
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith(("SPARK__", "PYSPARK_"))}
    done = subprocess.run([*command, str(CHILD)], env={**clean, "HOME": str(tmp_path / "home"), "SPARK__WARM": "false", **env},
                          cwd=tmp_path / "cwd", capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["log"] = done.stdout + done.stderr  # under spark-submit, the driver's Python stderr arrives on stdout
    return result


def test_started_session_has_the_configured_settings(tmp_path: Path) -> None:
    """One Spark session per process: the session is started in a child process, which reads the values back."""
    python = tmp_path / "worker-python"
    python.write_text(f"#!/bin/sh\nexport LAKELOAD_TEST_WORKER=wrapper\nexec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    write(tmp_path / "cwd" / ".lakeload" / "config.toml",
          f'[spark]\nmaster = "local[2]"\n[spark.conf]\n"spark.sql.shuffle.partitions" = 8\n'
          f'"spark.pyspark.python" = "{python}"\n"spark.sql.session.timeZone" = "Europe/Berlin"\n'
          '[child.spark.conf]\n"spark.executor.memory" = "600m"\n')
    env = {"SPARK__CONF__SPARK__SQL__ADAPTIVE__COALESCEPARTITIONS__ENABLED": "false",
           "SPARK__CONF": '{"spark.sql.shuffle.partitions": "6"}',
           "SPARK__CONF__SPARK__DRIVER__EXTRAJAVAOPTIONS": "-Dlakeload.test.option=kept -XX:Tier4BackEdgeThreshold=60000"}
    result = run_child(tmp_path, env, sys.executable)
    assert result["master"] == "local[2]"
    assert result["conf"] == {
        "spark.sql.shuffle.partitions": "6", "spark.executor.memory": "600m",
        "spark.sql.adaptive.coalescePartitions.enabled": "false", "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
    }
    assert result["worker"] == "wrapper"  # executors run the configured spark.pyspark.python
    assert "'Europe/Berlin' is ignored" in result["log"]
    assert result["java_property"] == "kept"  # the user's Java options are added to lakeload's
    assert result["tier4_invocations"] == "100000"  # a local session's JVM optimizes only code that stays hot
    assert result["tier4_back_edges"] == "60000"  # ... and a configured Java option wins over lakeload's
    assert "log4j" not in result["log"]  # ... which keep Spark's own log in its file, off the console


def test_configured_java_options_follow_lakeloads() -> None:
    configured = SparkSettings(conf={"spark.executor.extraJavaOptions": "-XX:+UseG1GC"}, log_file="/logs/spark.log")
    conf = session_conf(configured, {"spark.driver.extraJavaOptions": "-Da=b"})
    for key, extra in (("spark.driver.extraJavaOptions", "-Da=b"), ("spark.executor.extraJavaOptions", "-XX:+UseG1GC")):
        assert conf[key].startswith("-Dlog4j2.configurationFile=file:") and conf[key].endswith(
            f"-Dlakeload.spark.log=/logs/spark.log {extra}")
    assert session_conf(SparkSettings(log_file="/logs/spark.log")) == default_conf("/logs/spark.log") | {
        "spark.sql.session.timeZone": "UTC"}


def test_lazy_jit_is_for_local_sessions_unless_turned_off() -> None:
    assert spark_settings.LAZY_JIT_OPTIONS in with_lazy_jit("local", {})["spark.driver.extraJavaOptions"]
    assert with_lazy_jit("local[2]", {"spark.driver.extraJavaOptions": "-Da=b"})["spark.driver.extraJavaOptions"] == (
        f"{spark_settings.LAZY_JIT_OPTIONS} -Da=b")  # the configured options come last: theirs win
    for master in ("local-cluster[2,1,1024]", "spark://host:7077", "yarn"):  # the tasks run in other JVMs
        assert with_lazy_jit(master, {"a": "b"}) == {"a": "b"}
    assert with_lazy_jit("local[2]", {"a": "b"}, enabled=False) == {"a": "b"}  # `[spark] lazy_jit = false`
    assert resolve_spark_settings(environ={}).lazy_jit
    assert not resolve_spark_settings(environ={"SPARK__LAZY_JIT": "false"}).lazy_jit


def test_spark_submit_settings_win(tmp_path: Path) -> None:
    env = {"SPARK__MASTER": "local[2]", "SPARK__CONF__SPARK__SQL__SHUFFLE__PARTITIONS": "7",
           "SPARK__CONF__SPARK__EXECUTOR__MEMORY": "600m", "SPARK_LOCAL_IP": "127.0.0.1"}
    submit = os.path.join(os.path.dirname(sys.executable), "spark-submit")
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    result = run_child(tmp_path, env, submit, "--master", "local[1]", "--conf", "spark.sql.shuffle.partitions=3")
    assert result["master"] == "local[1]"
    assert result["conf"]["spark.sql.shuffle.partitions"] == "3"
    assert result["conf"]["spark.executor.memory"] == "600m"  # configured, not given to spark-submit
    assert "ignored: spark.master, spark.sql.shuffle.partitions." in result["log"]
    assert result["tier4_invocations"] == "5000"  # spark-submit started the JVM: HotSpot's default

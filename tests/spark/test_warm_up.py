"""Spark readied while `run()` extracts (lakeload/spark/warm_up.py): the session started in the background and
its Python workers warmed by one task per core, once per session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.spark import warm_up

CHILD = Path(__file__).with_name("warm_up_child.py")


def _child(tmp_path: Path, wait_s: float, **env: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(CHILD), str(tmp_path / "bucket"), str(tmp_path / "pipes"), str(wait_s)],
                          env={**os.environ, "PYSPARK_PYTHON": sys.executable, **env}, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.slow  # a child process that starts its own Spark
def test_run_starts_spark_and_warms_its_workers_while_the_generator_runs(tmp_path: Path) -> None:
    result = _child(tmp_path, 180)
    assert result == {"session_during_extract": True, "warmed_during_extract": True,
                      "row_counts": {"items": 5, "items__tags": 11}}


@pytest.mark.slow  # a child process that starts its own Spark
def test_warm_up_false_leaves_spark_to_normalize(tmp_path: Path) -> None:
    result = _child(tmp_path, 4, SPARK__WARM_UP="false")
    assert result == {"session_during_extract": False, "warmed_during_extract": False,
                      "row_counts": {"items": 5, "items__tags": 11}}


def test_workers_are_warmed_once_per_session(spark: Any) -> None:
    warm_up._warmed.discard(warm_up._session_key(spark))
    assert warm_up.warm_workers(spark) is True
    assert warm_up.warm_workers(spark) is False


def test_extract_alone_warms_only_a_session_already_there(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[object] = []
    monkeypatch.setattr(warm_up, "WarmUp", lambda session, daemon: started.append(session))
    pipeline = lakeload.pipeline("warm_extract", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                                 pipelines_dir=str(tmp_path / "pipes"), spark=spark)
    pipeline.extract([{"id": 1}], table_name="items")
    assert len(started) == 1  # the session given to the pipeline
    monkeypatch.setattr("pyspark.sql.SparkSession.getActiveSession", staticmethod(lambda: None))
    bare = lakeload.pipeline("warm_bare", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                             pipelines_dir=str(tmp_path / "pipes"))
    bare.extract([{"id": 1}], table_name="items")
    assert len(started) == 1  # no session anywhere: extract alone starts none
    monkeypatch.setenv("SPARK__WARM_UP", "false")
    again = lakeload.pipeline("warm_off", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                              pipelines_dir=str(tmp_path / "pipes"), spark=spark)
    again.extract([{"id": 1}], table_name="items")
    assert len(started) == 1

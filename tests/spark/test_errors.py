"""Spark failures reach the user as lakeload errors in one line, chained, and Spark's error log stays off the console."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.errors import (
    ExtractError,
    LoadError,
    NormalizeError,
    PipelineStepFailed,
)
from lakeload.spark.errors import is_spark_error, spark_errors, summarize

pytestmark = pytest.mark.usefixtures("spark")
REPO = Path(__file__).resolve().parents[2]


def test_summaries_are_one_line(spark: Any) -> None:
    from pyspark.errors import AnalysisException, PythonException

    with pytest.raises(AnalysisException) as analysis:
        spark.range(2).select("nope").collect()
    line = summarize(analysis.value)
    assert line.startswith("[UNRESOLVED_COLUMN") and "`nope`" in line and "\n" not in line and "SQLSTATE" not in line
    def _boom(batches: Any) -> Any:  # local: pickled by value for the Python workers
        for batch in batches:
            raise ValueError("boom in the task")
            yield batch

    frame = spark.range(2)
    with pytest.raises(PythonException) as python:
        frame.mapInArrow(_boom, frame.schema).collect()
    assert summarize(python.value) == "ValueError: boom in the task"
    assert is_spark_error(python.value) and not is_spark_error(ValueError("x"))


def test_spark_errors_wraps_and_chains(spark: Any) -> None:
    expected = r"^Writing t failed in Spark: \[UNRESOLVED_COLUMN.*Retry later\.$"
    with pytest.raises(LoadError, match=expected) as failed, spark_errors(LoadError, "Writing t", "Retry later."):
        spark.range(2).select("nope").collect()
    assert is_spark_error(failed.value.__cause__)
    with pytest.raises(NormalizeError, match="mine"), spark_errors(LoadError, "x"):
        raise NormalizeError("mine")  # lakeload's own errors pass through unchanged


def _pipeline(tmp_path: Path, name: str = "errs", **kwargs: Any) -> lakeload.Pipeline:
    destination = kwargs.pop("destination", None) or lakeload.destinations.filesystem(bucket_url=str(tmp_path / "bucket"))
    return lakeload.pipeline(name, destination=destination, dataset_name="ds", pipelines_dir=str(tmp_path / "pipelines"), **kwargs)


def test_a_failing_frame_is_an_extract_error_in_one_line(tmp_path: Path, spark: Any) -> None:
    from pyspark.sql import functions as F

    divide = F.udf(lambda x: 1 // (x - x), "long")
    p = _pipeline(tmp_path)
    with pytest.raises(PipelineStepFailed) as failed:
        p.run(spark.range(3).select(divide("id").alias("v")), table_name="t")
    assert isinstance(failed.value, ExtractError) and failed.value.step == "extract"
    assert "ZeroDivisionError: integer division or modulo by zero" in str(failed.value)
    assert "\tat org.apache" not in str(failed.value) and len(str(failed.value).splitlines()) == 1
    assert isinstance(failed.value.__cause__, ExtractError) and is_spark_error(failed.value.__cause__.__cause__)
    assert p.run([{"id": 1}], table_name="t").row_counts == {"t": 1}  # nothing pending blocks the next run


def test_a_failed_load_is_a_load_error_naming_the_package_and_how_to_drop_it(tmp_path: Path) -> None:
    bucket = tmp_path / "bucket"
    p = _pipeline(tmp_path, destination=lakeload.destinations.filesystem(bucket_url=str(bucket)))
    p.extract([{"id": 1}], table_name="t")
    p.normalize()
    bucket.write_text("the bucket became a file after normalize")
    with pytest.raises(PipelineStepFailed) as failed:
        p.load()
    error = failed.value
    assert isinstance(error, LoadError) and not isinstance(error, NormalizeError) and error.step == "load"
    assert error.load_id and f"Load package {error.load_id} stays pending" in str(error)
    assert "pipeline.drop_pending_packages()" in str(error) and "lakeload pipeline errs drop-pending-packages" in str(error)
    with pytest.raises(LoadError):  # the same package fails the same way again...
        p.load()
    p.drop_pending_packages()  # ...until it is dropped
    bucket.unlink()
    assert p.run([{"id": 2}], table_name="t").row_counts == {"t": 1}


CHILD = textwrap.dedent(
    """
    import json, sys
    import lakeload
    from lakeload.spark.session import get_spark
    from pyspark.sql import functions as F

    spark = get_spark("local[1]")
    p = lakeload.pipeline("noisy", destination=lakeload.destinations.filesystem(bucket_url=sys.argv[1] + "/bucket"),
                          dataset_name="ds", pipelines_dir=sys.argv[1] + "/pipelines")
    divide = F.udf(lambda x: 1 // (x - x), "long")
    outcome = {}
    try:
        p.run(spark.range(3).select(divide("id").alias("v")), table_name="t")
    except lakeload.LakeloadError as exc:
        outcome["error"] = [type(exc).__name__, str(exc)]
    try:
        spark.range(2).select("nope").collect()
    except Exception as exc:
        outcome["analysis"] = type(exc).__name__
    print(json.dumps(outcome))
    """
)


@pytest.mark.slow
def test_spark_error_logs_go_to_the_log_file_not_the_console(tmp_path: Path) -> None:
    log_file = tmp_path / "logs" / "spark.log"
    env = {**os.environ, "SPARK__LOG_FILE": str(log_file), "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, env=env,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["error"][0] == "ExtractStepFailed" and "ZeroDivisionError" in outcome["error"][1]
    assert outcome["analysis"] == "AnalysisException"
    for noise in ("ERROR Executor", "DataFrameQueryContextLogger", "Traceback", "org.apache.spark"):
        assert noise not in done.stderr, done.stderr[-3000:]
    logged = log_file.read_text()
    assert "ERROR Executor" in logged and "DataFrameQueryContextLogger" in logged

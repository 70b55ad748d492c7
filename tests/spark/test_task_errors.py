"""A `lakeload.errors` class raised inside a Spark task reaches the driver as that class (rebuilt by name, with its
message and attributes), not as the step's generic error: `except DamagedPackageFileError` around a load whose
copy task found a damaged file, `except SchemaError` around a run whose normalize task met a 65-bit integer."""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakeload
from lakeload.errors import (
    DamagedPackageFileError,
    IntegerOutOfRangeError,
    LoadError,
    NormalizeError,
    NormalizeStepFailed,
    PipelineStepFailed,
    SchemaError,
)
from lakeload.kernel.filesystem.layout import Layout
from lakeload.kernel.load.copy import CopyPayload, copy_files
from lakeload.spark.session import run_tasks

pytestmark = pytest.mark.usefixtures("spark")
LOAD_ID = "1795923201.5"


def test_a_copy_task_finding_a_damaged_file_raises_damaged_package_file_error_on_the_driver(
    spark: Any, tmp_path: Path
) -> None:
    package_dir = tmp_path / "normalized"
    package_dir.mkdir()
    pq.write_table(pa.table({"n": list(range(50))}), package_dir / "users.parquet")
    entry = {"path": "users.parquet", "table": "users", "file_id": "0000000001", "ext": "parquet", "rows": 50,
             "bytes": (package_dir / "users.parquet").stat().st_size}
    os.truncate(package_dir / "users.parquet", entry["bytes"] // 2)
    payload = CopyPayload(
        bucket_url=(tmp_path / "bucket").as_uri(), fs_kwargs={}, dataset_path=str(tmp_path / "bucket" / "ds"),
        package_dir=str(package_dir), layout=Layout.parse(), schema_name="events", load_id=LOAD_ID,
        package_timestamp="2026-11-29T03:00:00+00:00", is_local=True,
    )
    with pytest.raises(DamagedPackageFileError) as failed:  # a real Spark task (a Python worker) raised it
        run_tasks(spark, copy_files, payload, [[entry]], "lakeload load 1: copy files", error=LoadError)
    error = failed.value
    assert isinstance(error, LoadError) and type(error) is DamagedPackageFileError
    assert (error.path, error.table, error.load_id) == (str(package_dir / "users.parquet"), "users", LOAD_ID)
    assert str(error).startswith(f"lakeload load 1: copy files: Package file {package_dir / 'users.parquet'}")
    assert "drop_pending_packages()" in str(error)
    assert not (tmp_path / "bucket" / "ds").exists()


def test_a_normalize_tasks_integer_out_of_range_is_caught_as_schema_error(tmp_path: Path, pipelines_dir: Path) -> None:
    p = lakeload.pipeline("big_ints", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                          dataset_name="ds", pipelines_dir=str(pipelines_dir))
    with pytest.raises(SchemaError) as failed:
        p.run([{"id": 1, "big": 2**64 - 1}], table_name="t", loader_file_format="parquet")
    error = failed.value
    assert isinstance(error, IntegerOutOfRangeError) and isinstance(error, NormalizeStepFailed)
    assert isinstance(error, NormalizeError) and isinstance(error, PipelineStepFailed) and error.step == "normalize"
    assert (error.table_name, error.column_name) == ("t", "big")
    cause = error.__cause__
    assert type(cause) is IntegerOutOfRangeError and str(cause).startswith("lakeload normalize")  # from the task
    assert "Table `t`, column `big`" in str(error) and 'columns={"big": {"data_type": "decimal"}}' in str(error)
    again = pickle.loads(pickle.dumps(error))
    assert isinstance(again, IntegerOutOfRangeError) and again.column_name == "big"


def test_only_lakeload_error_classes_are_rebuilt() -> None:
    from lakeload.spark.errors import task_error

    task = {"error": "X: boom", "lakeload_message": "boom", "lakeload_attributes": {"path": "p"}}
    for name in ("PipelineStepFailed", "LoadStepFailed", "Exception", "annotations", "NoSuchError", None):
        error = task_error({**task, "lakeload_error": name}, "lakeload load 1", LoadError)
        assert type(error) is LoadError and str(error) == "lakeload load 1: X: boom"
    error = task_error({"error": "ValueError: bad", "error_type": "ValueError"}, "lakeload normalize 1", NormalizeError)
    assert type(error) is NormalizeError and str(error) == "lakeload normalize 1: ValueError: bad"

"""`PackageInfo.completed_at` and `Pipeline.activate()`/`deactivate()`/`is_active` (issue 36), side by side with
dlt 1.31: the same script runs with each and what it observes is compared."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import dlt
import pytest

import lakeload

pytestmark = pytest.mark.usefixtures("spark")


def completed_script(lib: Any, root: Path) -> dict[str, Any]:
    p = lib.pipeline("done", destination=lib.destinations.filesystem(str(root / "bucket")),
                     pipelines_dir=str(root / "pipelines"), dataset_name="ds")
    before = dt.datetime.now(dt.timezone.utc)
    info = p.run([{"id": 1}], table_name="users")
    after = dt.datetime.now(dt.timezone.utc)
    package = info.load_packages[0]
    stored = p.get_load_package_info(package.load_id)
    p.extract([{"id": 2}], table_name="users")
    extracted = p.get_load_package_info(p.list_extracted_load_packages()[0])
    jobs = package.jobs["completed_jobs"]
    return {
        "is_datetime": isinstance(package.completed_at, dt.datetime),
        "within_run": before - dt.timedelta(seconds=1) <= package.completed_at <= after + dt.timedelta(seconds=1),
        "stored_same": abs((stored.completed_at - package.completed_at).total_seconds()) < 1,
        "extracted": extracted.completed_at,
        "tables": sorted(j.job_file_info.table_name for j in jobs if not j.job_file_info.table_name.startswith("_dlt")),
        "formats": sorted({j.job_file_info.file_format for j in jobs}),
        "file_ids": all(isinstance(j.job_file_info.file_id, str) and j.job_file_info.file_id for j in jobs),
        "normalized": {k: v for k, v in p.last_trace.last_normalize_info.row_counts.items() if not k.startswith("_dlt")},
    }


def test_completed_at_as_dlt(tmp_path: Path) -> None:
    theirs = completed_script(dlt, tmp_path / "dlt")
    ours = completed_script(lakeload, tmp_path / "lakeload")
    assert ours == theirs
    assert ours["within_run"] and ours["extracted"] is None


def activation_script(lib: Any, root: Path) -> dict[str, Any]:
    def make(name: str) -> Any:
        return lib.pipeline(name, destination=lib.destinations.filesystem(str(root / "bucket")),
                            pipelines_dir=str(root / "pipelines"), dataset_name=name)

    first, second = make("first"), make("second")
    seen: dict[str, Any] = {"created_last": [first.is_active, second.is_active]}
    first.activate()
    seen["activated"] = [first.is_active, second.is_active, lib.current.pipeline() is first]
    try:
        second.deactivate()
    except Exception as exc:  # noqa: BLE001 - the class name is compared
        seen["not_active"] = type(exc).__name__
    first.deactivate()
    seen["deactivated"] = [first.is_active, second.is_active]
    second.run([{"id": 1}], table_name="t")  # running activates
    seen["after_run"] = [first.is_active, second.is_active, lib.current.pipeline() is second]
    return seen


def test_activate_deactivate_as_dlt(tmp_path: Path) -> None:
    theirs = activation_script(dlt, tmp_path / "dlt")
    ours = activation_script(lakeload, tmp_path / "lakeload")
    assert ours == theirs
    assert ours["not_active"] == "PipelineNotActive"


def test_deactivated_current_pipeline_is_a_new_default_one(tmp_path: Path) -> None:
    p = lakeload.pipeline("gone", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                          pipelines_dir=str(tmp_path / "pipelines"))
    p.deactivate()
    assert not p.is_active
    with pytest.raises(lakeload.errors.PipelineNotActive, match="'gone' is not active"):
        p.deactivate()
    assert lakeload.current.pipeline() is not p

"""Load info, packages and the run's trace side by side with dlt 1.31 (issue 32): `package.schema_update` (dlt's
documented schema-change alert), jobs as objects with `job_file_info`, and `last_trace`'s steps and infos."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import lakeload

pytestmark = pytest.mark.usefixtures("spark")

FIRST = [{"id": 1, "name": "a", "pets": [{"kind": "cat"}]}]
SECOND = [{"id": 2, "name": "b", "age": 3, "pets": [{"kind": "dog", "legs": 4}]}]
THIRD = [{"id": 3, "name": "c"}]


def data_tables(tables: dict[str, Any]) -> dict[str, Any]:
    return {name: table for name, table in tables.items() if not name.startswith("_dlt")}


def schema_alerts(info: Any) -> dict[str, dict[str, str]]:
    """dlt's documented loop over `package.schema_update`: new/changed columns per table, with their types."""
    alerts: dict[str, dict[str, str]] = {}
    for package in info.load_packages:
        for table_name, table in data_tables(package.schema_update).items():
            for column_name, column in table["columns"].items():
                alerts.setdefault(table_name, {})[column_name] = column["data_type"]
    return alerts


def jobs_seen(info: Any) -> list[tuple[Any, ...]]:
    """What a dlt script reads of each completed job."""
    seen = []
    for package in info.load_packages:
        for job in package.jobs["completed_jobs"]:
            file_info = job.job_file_info
            if file_info.table_name.startswith("_dlt"):
                continue
            seen.append((job.state, file_info.table_name, file_info.file_format, file_info.is_compressed,
                         file_info.retry_count, job.failed_message, job.file_size > 0, job.elapsed >= 0,
                         job.created_at is not None, bool(job.file_path)))
    return sorted(seen)


def script(lib: Any, root: Path) -> dict[str, Any]:
    p = lib.pipeline("alerts", destination=lib.destinations.filesystem(str(root / "bucket")),
                     pipelines_dir=str(root / "pipelines"), dataset_name="ds")
    seen: dict[str, Any] = {}
    for label, rows in (("first", FIRST), ("second", SECOND), ("third", THIRD)):
        info = p.run(rows, table_name="users")
        trace = p.last_trace
        seen[label] = {
            "alerts": schema_alerts(info),
            "jobs": jobs_seen(info),
            "steps": [s.step for s in trace.steps],
            "last_load_info": trace.last_load_info is info,
            "normalized": data_tables(trace.last_normalize_info.row_counts),
            "normalize_loads_ids": trace.last_normalize_info.loads_ids == info.loads_ids,
            "extract_loads_ids": trace.last_extract_info.loads_ids == info.loads_ids,
        }
    return seen


def test_packages_jobs_and_trace_as_dlt(tmp_path: Path) -> None:
    import dlt

    ours = script(lakeload, tmp_path / "lakeload")
    assert ours == script(dlt, tmp_path / "dlt")
    assert ours["second"]["alerts"] == {"users": {"age": "bigint"}, "users__pets": {"legs": "bigint"}}
    assert ours["third"]["alerts"] == {} and ours["first"]["steps"] == ["extract", "normalize", "load", "run"]


def test_jobs_keep_dict_access(tmp_path: Path) -> None:
    """Scripts that read lakeload's file keys of a job (`job["table"]`) keep working beside dlt's fields."""
    p = lakeload.pipeline("dicts", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                          pipelines_dir=str(tmp_path / "pipelines"), dataset_name="ds")
    package = p.run(FIRST, table_name="users").load_packages[0]
    jobs = package.jobs["completed_jobs"]
    assert sorted(job["table"] for job in jobs) == ["users", "users__pets"]
    assert all(job["path"] == job.file_path and job["bytes"] == job.file_size and job[0] == "completed_jobs"
               for job in jobs)
    loaded = p.get_load_package_info(package.load_id)
    assert loaded.schema_update == package.schema_update and "users__pets" in loaded.schema_update

"""A load into a local bucket beside the package links the files on the driver; elsewhere Spark tasks copy them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.load import plain_format

pytestmark = pytest.mark.usefixtures("spark")

USERS = [{"id": i, "name": f"user {i}", "pets": [{"name": f"pet {i}"}]} for i in range(5)]


@pytest.fixture
def copy_jobs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many files each `run_tasks` call of the plain format handed to Spark tasks."""
    jobs: list[int] = []
    real = plain_format.run_tasks

    def counting(spark: Any, task: Any, payload: Any, items: list[Any], *args: Any, **kwargs: Any) -> Any:
        jobs.append(sum(len(chunk) for chunk in items))
        return real(spark, task, payload, items, *args, **kwargs)

    monkeypatch.setattr(plain_format, "run_tasks", counting)
    return jobs


def run_and_read(bucket: Path, pipelines_dir: Path) -> dict[str, int]:
    p = lakeload.pipeline("links", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                          pipelines_dir=str(pipelines_dir))
    p.run(USERS, table_name="users", loader_file_format="parquet")
    p.run(USERS, table_name="users", loader_file_format="parquet")
    with p.sql_client() as client:
        return {t: client.execute_sql(f"SELECT count(*) FROM {t}")[0][0] for t in ("users", "users__pets")}


def test_a_local_bucket_beside_the_package_needs_no_copy_job(tmp_path: Path, copy_jobs: list[int]) -> None:
    assert run_and_read(tmp_path / "bucket", tmp_path / "pipelines") == {"users": 10, "users__pets": 10}
    assert copy_jobs == [0, 0]  # every file linked by the driver
    assert not list((tmp_path / "bucket").rglob("*.lakeload-tmp"))


def test_a_bucket_on_another_disk_is_copied_by_spark_tasks(tmp_path: Path, other_disk: Path, copy_jobs: list[int]) -> None:
    assert run_and_read(other_disk / "bucket", tmp_path / "pipelines") == {"users": 10, "users__pets": 10}
    assert copy_jobs == [2, 2]  # one file per table and load, copied by the tasks
    data = [p for p in (other_disk / "bucket" / "ds").rglob("*.parquet")]
    assert len(data) == 4 and all(p.stat().st_nlink == 1 for p in data)

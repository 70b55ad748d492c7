"""A pending package belongs to its destination, and a bucket that cannot be used fails before extract."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.errors import DestinationError, LoadError, PipelineStepFailed
from lakeload.runtime.package_destination import PendingPackageDestinationError
from lakeload.storage.packages import EXTRACTED, NORMALIZED, read_json

pytestmark = pytest.mark.usefixtures("spark")


def _pipeline(tmp_path: Path, bucket: str | Any, name: str = "owned", dataset: str = "ds") -> lakeload.Pipeline:
    destination = bucket if not isinstance(bucket, str) else lakeload.destinations.filesystem(bucket_url=bucket)
    return lakeload.pipeline(name, destination=destination, dataset_name=dataset, pipelines_dir=str(tmp_path / "pipelines"))


def _pending(p: lakeload.Pipeline) -> list[str]:
    return p.storage.list_packages(EXTRACTED) + p.storage.list_packages(NORMALIZED)


def test_a_bucket_that_is_a_file_fails_before_extract_on_every_run(tmp_path: Path) -> None:
    good = _pipeline(tmp_path, str(tmp_path / "bucket"))
    good.run([{"id": 1}], table_name="t")  # the working folder now exists: no sync step hides the check
    blocked = tmp_path / "file_bucket"
    blocked.write_text("x")
    for bucket in (str(blocked), str(blocked / "below")):
        p = _pipeline(tmp_path, bucket)
        with pytest.raises(DestinationError, match="is a file, not a folder"):
            p.run([{"id": 2}], table_name="t")
        assert _pending(p) == []  # nothing extracted


def test_a_missing_s3_bucket_fails_before_extract(tmp_path: Path, s3_server: Any) -> None:
    credentials = s3_server.credentials()
    p = _pipeline(tmp_path, str(tmp_path / "bucket"))
    p.run([{"id": 1}], table_name="t")
    missing = lakeload.destinations.filesystem(bucket_url="s3://nobucket-lakeload/data", credentials=credentials)
    p = _pipeline(tmp_path, missing)
    with pytest.raises(DestinationError, match=r"the bucket \(container\) 'nobucket-lakeload' does not exist") as failed:
        p.run([{"id": 2}], table_name="t")
    assert s3_server.secret_key not in str(failed.value)
    assert _pending(p) == []


def test_a_pending_package_is_not_loaded_into_another_destination(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    p = _pipeline(tmp_path, str(first))
    p.extract([{"id": 1}, {"id": 2}], table_name="t")
    p.normalize()
    (load_id,) = p.storage.list_packages(NORMALIZED)
    recorded = read_json(os.path.join(p.storage.package_dir(NORMALIZED, load_id), "package.json"))["destination"]
    assert recorded == {"destination_type": "filesystem", "destination_name": "filesystem",
                        "bucket_url": first.as_uri(), "dataset_name": "ds"}

    moved = _pipeline(tmp_path, str(second))
    with pytest.raises(PendingPackageDestinationError) as refused:  # run(): before anything new is extracted
        moved.run([{"id": 3}], table_name="t")
    message = str(refused.value)
    assert load_id in message and str(first.as_uri()) in message and str(second.as_uri()) in message
    assert "redirect_pending=True" in message and "lakeload pipeline owned drop-pending-packages" in message
    assert _pending(moved) == [load_id]
    with pytest.raises(PipelineStepFailed) as failed:  # load(): the same refusal, as a load error
        moved.load()
    assert isinstance(failed.value, LoadError) and isinstance(failed.value.__cause__, PendingPackageDestinationError)
    other_dataset = _pipeline(tmp_path, str(first), dataset="other")
    with pytest.raises(PendingPackageDestinationError, match="dataset 'other'"):
        other_dataset.run([{"id": 3}], table_name="t")
    assert not second.exists() and not (first / "other").exists()

    info = moved.load(redirect_pending=True)  # on purpose: the package goes to the new destination
    assert info.row_counts == {"t": 2} and (second / "ds" / "t").is_dir() and not first.exists()
    assert moved.run([{"id": 3}], table_name="t").row_counts == {"t": 1}


def test_the_package_loads_into_its_own_destination_after_a_failure(tmp_path: Path) -> None:
    failed_once = tmp_path / "failed_once"  # the sink runs on executors: a file, not a variable, remembers

    @lakeload.destination(name="flaky_api")
    def flaky(items: list[dict[str, Any]], table: dict[str, Any]) -> None:
        if not failed_once.exists():
            failed_once.touch()
            raise RuntimeError("API down")

    p = _pipeline(tmp_path, flaky, name="sinky")
    with pytest.raises(PipelineStepFailed, match="API down") as failed:
        p.run([{"id": 1}], table_name="t")
    assert isinstance(failed.value, LoadError) and "lakeload pipeline sinky drop-pending-packages" in str(failed.value)
    assert p.load().row_counts == {"t": 1}


def test_the_cli_drops_pending_packages_and_the_pipeline_goes_on(tmp_path: Path) -> None:
    from lakeload.cli.main import main

    bucket = tmp_path / "bucket"
    p = _pipeline(tmp_path, str(bucket), name="cli_drop")
    p.run([{"id": 1}], table_name="t")
    p.extract([{"id": 2}], table_name="t")
    p.normalize()
    p.extract([{"id": 3}], table_name="t")
    pending = _pending(p)
    assert len(pending) == 2
    os.environ["DESTINATION__FILESYSTEM__BUCKET_URL"] = str(bucket)  # the CLI reads the destination's configuration
    try:
        assert main(["pipeline", "cli_drop", "drop-pending-packages", "--pipelines-dir", str(tmp_path / "pipelines")]) == 0
    finally:
        del os.environ["DESTINATION__FILESYSTEM__BUCKET_URL"]
    assert _pending(p) == []
    assert main(["pipeline", "nope", "drop-pending-packages", "--pipelines-dir", str(tmp_path / "pipelines")]) == 1
    p = _pipeline(tmp_path, str(bucket), name="cli_drop")
    assert p.run([{"id": 4}], table_name="t").row_counts == {"t": 1}
    assert sorted(r[0] for r in p.dataset()("SELECT id FROM t").fetchall()) == [1, 4]

"""Every way of naming a destination loads for real; several named filesystem destinations in one process."""

from __future__ import annotations

from pathlib import Path

import pytest
from bucket_utils import read_rows

import lakeload

pytestmark = pytest.mark.usefixtures("spark")
ROWS = [{"id": 1, "tags": ["a"]}]


def test_named_destinations_of_one_type_in_one_process(tmp_path: Path, pipelines_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dev, prod, cfg = tmp_path / "dev", tmp_path / "prod", tmp_path / "cfg"
    Path(".lakeload").mkdir()
    Path(".lakeload/config.toml").write_text(
        f'[destination.dev_bucket]\nbucket_url = "{dev}"\n\n'
        f'[destination.from_config]\ndestination_type = "filesystem"\nbucket_url = "{cfg}"\n'
    )
    monkeypatch.setenv("DESTINATION__PROD_BUCKET__BUCKET_URL", str(prod))
    pipelines = {
        "dev": lakeload.destination("dev_bucket", destination_type="filesystem"),
        "prod": lakeload.destination("prod_bucket", destination_type="filesystem"),
        "cfg": "from_config",  # a bare name whose type comes from config
    }
    infos = {}
    for name, destination in pipelines.items():
        p = lakeload.pipeline(f"p_{name}", destination=destination, dataset_name="ds", pipelines_dir=str(pipelines_dir))
        infos[name] = p.run(ROWS, table_name="items")
    for bucket in (dev, prod, cfg):
        assert len(read_rows(bucket, "ds", "items")) == 1 and len(read_rows(bucket, "ds", "items__tags")) == 1
    assert [infos[n].destination_name for n in ("dev", "prod", "cfg")] == ["dev_bucket", "prod_bucket", "from_config"]
    assert "dev_bucket" in str(infos["dev"])


def test_destination_passed_to_run_and_shorthand(tmp_path: Path, pipelines_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__FILESYSTEM__BUCKET_URL", str(tmp_path / "short"))
    p = lakeload.pipeline("late", pipelines_dir=str(pipelines_dir))
    info = p.run(ROWS, table_name="items", destination="filesystem", dataset_name="late_ds")
    assert len(read_rows(tmp_path / "short", "late_ds", "items")) == 1
    trace = p.last_trace
    assert trace is not None and (trace.destination_name, trace.destination_type) == ("filesystem", "filesystem")
    assert [s.step for s in trace.steps] == ["extract", "normalize", "load", "run"]
    assert trace.load_info is info and all(s.error is None and s.elapsed >= 0 for s in trace.steps)
    assert "to filesystem (filesystem)" in str(trace)

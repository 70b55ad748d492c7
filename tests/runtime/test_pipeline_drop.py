"""`pipeline.drop()` side by side with dlt 1.31: it returns the pipeline, fresh (dlt's `p = p.drop()`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import lakeload

pytestmark = pytest.mark.usefixtures("spark")


def dropped(lib: Any, root: Path) -> tuple[Any, ...]:
    p = lib.pipeline("drop_me", destination=lib.destinations.filesystem(str(root / "bucket")),
                     pipelines_dir=str(root / "pipelines"), dataset_name="ds")
    p.run([{"id": 1}], table_name="users")
    fresh = p.drop()
    seen = (fresh is p, fresh.pipeline_name, fresh.default_schema_name, fresh.first_run, fresh.last_trace,
            fresh.list_completed_load_packages(), fresh.state.get("sources", {}))
    info = fresh.run([{"id": 2}], table_name="users")  # the fresh pipeline runs, restoring from the bucket first
    return (*seen, [pkg.state for pkg in info.load_packages], fresh.default_schema_name)


def test_drop_returns_the_fresh_pipeline_as_dlt(tmp_path: Path) -> None:
    import dlt

    ours = dropped(lakeload, tmp_path / "lakeload")
    assert ours == dropped(dlt, tmp_path / "dlt")
    assert ours[0] is True and ours[2] is None and ours[3] is True

"""`[spark] working_url`: load packages (items, Spark-written frames, normalized files) live there, state stays home."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bucket_utils import read_rows

import lakeload
from lakeload.storage.packages import EXTRACTED, LOADED, NORMALIZED


def test_packages_live_under_working_url(
    spark: Any, bucket: Path, pipelines_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    monkeypatch.setenv("SPARK__WORKING_URL", shared.as_uri())
    p = lakeload.pipeline("wu", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                          pipelines_dir=str(pipelines_dir))
    packages, home = shared / "wu" / "load", pipelines_dir / "wu"
    users = p.extract([{"id": i, "pets": [{"n": i}]} for i in range(5)], table_name="users").loads_ids[0]
    frame = p.extract(spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string"),
                      table_name="frame_rows").loads_ids[0]
    assert sorted(x.name for x in (packages / EXTRACTED).iterdir()) == sorted([users, frame])
    assert any((packages / EXTRACTED / frame / "data").rglob("*.parquet"))  # written by Spark's executors
    p.normalize()
    assert sorted(x.name for x in (packages / NORMALIZED).iterdir()) == sorted([users, frame])
    info = p.load()
    assert sorted(info.load_ids) == sorted([users, frame])
    assert sorted(x.name for x in (packages / LOADED).iterdir()) == sorted([users, frame])
    assert (home / "state.json").exists() and any((home / "schemas").iterdir()) and not (home / "load").exists()
    assert len(read_rows(bucket, "ds", "users__pets")) == 5 and len(read_rows(bucket, "ds", "frame_rows")) == 2
    p.drop()
    assert not home.exists() and not (shared / "wu").exists()

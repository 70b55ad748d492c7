"""`[spark] working_url`: which URLs are accepted, where packages go, and the warnings about unreachable packages."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from lakeload.errors import ConfigurationError
from lakeload.spark import settings as spark_settings
from lakeload.spark.settings import is_local_master
from lakeload.storage.packages import EXTRACTED, NORMALIZED, PipelineStorage
from lakeload.storage.working import (
    is_object_store,
    pipeline_storage,
    warn_unreachable_packages,
    working_path,
)


@pytest.fixture(autouse=True)
def fresh_warnings() -> Iterator[None]:
    spark_settings._warned.clear()
    yield
    spark_settings._warned.clear()


def test_working_url_forms() -> None:
    assert working_path("/mnt/shared/") == "/mnt/shared"
    assert working_path("file:///mnt/shared%20data") == "/mnt/shared data"
    assert working_path("file://localhost/mnt/x") == "/mnt/x"
    for url in ("s3://bucket/work", "gs://bucket", "az://container/x", "abfss://c@a.dfs.core.windows.net/x", "memory://w"):
        assert is_object_store(url)
    with pytest.raises(ConfigurationError, match="ftp:// is not supported as working_url.*working_credentials"):
        working_path("ftp://host/x")
    for url in ("relative/folder", "file://server/share", "file:relative"):
        with pytest.raises(ConfigurationError, match="is not an absolute local path.*SPARK__WORKING_URL"):
            working_path(url)


def test_packages_under_working_url_state_in_pipeline_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert pipeline_storage(str(tmp_path / "pipes"), "p").packages_root == str(tmp_path / "pipes" / "p")
    monkeypatch.setenv("P__SPARK__WORKING_URL", (tmp_path / "shared").as_uri())
    storage = pipeline_storage(str(tmp_path / "pipes"), "p")
    assert storage.root == str(tmp_path / "pipes" / "p") and storage.packages_root == str(tmp_path / "shared" / "p")
    assert storage.package_dir(EXTRACTED, "1.5") == str(tmp_path / "shared" / "p" / "load" / "extracted" / "1.5")
    assert storage.state_path == str(tmp_path / "pipes" / "p" / "state.json")
    storage.save_state({"a": 1})
    Path(storage.package_dir(NORMALIZED, "1.5")).mkdir(parents=True)
    assert storage.list_packages(NORMALIZED) == ["1.5"]
    storage.wipe()
    assert not (tmp_path / "pipes" / "p").exists() and not (tmp_path / "shared" / "p").exists()


def test_remote_master_without_working_url_warns_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert all(map(is_local_master, ("local", "local[*]", "local[2]", "local-cluster[2,1,1024]")))
    assert not any(map(is_local_master, ("spark://h:7077", "yarn", "k8s://https://h", "localhost")))
    local = PipelineStorage(str(tmp_path / "p"))
    shared = PipelineStorage(str(tmp_path / "p"), str(tmp_path / "shared" / "p"))
    with caplog.at_level(logging.WARNING, "lakeload.spark"):
        warn_unreachable_packages("local[2]", local)
        warn_unreachable_packages("spark://h:7077", shared)
        assert not caplog.records
        warn_unreachable_packages("spark://h:7077", local)
        warn_unreachable_packages("spark://h:7077", local)
    assert len(caplog.records) == 1 and "Set [spark] working_url" in caplog.records[0].getMessage()


def test_packages_left_in_the_pipeline_folder_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    Path(PipelineStorage(str(tmp_path / "pipes" / "p")).package_dir(NORMALIZED, "1.5")).mkdir(parents=True)
    monkeypatch.setenv("SPARK__WORKING_URL", str(tmp_path / "shared"))
    with caplog.at_level(logging.WARNING, "lakeload.spark"):
        pipeline_storage(str(tmp_path / "pipes"), "p")
    assert "1 pending load package(s) in" in caplog.text and "Move the `load` folder there" in caplog.text

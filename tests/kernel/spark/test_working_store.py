"""`[spark] working_url` on an object store: metadata stays home, data files go to the bucket and are deleted with
their package; credentials come from `[spark.working_credentials]` and never show."""

from __future__ import annotations

from pathlib import Path

import fsspec
import pytest

from lakeload.errors import ConfigurationError
from lakeload.kernel.spark import working as wio
from lakeload.storage.packages import EXTRACTED, EXTRACTING, NORMALIZED, NORMALIZING
from lakeload.storage.working import pipeline_storage


def test_s3_working_url_resolves_credentials_without_showing_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK__WORKING_URL", "s3://work-bucket/tmp/")
    monkeypatch.setenv("SPARK__WORKING_CREDENTIALS__AWS_ACCESS_KEY_ID", "AKIDWORK")
    monkeypatch.setenv("SPARK__WORKING_CREDENTIALS__AWS_SECRET_ACCESS_KEY", "s3cr3t-w0rk")
    monkeypatch.setenv("SPARK__WORKING_CREDENTIALS__ENDPOINT_URL", "http://127.0.0.1:1")
    storage = pipeline_storage(str(tmp_path / "pipes"), "p")
    assert storage.working is not None and storage.working.url == "s3://work-bucket/tmp/p"
    assert storage.working.options["secret"] == "s3cr3t-w0rk" and "s3cr3t" not in repr(storage)
    assert storage.packages_root == storage.root == str(tmp_path / "pipes" / "p")
    assert storage.package_dir(EXTRACTED, "1.5") == str(tmp_path / "pipes" / "p" / "load" / "extracted" / "1.5")
    assert storage.data_base(EXTRACTING, "1.5") == storage.data_base(EXTRACTED, "1.5") == "s3://work-bucket/tmp/p/1.5/extracted"
    assert storage.data_base(NORMALIZING, "1.5") == "s3://work-bucket/tmp/p/1.5/normalized"


def test_bucket_without_name_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK__WORKING_URL", "s3:///x")
    with pytest.raises(ConfigurationError, match="names no bucket"):
        pipeline_storage(str(tmp_path / "pipes"), "p")


def test_discard_complete_and_wipe_delete_bucket_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK__WORKING_URL", "memory://lakeload-work")
    storage = pipeline_storage(str(tmp_path / "pipes"), "p")
    fs = fsspec.filesystem("memory")
    for load_id in ("1.1", "2.2"):
        for stage in (EXTRACTED, NORMALIZING):
            Path(storage.package_dir(stage, load_id)).mkdir(parents=True)
            with wio.local_target(wio.join(storage.data_base(stage, load_id), "data", "a.jsonl"), storage.working) as local:
                Path(local).write_bytes(b"{}\n")
    assert fs.exists("/lakeload-work/p/1.1/extracted/data/a.jsonl")
    storage.recover()  # normalizing packages are redone: their partial data goes
    assert not fs.find("/lakeload-work/p/1.1/normalized") and fs.exists("/lakeload-work/p/1.1/extracted/data/a.jsonl")
    storage.discard(EXTRACTED, "1.1")
    assert not fs.exists("/lakeload-work/p/1.1/extracted/data/a.jsonl")
    storage.move("2.2", EXTRACTED, NORMALIZED)
    storage.complete("2.2")
    assert not fs.find("/lakeload-work/p/2.2")
    storage.wipe()
    assert not fs.find("/lakeload-work/p")


def test_local_target_uploads_whole_files_only(monkeypatch: pytest.MonkeyPatch) -> None:
    store = wio.WorkingStore("memory://lakeload-t")
    with pytest.raises(RuntimeError), wio.local_target("memory://lakeload-t/x.bin", store) as local:
        Path(local).write_bytes(b"partial")
        raise RuntimeError("killed")
    assert not wio.exists("memory://lakeload-t/x.bin", store)
    with wio.local_target("memory://lakeload-t/x.bin", store) as local:
        Path(local).write_bytes(b"whole")
    assert wio.read_bytes("memory://lakeload-t/x.bin", store) == b"whole" and wio.size("memory://lakeload-t/x.bin", store) == 5
    assert wio.list_files("memory://lakeload-t", store) == ["x.bin"]

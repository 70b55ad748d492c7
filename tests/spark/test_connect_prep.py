"""A remote Spark Connect server needs package data on a bucket: `[spark] working_url`, checked before extract."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lakeload.errors import WorkingUrlRequiredError
from lakeload.runtime.connect_prep import require_shared_working
from lakeload.spark.connect_session import is_loopback_url
from lakeload.storage.working import pipeline_storage

REMOTE = "sc://spark-cluster.invalid:15002/;token=s3cr3t"  # never contacted: the check runs before any session

SCRIPT = """
import json, sys
import lakeload
from lakeload.errors import WorkingUrlRequiredError
bucket, pipelines_dir = sys.argv[1], sys.argv[2]
p = lakeload.pipeline("remote_check", destination=lakeload.destinations.filesystem(bucket), pipelines_dir=pipelines_dir)
extracted = []
def rows():
    extracted.append(1)
    yield {"id": 1}
try:
    p.run(lakeload.resource(rows, name="items"))
    print(json.dumps({"error": None}))
except WorkingUrlRequiredError as exc:
    print(json.dumps({"error": str(exc), "extracted": len(extracted), "pyspark": "pyspark.sql" in sys.modules,
                      "packages": p.storage.list_packages("extracted") + p.storage.list_packages("normalized")}))
"""


def test_loopback_urls_are_local() -> None:
    assert is_loopback_url("sc://127.0.0.1:15002") and is_loopback_url("sc://localhost:15002/;token=x")
    assert is_loopback_url("sc://[::1]:15002")
    assert not is_loopback_url("sc://spark.example.com:443/;use_ssl=true") and not is_loopback_url("sc://10.0.0.5")


def test_remote_server_requires_an_object_store_working_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local = pipeline_storage(str(tmp_path / "pipelines"), "p")
    require_shared_working("p", "sc://127.0.0.1:15002", local)  # the local server reads the pipeline folder
    require_shared_working("p", None, local)  # in-process
    with pytest.raises(WorkingUrlRequiredError, match=r"working_url.*s3://") as raised:
        require_shared_working("p", REMOTE, local)
    assert "s3cr3t" not in str(raised.value) and "spark-cluster.invalid" in str(raised.value)
    monkeypatch.setenv("SPARK__WORKING_URL", "file:///mnt/shared/lakeload")  # a folder is not shared with a remote server
    with pytest.raises(WorkingUrlRequiredError):
        require_shared_working("p", REMOTE, pipeline_storage(str(tmp_path / "pipelines"), "p"))
    monkeypatch.setenv("SPARK__WORKING_URL", "s3://shared-bucket/work")
    require_shared_working("p", REMOTE, pipeline_storage(str(tmp_path / "pipelines"), "p"))


def test_remote_connect_without_working_url_fails_before_extract(tmp_path: Path) -> None:
    env = {**os.environ, "SPARK__REMOTE": REMOTE, "SPARK__MODE": "remote"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "bucket"), str(tmp_path / "pipelines")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["error"] and "[spark] working_url" in result["error"] and "s3cr3t" not in result["error"]
    assert result["extracted"] == 0 and result["packages"] == []  # failed before the resource was read
    assert result["pyspark"] is False  # decided from configuration alone: no session was opened
    assert not (tmp_path / "bucket").exists()


def test_only_a_dead_client_on_this_host_counts_as_abandoned() -> None:
    import socket

    from lakeload.runtime.connect_prep import _client_died

    gone = subprocess.Popen(["true"])
    gone.wait()
    here = socket.gethostname()
    assert _client_died({"pid": gone.pid, "host": here}) is True
    assert _client_died({"pid": os.getpid(), "host": here}) is False  # a live client's session is left alone
    assert _client_died({"pid": gone.pid, "host": "another-host"}) is False
    assert _client_died({"host": here}) is False


def test_shipped_archive_is_named_by_version_and_content(tmp_path: Path) -> None:
    import zipfile

    import lakeload
    from lakeload.spark.connect_shipping import _package_files, content_hash, package_archive

    first = package_archive(str(tmp_path / "cache"))
    assert Path(first).name.startswith(f"lakeload-{lakeload.__version__}-") and Path(first).suffix == ".zip"
    assert package_archive(str(tmp_path / "cache")) == first  # built once, then reused
    # two clients (other caches, other moments) build the same bytes: a Connect server takes an artifact name once
    time.sleep(1.1)
    other = package_archive(str(tmp_path / "other"))
    assert Path(other).name == Path(first).name and Path(other).read_bytes() == Path(first).read_bytes()
    names = zipfile.ZipFile(first).namelist()
    assert "lakeload/__init__.py" in names and "lakeload/kernel/spark/runner.py" in names
    assert not any("__pycache__" in name for name in names)
    assert "lakeload/errors/base.pyc" in names and "lakeload/kernel/spark/runner.pyc" in names
    # the workers import the bytecode (a module compiled from the zip's source would name the zip in its path)
    import zipimport

    code = zipimport.zipimporter(f"{first}/lakeload/errors").get_code("lakeload.errors.base")
    assert code.co_filename == "lakeload/errors/base.py"
    namespace: dict[str, object] = {}
    exec(code, namespace)
    assert "LakeloadError" in namespace
    package = tmp_path / "pkg" / "lakeload"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("x = 1\n")
    before = content_hash(_package_files(str(package)))
    (package / "__init__.py").write_text("x = 2\n")
    assert content_hash(_package_files(str(package))) != before

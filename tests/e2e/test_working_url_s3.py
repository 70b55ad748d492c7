"""`[spark] working_url` on the S3 server (moto, auth enforced): package data goes to the bucket, metadata stays
home, everything loads into a local bucket, a failed step resumes, and nothing is left in the working bucket."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import s3fs
from bucket_utils import read_rows
from deltalake import DeltaTable
from servers.fixtures import S3Server, fresh_prefix, s3_storage_options

import lakeload
from lakeload.normalize.normalizer import Normalizer


def _working_env(monkeypatch: pytest.MonkeyPatch, s3: S3Server) -> str:
    prefix = f"{s3.bucket}/{fresh_prefix('work')}"
    monkeypatch.setenv("SPARK__WORKING_URL", f"s3://{prefix}")
    for name, value in s3.credential_env("SPARK__WORKING_CREDENTIALS").items():
        monkeypatch.setenv(name, value)
    return prefix


def _left(fs: Any, path: str) -> list[str]:
    """The objects under `path` now (no cached listing)."""
    fs.invalidate_cache()
    return [f for f in fs.find(path) if f.rstrip("/") != path.rstrip("/")]


def _no_secret_in(folder: Path, secret: str) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


@lakeload.resource(name="people", table_format="delta", write_disposition="merge", primary_key="id")
def people(rows: list[dict[str, Any]]) -> Any:
    yield rows


def test_pipeline_with_working_url_on_s3(
    spark: Any, s3_server: S3Server, bucket: Path, pipelines_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = _working_env(monkeypatch, s3_server)
    fs = s3fs.S3FileSystem(**s3_storage_options(s3_server))
    p = lakeload.pipeline("wus3", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                          pipelines_dir=str(pipelines_dir))
    rows = [{"id": i, "pets": [{"n": i}, {"n": -i}], "tags": ["a", "b"]} for i in range(50)]
    users = p.extract(rows, table_name="users", loader_file_format="parquet").loads_ids[0]
    frame = p.extract(spark.createDataFrame([(1, "a", [1, 2]), (2, "b", [3])], "id long, name string, nums array<int>"),
                      table_name="frame_rows", loader_file_format="parquet").loads_ids[0]
    home = pipelines_dir / "wus3"
    assert not list((home / "load").rglob("*.jsonl"))  # data went to the bucket, metadata stayed home
    assert _left(fs, f"{prefix}/wus3/{users}/extracted") and _left(fs, f"{prefix}/wus3/{frame}/extracted")
    p.normalize()
    assert not _left(fs, f"{prefix}/wus3/{users}/extracted") and _left(fs, f"{prefix}/wus3/{users}/normalized")
    info = p.load()
    assert sorted(info.load_ids) == sorted([users, frame])
    assert len(read_rows(bucket, "ds", "users__pets")) == 100 and len(read_rows(bucket, "ds", "users__tags")) == 100
    assert sorted(r["name"] for r in read_rows(bucket, "ds", "frame_rows")) == ["a", "b"]
    assert len(read_rows(bucket, "ds", "frame_rows__nums")) == 3
    p.run([{"id": 1, "kind": "jsonl", "items": [1, 2, 3]}], table_name="plain", loader_file_format="jsonl")
    assert len(read_rows(bucket, "ds", "plain__items")) == 3
    p.run(people([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]))
    p.run(people([{"id": 2, "name": "B"}, {"id": 3, "name": "c"}]))
    merged = DeltaTable(str(bucket / "ds" / "people")).to_pyarrow_table().to_pylist()
    assert sorted((r["id"], r["name"]) for r in merged) == [(1, "a"), (2, "B"), (3, "c")]
    assert not _left(fs, f"{prefix}/wus3")  # complete loads leave nothing in the working bucket
    _no_secret_in(home, s3_server.secret_key)
    p.drop()
    assert not _left(fs, f"{prefix}/wus3")


def test_resume_after_failed_normalize_and_load(
    spark: Any, s3_server: S3Server, bucket: Path, pipelines_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = _working_env(monkeypatch, s3_server)
    fs = s3fs.S3FileSystem(**s3_storage_options(s3_server))

    def pipeline() -> Any:
        return lakeload.pipeline("wres", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                                 pipelines_dir=str(pipelines_dir))

    p = pipeline()
    load_id = p.extract([{"id": i, "pets": [{"n": i}]} for i in range(20)], table_name="users").loads_ids[0]

    def broken(self: Normalizer, plan: Any) -> None:
        raise RuntimeError("normalize killed after writing files")

    with monkeypatch.context() as patch:
        patch.setattr(Normalizer, "_warn_null_only", broken)
        with pytest.raises(Exception, match="normalize killed"):
            p.normalize()
    p = pipeline()  # a new process would recover the same way
    p.normalize()
    assert not _left(fs, f"{prefix}/wres/{load_id}/extracted")

    def failing_copy(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("load killed")

    with monkeypatch.context() as patch:
        patch.setattr("lakeload.load.plain_format.PlainFormat.copy", failing_copy)
        with pytest.raises(Exception, match="load killed"):
            p.load()
    assert _left(fs, f"{prefix}/wres/{load_id}/normalized")  # kept for the next load
    pipeline().load()
    assert len(read_rows(bucket, "ds", "users")) == 20 and len(read_rows(bucket, "ds", "users__pets")) == 20
    assert not _left(fs, f"{prefix}/wres")


def test_a_truncated_file_in_the_working_bucket_is_not_published(
    spark: Any, s3_server: S3Server, bucket: Path, pipelines_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One listing of the package's folder in the working bucket finds a truncated file before any copy task
    publishes the package's other files; after dropping the package the next run loads as usual."""
    from lakeload.errors import DamagedPackageFileError

    prefix = _working_env(monkeypatch, s3_server)
    fs = s3fs.S3FileSystem(**s3_storage_options(s3_server))
    p = lakeload.pipeline("wus3_damaged", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                          pipelines_dir=str(pipelines_dir))
    rows = [{"id": i, "pets": [{"n": i}]} for i in range(20)]
    load_id = p.extract(rows, table_name="users", loader_file_format="parquet").loads_ids[0]
    p.normalize()
    users = next(f for f in fs.find(f"{prefix}/wus3_damaged/{load_id}/normalized") if "/users." in f)
    fs.pipe_file(users, fs.cat_file(users)[:-100])
    with pytest.raises(DamagedPackageFileError) as failed:
        p.load()
    assert users.rsplit("/", 1)[-1] in str(failed.value) and "bytes where normalize wrote" in str(failed.value)
    assert not (bucket / "ds").exists() or not list((bucket / "ds").rglob("*.parquet"))  # nothing published
    p.drop_pending_packages()
    p.run(rows, table_name="users", loader_file_format="parquet")
    assert len(read_rows(bucket, "ds", "users")) == 20 and len(read_rows(bucket, "ds", "users__pets")) == 20

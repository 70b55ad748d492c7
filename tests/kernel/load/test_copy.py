"""Package files into a local bucket: hard links by the driver, copies by tasks where links cannot be made."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakeload.kernel.filesystem.layout import Layout
from lakeload.kernel.load.copy import CopyPayload, copy_files, link_files

LOAD_ID = "1795923201.5"


def payload(package: Path, bucket: Path) -> CopyPayload:
    return CopyPayload(
        bucket_url=bucket.as_uri(), fs_kwargs={}, dataset_path=str(bucket / "ds"), package_dir=str(package),
        layout=Layout.parse(), schema_name="events", load_id=LOAD_ID, package_timestamp="2026-11-29T03:00:00+00:00",
        is_local=True,
    )


def package_files(package: Path, count: int) -> list[dict[str, Any]]:
    files = []
    for i in range(count):
        path = package / "data" / f"{LOAD_ID}.{i:010x}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"n": list(range(i + 1))}), path)  # real Parquet: each copy checks its footer
        files.append({"path": f"data/{path.name}", "table": "users" if i % 2 else "users__pets", "file_id": f"{i:010x}",
                      "ext": "parquet", "rows": i + 1, "bytes": path.stat().st_size})
    return files


def test_link_files_puts_each_file_under_its_final_name_as_a_link(tmp_path: Path) -> None:
    package, bucket = tmp_path / "package", tmp_path / "bucket"
    files = package_files(package, 3)
    linked, left = link_files(payload(package, bucket), files)
    assert left == []
    assert linked == copy_files(payload(package, tmp_path / "copied"), files)  # the same report as a copy
    for file, report in zip(files, linked, strict=True):
        target = bucket / "ds" / report["path"]
        assert target.read_bytes() == (package / file["path"]).read_bytes()
        assert os.path.samefile(target, package / file["path"])  # a link: no byte was copied
        assert report == {"table": file["table"], "path": f"{file['table']}/{LOAD_ID}.{file['file_id']}.parquet",
                          "rows": file["rows"], "bytes": file["bytes"]}
    assert not list(bucket.rglob("*.lakeload-tmp"))


def test_link_files_again_replaces_the_files_and_a_stale_temporary_name(tmp_path: Path) -> None:
    """A load killed between a link and its rename, or after some files, is run again over the same names."""
    package, bucket = tmp_path / "package", tmp_path / "bucket"
    files = package_files(package, 2)
    link_files(payload(package, bucket), files[:1])
    stale = bucket / "ds" / "users" / f"{LOAD_ID}.{files[1]['file_id']}.parquet.lakeload-tmp"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"half a file")
    linked, left = link_files(payload(package, bucket), files)
    assert (len(linked), left) == (2, [])
    assert not stale.exists()
    assert sorted(p.name for p in (bucket / "ds").rglob("*") if p.is_file()) == sorted(
        f"{LOAD_ID}.{f['file_id']}.parquet" for f in files
    )


def test_files_that_cannot_be_linked_are_left_for_the_copy(tmp_path: Path) -> None:
    package, bucket = tmp_path / "package", tmp_path / "bucket"
    files = package_files(package, 2)
    (package / files[0]["path"]).unlink()  # no file to link: the copy task will say what is missing
    linked, left = link_files(payload(package, bucket), files)
    assert [r["table"] for r in linked] == [files[1]["table"]] and left == [files[0]]
    assert not list(bucket.rglob("*.lakeload-tmp"))


def test_a_bucket_on_another_file_system_is_copied(tmp_path: Path, other_disk: Path) -> None:
    package, bucket = tmp_path / "package", other_disk
    files = package_files(package, 2)
    linked, left = link_files(payload(package, bucket), files)
    assert (linked, left) == ([], files)  # links cannot cross file systems
    copied = copy_files(payload(package, bucket), left)
    for report, file in zip(copied, files, strict=True):
        target = bucket / "ds" / report["path"]
        assert target.read_bytes() == (package / file["path"]).read_bytes()
        assert not os.path.samefile(target, package / file["path"])


def test_a_rename_that_fails_raises_its_own_error(tmp_path: Path) -> None:
    """Only a link that cannot be made turns into a copy: a target that cannot be replaced says so."""
    package, bucket = tmp_path / "package", tmp_path / "bucket"
    files = package_files(package, 1)
    (bucket / "ds" / files[0]["table"] / f"{LOAD_ID}.{files[0]['file_id']}.parquet" / "x").mkdir(parents=True)
    with pytest.raises(IsADirectoryError):
        link_files(payload(package, bucket), files)
    with pytest.raises(IsADirectoryError):
        copy_files(payload(package, bucket), files)

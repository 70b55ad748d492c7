"""`filesystem()` and its readers take dlt's arguments in dlt's order: the same positional call on dlt 1.31 and on
lakeload lists the same files (dlt's `filesystem(bucket_url, credentials, file_glob, files_per_page, extract_content,
kwargs, client_kwargs, incremental, fetch_file_info)`)."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import dlt
import pytest
import s3fs
from servers.fixtures import S3Server, fresh_prefix, s3_storage_options

import lakeload

# the modules (`lakeload.sources.filesystem` as an attribute is the function, re-exported by `lakeload.sources`)
dlt_files = importlib.import_module("dlt.sources.filesystem")
lakeload_files = importlib.import_module("lakeload.sources.filesystem")

NAMES = ["a.csv", "b.csv", "c.jsonl", "d.parquet", "nested/e.csv"]


@pytest.fixture
def bucket_url(s3_server: S3Server) -> str:
    """An S3 prefix (a real server, auth enforced) holding `NAMES`."""
    fs = s3fs.S3FileSystem(**s3_storage_options(s3_server))
    prefix = f"{s3_server.bucket}/{fresh_prefix('positional')}"
    for name in NAMES:
        fs.pipe_file(f"{prefix}/{name}", b"id\n1\n")
    return f"s3://{prefix}"


@pytest.fixture
def aws(s3_server: S3Server) -> Any:
    """dlt's credentials object: a dlt script passes it as the second argument (lakeload takes it too)."""
    from dlt.common.configuration.specs import AwsCredentials

    return AwsCredentials(**s3_server.credentials())


def listed(lib: Any, module: Any, root: Path, bucket_url: str, *args: Any) -> list[tuple[str, int]]:
    """(file name, page size) of every file item the resource `filesystem(bucket_url, *args)` yields in `extract()`."""
    pipeline = lib.pipeline(f"positional_{lib.__name__}", destination=lib.destinations.filesystem(str(root / lib.__name__)),
                            pipelines_dir=str(root / "pipelines"), dataset_name="ds")
    pages: list[list[Any]] = []

    @lib.transformer(name="names")
    def names(items: list[Any]) -> Any:
        pages.append(list(items))
        yield [{"name": item["file_name"]} for item in items]

    pipeline.extract(module.filesystem(bucket_url, *args) | names())
    return sorted((item["file_name"], len(page)) for page in pages for item in page)


@pytest.mark.parametrize("args", [
    ("*.csv",),
    ("**/*.csv",),
    ("*", 2),  # files_per_page
    ("**/*", 3, True),  # extract_content
    ("*.jsonl", 100, False, None, None),  # kwargs, client_kwargs
])
def test_the_same_positional_call_lists_the_same_files(
    tmp_path: Path, bucket_url: str, aws: Any, args: tuple[Any, ...],
) -> None:
    expected = listed(dlt, dlt_files, tmp_path, bucket_url, aws, *args)
    assert expected  # the call matches files on dlt
    assert listed(lakeload, lakeload_files, tmp_path, bucket_url, aws, *args) == expected


def test_positional_incremental_as_dlt(tmp_path: Path, bucket_url: str, aws: Any) -> None:
    """dlt's 8th argument: an incremental on the file items' `modification_date`; the second run lists nothing new."""
    for lib, module in ((dlt, dlt_files), (lakeload, lakeload_files)):
        runs = [listed(lib, module, tmp_path, bucket_url, aws, "*.csv", 100, False, None, None,
                       lib.sources.incremental("modification_date")) for _ in range(2)]
        assert [[name for name, _ in run] for run in runs] == [["a.csv", "b.csv"], []], lib.__name__


def test_signatures_are_dlts() -> None:
    def parameters(fn: Any) -> list[str]:
        return [p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]

    assert parameters(lakeload_files.filesystem) == parameters(dlt_files.filesystem)
    for reader in ("read_csv", "read_jsonl", "read_parquet"):  # dlt's transformers take the file items first
        assert parameters(getattr(lakeload_files, reader)) == parameters(getattr(dlt_files, reader))[1:], reader


def test_pandas_options_of_read_csv_are_refused() -> None:
    with pytest.raises(lakeload.LakeloadError, match=r"read_csv\(sep=\.\.\.\): lakeload reads CSV with Spark"):
        lakeload_files.read_csv(sep=";")

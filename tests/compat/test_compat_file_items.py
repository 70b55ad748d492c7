"""`filesystem() | a transformer of one's own` reading dlt's `FileItemDict`s, side by side with dlt 1.31: CSV read
in text mode and JSON lines in binary mode through `file_obj.open()` (gzip files un-gzipped by compression "auto"),
from a local folder, an fsspec `memory://` bucket and a real S3 server (moto, credentials given to the source),
loaded into a filesystem bucket and into DuckDB; the rows compared with dlt's."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from typing import Any

import duckdb
import fsspec
import pytest
import s3fs
from compat_harness import Ctx, assert_same, run_side_by_side
from servers.fixtures import S3Server, fresh_prefix, s3_storage_options

pytestmark = pytest.mark.usefixtures("spark")

FILES = {
    "exports/a.csv": b"id,name\n1,alice\n2,bob\n",
    "exports/b.csv.gz": gzip.compress(b"id,name\n3,carol\n"),
    "events/c.jsonl": b'{"id": 4, "tags": [{"t": 1}]}\n{"id": 5, "tags": []}\n',
    "events/d.jsonl.gz": gzip.compress(b'{"id": 6, "tags": [{"t": 2}, {"t": 3}]}\n'),
}


def readers(lib: Any, file_item_dict: type) -> tuple[Any, Any]:
    """dlt's documented way to read files of one's own: `file_obj.open()` inside a transformer."""

    @lib.transformer
    def csv_rows(items: list[Any]) -> Any:
        for file_obj in items:
            assert isinstance(file_obj, file_item_dict)
            with file_obj.open(mode="rt", newline="", encoding="utf-8") as f:
                for row in csv.DictReader(f):
                    yield {**row, "file_name": file_obj["file_name"], "mime_type": file_obj["mime_type"]}

    @lib.transformer
    def jsonl_rows(items: list[Any]) -> Any:
        for file_obj in items:
            with file_obj.open() as f:  # binary, gzip un-gzipped ("auto")
                for line in f:
                    yield {**json.loads(line), "file_name": file_obj["file_name"], "stored": len(file_obj.read_bytes()),
                           "size": file_obj["size_in_bytes"]}

    return csv_rows, jsonl_rows


def _imports(lib: Any) -> tuple[Any, type]:
    if lib.__name__ == "dlt":
        from dlt.sources.filesystem import FileItemDict, filesystem
    else:
        from lakeload.sources.filesystem import FileItemDict, filesystem  # type: ignore[assignment]
    return filesystem, FileItemDict


def _run(ctx: Ctx, p: Any, source_url: str, credentials: Any = None) -> Any:
    filesystem, file_item_dict = _imports(ctx.lib)
    csv_rows, jsonl_rows = readers(ctx.lib, file_item_dict)
    found = {"credentials": credentials} if credentials is not None else {}
    exports = filesystem(bucket_url=source_url, file_glob="exports/*", **found)
    events = filesystem(bucket_url=source_url, file_glob="events/*", **found)
    ctx.run(p, [(exports | csv_rows()).with_name("exports"), (events | jsonl_rows()).with_name("events")])
    return p


def local_files(ctx: Ctx) -> str:
    root = ctx.bucket.parent / "source"
    for name, data in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return str(root)


def memory_files(ctx: Ctx) -> str:
    url = f"memory://file-items-{ctx.lib.__name__}-{ctx.bucket.parent.name}"
    fs = fsspec.filesystem("memory")
    for name, data in FILES.items():
        fs.pipe_file(f"{url}/{name}", data)
    return url


@pytest.mark.parametrize("where", ["local", "memory"])
def test_transformer_reads_file_items_into_a_bucket(tmp_path: Path, where: str) -> None:
    """CSV (text mode) and JSON lines (binary mode) read through `FileItemDict.open()` land as dlt's rows."""

    def script(ctx: Ctx) -> Any:
        source = local_files(ctx) if where == "local" else memory_files(ctx)
        return _run(ctx, ctx.pipeline("file_items"), source)

    assert_same(script, tmp_path, hints=True)


def test_transformer_reads_file_items_into_duckdb(tmp_path: Path) -> None:
    """The same into DuckDB: the rows read back from each tool's database are equal."""

    def script(ctx: Ctx) -> Any:
        database = str(ctx.bucket.parent / "rows.duckdb")
        p = ctx.lib.pipeline("file_items_db", destination=ctx.lib.destinations.duckdb(database), dataset_name="ds",
                             pipelines_dir=str(ctx.pipelines_dir))
        _run(ctx, p, local_files(ctx))
        with duckdb.connect(database) as db:
            ctx.notes["exports"] = db.sql("SELECT id, name, file_name, mime_type FROM ds.exports ORDER BY id").fetchall()
            ctx.notes["events"] = db.sql("SELECT id, file_name, stored, size FROM ds.events ORDER BY id").fetchall()
            ctx.notes["tags"] = db.sql("SELECT t FROM ds.events__tags ORDER BY t").fetchall()
        return None

    theirs, ours = run_side_by_side(script, tmp_path)
    assert theirs.error is None and ours.error is None, (theirs.error, ours.error)
    assert len(theirs.notes["exports"]) == 3 and len(theirs.notes["events"]) == 3
    assert ours.notes == theirs.notes


def test_transformer_reads_file_items_from_s3(tmp_path: Path, s3_server: S3Server) -> None:
    """From a real S3 server with the source's credentials: `open()` goes through the source's filesystem."""
    fs = s3fs.S3FileSystem(**s3_storage_options(s3_server))
    prefix = f"{s3_server.bucket}/{fresh_prefix('file-items')}"
    for name, data in FILES.items():
        fs.pipe_file(f"{prefix}/{name}", data)

    def script(ctx: Ctx) -> Any:
        return _run(ctx, ctx.pipeline("file_items_s3"), f"s3://{prefix}", credentials=s3_server.credentials())

    assert_same(script, tmp_path)

"""One bucket, two tools: build the same pipeline with dlt 1.31 or lakeload, and read what they stored.

A `Bucket` is a local folder or a prefix on the moto S3 server, given to both tools by the same `bucket_url`
and credentials. `stored_files()` reads the files dlt keeps beside the tables (`init`, `_dlt_loads`,
`_dlt_version`, `_dlt_pipeline_state`), decoding the schemas and states with dlt's own functions, so the tests
compare what dlt itself would read. `make_pipeline()` builds a pipeline of either tool (dlt inside an isolated
config context, see `harness.isolated_dlt_config`) and `resources()` the resources both tools run.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fsspec
from harness import isolated_dlt_config

DATASET = "ds"
PIPELINE = "interop"
DLT_FOLDERS = ("_dlt_loads", "_dlt_version", "_dlt_pipeline_state")
LAKELOAD_ONLY_FOLDERS = frozenset({"_lakeload_delta_versions", "_lakeload_iceberg_versions"})  # Delta versions of whole loads; dlt never lists it


@dataclass(frozen=True)
class Case:
    """How a bucket is written: file format, Delta tables, naming convention and layout."""

    name: str
    loader_file_format: str = "jsonl"
    delta: bool = False  # users (merge), events (append) and things (replace) as Delta tables
    naming: str | None = None  # destination naming_convention; None: snake_case
    layout: str | None = None  # destination layout; None: dlt's default

    def destination_args(self) -> dict[str, Any]:
        args: dict[str, Any] = {}
        if self.naming:
            args["naming_convention"] = self.naming
        if self.layout:
            args["layout"] = self.layout
        return args


@dataclass(frozen=True)
class Bucket:
    """A bucket both tools write: its URL, credentials (None on a local folder) and an fsspec view for reading."""

    url: str
    credentials: dict[str, Any] | None
    fs: Any
    root: str  # the fsspec path of `url`

    def destination(self, lib: Any, case: Case) -> Any:
        return lib.destinations.filesystem(bucket_url=self.url, credentials=self.credentials, **case.destination_args())


def local_bucket(path: Path) -> Bucket:
    path.mkdir(parents=True, exist_ok=True)
    return Bucket(str(path), None, fsspec.filesystem("file"), str(path))


def s3_bucket(server: Any, prefix: str) -> Bucket:
    """A prefix on the moto S3 server, with credentials in dlt's (and lakeload's) field names."""
    credentials = server.credentials()
    fs = fsspec.filesystem("s3", endpoint_url=server.endpoint_url, key=server.access_key, secret=server.secret_key)
    return Bucket(server.url(prefix), credentials, fs, f"{server.bucket}/{prefix}")


@contextlib.contextmanager
def tool_context(lib: Any, home: Path) -> Iterator[None]:
    """dlt runs in an isolated config context (no outer env, TOML or telemetry); lakeload needs nothing."""
    with isolated_dlt_config(home) if lib.__name__ == "dlt" else contextlib.nullcontext():
        yield


def make_pipeline(lib: Any, bucket: Bucket, case: Case, pipelines_dir: Path) -> Any:
    return lib.pipeline(PIPELINE, destination=bucket.destination(lib, case), dataset_name=DATASET,
                        pipelines_dir=str(pipelines_dir))


def resources(lib: Any, case: Case, run: int) -> list[Any]:
    """Run `run` (0, 1, ...) of the data: nested lists, a variant, an incremental cursor, a new column per run.

    users: merge on `id` (nested `pets` lists that never shrink); events: append, incremental on `seq` (each run
    yields the earlier events again and three new ones, the cursor keeps the new ones only); things: replace,
    `v` is a double then a string (a variant column); every run adds a column `c<run>` to users.
    """
    delta = {"table_format": "delta"} if case.delta else {}

    @lib.resource(primary_key="id", write_disposition="merge", **delta)
    def users() -> Iterator[dict[str, Any]]:
        for i in range(3):
            yield {"id": i, "Name": f"user {i} run {run}", "pets": [{"n": j, "tags": ["a", "b"]} for j in range(2)],
                   "joined": f"2024-01-0{i + 1}T00:00:00Z", f"c{run}": run}

    @lib.resource(write_disposition="append", **delta)
    def events(seq: Any = lib.sources.incremental("seq", initial_value=0)) -> Iterator[dict[str, Any]]:  # noqa: B008 (dlt's API)
        for s in range(1, 3 * (run + 1) + 1):
            yield {"seq": s, "payload": {"a": s, "b": [s, s + 1]}}

    @lib.resource(write_disposition="replace", **delta)
    def things() -> Iterator[list[dict[str, Any]]]:
        yield [{"k": 1, "v": 1.5}, {"k": 2, "v": "x"}, {"k": 3, "v": run}]

    return [users(), events(), things()]


def run_tool(lib: Any, bucket: Bucket, case: Case, work: Path, run: int) -> Any:
    """One `run()` of `run`'s data by `lib` from an empty working folder `work`; returns the pipeline."""
    with tool_context(lib, work / "home"):
        pipeline = make_pipeline(lib, bucket, case, work / "pipelines")
        fmt = "parquet" if case.delta else case.loader_file_format
        pipeline.run(resources(lib, case, run), loader_file_format=fmt)
    return pipeline


@dataclass
class StoredFiles:
    """The dataset's `init` and `_dlt_*` records, decoded (schemas as dicts, states decompressed by dlt)."""

    init: bytes
    folders: set[str]
    loads: list[dict[str, Any]] = field(default_factory=list)  # by load id
    versions: list[dict[str, Any]] = field(default_factory=list)  # by (version, inserted_at); "schema" a dict
    states: list[dict[str, Any]] = field(default_factory=list)  # by (version, created_at); "state" a dict


def _records(bucket: Bucket, folder: str) -> list[dict[str, Any]]:
    path = f"{bucket.root}/{DATASET}/{folder}"
    if not bucket.fs.exists(path):
        return []
    return [json.loads(bucket.fs.cat_file(p)) for p in sorted(bucket.fs.ls(path, detail=False))]


def stored_files(bucket: Bucket) -> StoredFiles:
    from dlt.common.versioned_state import decompress_state

    bucket.fs.invalidate_cache()
    root = f"{bucket.root}/{DATASET}"
    folders = {p.rstrip("/").rsplit("/", 1)[-1] for p in bucket.fs.ls(root, detail=False)}
    stored = StoredFiles(bucket.fs.cat_file(f"{root}/init"), folders - {"init"})
    stored.loads = sorted(_records(bucket, "_dlt_loads"), key=lambda r: float(r["load_id"]))
    stored.versions = sorted(({**r, "schema": json.loads(r["schema"])} for r in _records(bucket, "_dlt_version")),
                             key=lambda r: (r["version"], r["inserted_at"]))
    stored.states = sorted(({**r, "state": decompress_state(r["state"])} for r in _records(bucket, "_dlt_pipeline_state")),
                           key=lambda r: (r["version"], r["created_at"]))
    return stored


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))

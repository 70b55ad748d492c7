"""The metadata files of a load package as TypedDicts: extract's `manifest.json` and normalize's `package.json`.

Both are written once, as JSON, and read back by later steps (normalize, load, `pipeline.get_load_package_info`,
the dashboard): these types name their keys where dlt's `TLoadPackageState` names its own. They live here, beside
`PipelineStorage` that reads the files, so that extract, normalize, load, Delta and runtime share them. Paths in
them are relative to the package's data base (`PipelineStorage.data_base`).

>>> package: NormalizedPackage = read_package_json('{"load_id": "1.5", "row_counts": {"users": 2}}')
>>> sum(package["row_counts"].values())
2
"""

from __future__ import annotations

from typing import TypedDict, cast

import orjson

from lakeload.destinations.state_types import PipelineState
from lakeload.schema.contract import ContractSetting
from lakeload.schema.typing import TStoredSchema, TTableSchema


class DestinationRecord(TypedDict):
    """Where a package is meant to be loaded (no secret: URL passwords are masked)."""

    destination_type: str
    destination_name: str
    bucket_url: str
    dataset_name: str


class RefreshPlan(TypedDict):
    """What a refresh does to one package's schema and bucket (stored in the manifest and `package.json`)."""

    refresh: str
    dropped_tables: list[TTableSchema]  # tables that saw data: their files go (children first)
    truncated_tables: list[TTableSchema]  # tables that saw data: emptied, kept in the schema
    schema_drops: list[str]  # every table removed from the schema (also those that never saw data)
    delta_tables: list[str]  # the dropped or truncated tables that are Delta tables


class SourceSlice(TypedDict):
    """A byte range of a file a files source reads in place (`sources.filesystem`), instead of a copy."""

    bucket_url: str
    path: str  # the file, relative to `bucket_url`
    size: int
    version: str  # the object's version (etag, generation, mtime) when listed: a changed file is refused
    start: int
    end: int | None  # None: to the end of the file
    compression: str | None
    add_file_name: bool


class _SplitEntry(TypedDict):
    path: str  # relative to the data base; a full URL for a `source` read in place
    root_table: str
    file_format: str  # "jsonl" | "parquet" | "frame" | "csv" ...


class SplitEntry(_SplitEntry, total=False):
    """One input of normalize in `manifest.json`: a file extract wrote (or a slice of a source file) for a root table."""

    may_have_tags: bool
    source: SourceSlice


class _PackageFile(TypedDict):
    table: str
    path: str
    rows: int


class PackageFile(_PackageFile, total=False):
    """A file of a package as normalize records it in `package.json` (and a load result lists it).

    `bytes` (and, for Parquet, `rows`) is what the load checks the file against before it copies it."""

    file_id: str
    ext: str
    bytes: int
    split: int  # the split (manifest entry) it was normalized from
    file_format: str  # a sink's load result: the format of the job's file


class ContractEntry(TypedDict, total=False):
    """What extract's contract checks add to `manifest.json`: the contract of this run or source, when set."""

    schema_contract: ContractSetting


class _ExtractManifest(TypedDict):
    load_id: str
    schema_name: str
    created_at: str  # ISO 8601, UTC
    tables: dict[str, TTableSchema]  # the root tables' hints, by name
    splits: list[SplitEntry]


class ExtractManifest(_ExtractManifest, total=False):
    """`load/extracted/<load_id>/manifest.json`: what extract wrote and what normalize needs to know about it."""

    materialized: list[str]  # tables declared with no items (dlt's `materialize_table_schema`)
    state: PipelineState | None  # the pipeline state to store with the load (dlt's typed JSON), None: unchanged
    loader_file_format: str | None
    destination: DestinationRecord | None
    refresh: RefreshPlan | None
    schema_contract: ContractSetting


class NormalizedPackage(TypedDict, total=False):
    """`load/normalized/<load_id>/package.json` (kept in `loaded/` as the record of the load)."""

    load_id: str
    schema_name: str
    created_at: str
    file_format: str
    root_tables: list[str]
    files: list[PackageFile]
    row_counts: dict[str, int]
    schema: TStoredSchema
    state: PipelineState | None
    destination: DestinationRecord | None
    refresh: RefreshPlan | None
    schema_update: dict[str, TTableSchema]


def read_package_json(text: str | bytes) -> NormalizedPackage:
    """`package.json`'s content, typed (the file is lakeload's own, written by normalize)."""
    return cast(NormalizedPackage, orjson.loads(text))


def read_manifest_json(text: str | bytes) -> ExtractManifest:
    """`manifest.json`'s content, typed (the file is lakeload's own, written by extract)."""
    return cast(ExtractManifest, orjson.loads(text))

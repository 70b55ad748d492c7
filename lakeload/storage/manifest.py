"""The metadata files of a load package as TypedDicts: extract's `manifest.json` and normalize's `package.json`.

Both are written once, as JSON, and read back by later steps (normalize, load, `pipeline.get_load_package_info`,
the dashboard): these types name their keys where dlt's `TLoadPackageState` names its own. They live here, beside
`PipelineStorage` that reads the files, so that extract, normalize, load, Delta and runtime share them; the
`package.json` ones (`NormalizedPackage`, `PackageFile`, `DestinationRecord`, `RefreshPlan`) are defined in
`lakeload.destinations.package_types`, the lowest layer that reads the file, and exported here. Paths in them are
relative to the package's data base (`PipelineStorage.data_base`).

>>> package: NormalizedPackage = read_package_json('{"load_id": "1.5", "row_counts": {"users": 2}}')
>>> sum(package["row_counts"].values())
2
"""

from __future__ import annotations

from typing import TypedDict, cast

import orjson

from lakeload.destinations.package_types import DestinationRecord as DestinationRecord
from lakeload.destinations.package_types import NormalizedPackage as NormalizedPackage
from lakeload.destinations.package_types import PackageFile as PackageFile
from lakeload.destinations.package_types import RefreshPlan as RefreshPlan
from lakeload.destinations.state_types import PipelineState
from lakeload.schema.contract import ContractSetting
from lakeload.schema.typing import TTableSchema


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


def read_package_json(text: str | bytes) -> NormalizedPackage:
    """`package.json`'s content, typed (the file is lakeload's own, written by normalize)."""
    return cast(NormalizedPackage, orjson.loads(text))


def read_manifest_json(text: str | bytes) -> ExtractManifest:
    """`manifest.json`'s content, typed (the file is lakeload's own, written by extract)."""
    return cast(ExtractManifest, orjson.loads(text))

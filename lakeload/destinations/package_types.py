"""The normalized package a destination loads (`package.json`) as TypedDicts: `NormalizedPackage` and its parts.

Normalize writes `load/normalized/<load_id>/package.json` once; the loaders (the filesystem destination's table
formats, the sink, Delta) read it back, and `pipeline.get_load_package_info` and the dashboard show it. The types
live in `destinations`, the lowest layer that reads the file (`FormatLoad.package`), so that storage, normalize,
load and Delta share them; `lakeload.storage.manifest` exports them beside extract's `manifest.json` types. Paths in
them are relative to the package's data base (`PipelineStorage.data_base`).

>>> package: NormalizedPackage = {"load_id": "1.5", "files": [{"table": "users", "path": "users.a1.parquet", "rows": 2}]}
>>> [f["table"] for f in package["files"]]
['users']
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from lakeload.destinations.state_types import PipelineState
from lakeload.kernel.contracts import TPackageFile
from lakeload.schema.typing import TStoredSchema, TTableSchema

PackageFile = TPackageFile
"""A file of a package as normalize records it in `package.json`: the kernel's `TPackageFile` (the normalize tasks
write the entries, the load tasks read them). `bytes` (and, for Parquet, `rows`) is what the load checks the file
against before it copies it."""


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
    delta_tables: list[str]  # the dropped or truncated tables that are Delta tables (packages before `table_formats`)
    table_formats: NotRequired[dict[str, str]]  # dropped or truncated table -> its table format, when not `plain`


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

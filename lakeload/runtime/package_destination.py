"""A load package belongs to the destination it was extracted for.

`run()` records the destination (type, name, bucket, dataset) in the manifest of every package it extracts,
and normalize carries it into `package.json`. A pending package is loaded only into that destination: when the
pipeline now points elsewhere (another bucket, dataset or destination), `run()` refuses before extracting
anything and `load()` before loading, with an error that names both and the ways out: restore the
configuration, `pipeline.load(redirect_pending=True)` to load the pending packages into the new destination
on purpose, or drop them. Packages without a record (made by `extract()` alone, or by an older lakeload)
load anywhere, as in dlt.

>>> record = destination_record("filesystem", "filesystem", "file:///data/lake", "mydata")
>>> check_package_destination({"destination": record}, record, "1795296531.14", "quick_start")
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from lakeload.config.credentials import url_without_password
from lakeload.errors import LoadError
from lakeload.storage.manifest import DestinationRecord
from lakeload.storage.packages import EXTRACTED, LOADED, NORMALIZED, PipelineStorage, read_json


class PendingPackageDestinationError(LoadError):
    """A pending package was extracted for another destination than the one the pipeline loads into now."""


def destination_record(destination_type: str, destination_name: str, bucket_url: str, dataset_name: str) -> DestinationRecord:
    """The record of one destination, as stored in a package."""
    return DestinationRecord(
        destination_type=destination_type,
        destination_name=destination_name,
        bucket_url=url_without_password(bucket_url),
        dataset_name=dataset_name,
    )


def _describe(record: DestinationRecord) -> str:
    where = f" at {record['bucket_url']}" if record["bucket_url"] else ""
    return f"{record['destination_type']} destination '{record['destination_name']}'{where}, dataset '{record['dataset_name']}'"


def check_package_destination(
    package: Mapping[str, Any], current: DestinationRecord | None, load_id: str, pipeline_name: str, redirect: bool = False
) -> None:
    """Raise `PendingPackageDestinationError` when `package` was made for another destination than `current`."""
    recorded: DestinationRecord | None = package.get("destination")
    if recorded is None or current is None or redirect or recorded == current:
        return
    raise PendingPackageDestinationError(
        f"Load package {load_id} of pipeline '{pipeline_name}' was extracted for the {_describe(recorded)}, but the "
        f"pipeline now loads into the {_describe(current)}; it is not loaded there without your say. Either point the "
        "pipeline back at the package's destination and run it (or pipeline.load()), or load the pending packages into "
        "the new destination on purpose with pipeline.load(redirect_pending=True), or drop them with "
        f"pipeline.drop_pending_packages() / `lakeload pipeline {pipeline_name} drop-pending-packages`."
    )


def check_pending_destinations(storage: PipelineStorage, current: DestinationRecord | None, pipeline_name: str) -> None:
    """Refuse, before anything new is extracted, to go on while pending packages wait for another destination."""
    for load_id, package in pending_records(storage):
        check_package_destination(package, current, load_id, pipeline_name)


def pending_records(storage: PipelineStorage) -> list[tuple[str, dict[str, Any]]]:
    """(load id, manifest or package.json) of every pending package, oldest first."""
    pending = []
    for stage, file_name in ((EXTRACTED, "manifest.json"), (NORMALIZED, "package.json")):
        for load_id in storage.list_packages(stage):
            path = os.path.join(storage.package_dir(stage, load_id), file_name)
            try:
                pending.append((load_id, read_json(path)))
            except (OSError, json.JSONDecodeError, ValueError):
                continue  # an incomplete package: recover() deals with it
    return sorted(pending, key=lambda item: float(item[0]))


def newest_record(storage: PipelineStorage, stages: tuple[str, ...] = (LOADED, NORMALIZED, EXTRACTED)) -> DestinationRecord | None:
    """The destination recorded by the newest package of `stages` that has a record (None if none has): where a
    pipeline whose destination was passed in code loaded or will load, for those that only read its folder."""
    files = {LOADED: "package.json", NORMALIZED: "package.json", EXTRACTED: "manifest.json"}
    candidates = [
        (float(load_id), os.path.join(storage.package_dir(stage, load_id), files[stage]))
        for stage in stages
        for load_id in storage.list_packages(stage)
    ]
    for _, path in sorted(candidates, reverse=True):
        try:
            record: DestinationRecord | None = read_json(path).get("destination") if os.path.exists(path) else None
        except (OSError, json.JSONDecodeError, ValueError):
            continue  # an incomplete or damaged package says nothing reliable
        if record:
            return record
    return None

"""A normalized package as a destination's job client sees it (`lakeload.destinations.LoadPackage`): its jobs (one
normalized file each), the tables' schemas, and its rows read from the files as they are needed.

Example::

    package = load_package_view(pipeline.storage, "1795296531.14")
    [(job.table_name, job.rows) for job in package.jobs]     # [('users', 2)]
"""

from __future__ import annotations

import lakeload.kernel.spark.working as wio
from lakeload.destinations.reference import Destination, JobClient, LoadJob, LoadPackage, LoadResult
from lakeload.errors import LakeloadError, LoadError
from lakeload.kernel.load.sink import read_rows
from lakeload.spark.errors import spark_exception_types
from lakeload.storage.packages import NORMALIZED, PipelineStorage


def _file_format(path: str) -> str:
    name = path[:-3] if path.endswith(".gz") else path
    return name.rsplit(".", 1)[-1] if "." in name.rsplit("/", 1)[-1] else "jsonl"


def load_package_view(storage: PipelineStorage, load_id: str) -> LoadPackage:
    """The normalized package `load_id` of `storage`, for `JobClient.load_package`."""
    base, package = storage.data_base(NORMALIZED, load_id), storage.package_json(NORMALIZED, load_id)
    jobs = [LoadJob(f["table"], wio.join(base, f["path"]), _file_format(f["path"]), int(f.get("rows", 0))) for f in package["files"]]
    return LoadPackage(
        load_id=load_id,
        schema_name=package["schema_name"],
        tables=package["schema"]["tables"],
        jobs=jobs,
        row_counts=dict(package.get("row_counts", {})),
        read_rows=lambda job: read_rows(job.path, storage.working),
        stored_schema=package["schema"],
        state=package.get("state"),
        refresh=package.get("refresh"),
        root_tables=list(package.get("root_tables") or []),
        created_at=package.get("created_at"),
    )


def load_with(client: JobClient, destination: Destination, storage: PipelineStorage, load_id: str) -> LoadResult:
    """Load the normalized package `load_id` with the destination's job client. An error of a client that is not
    lakeload's own (a user's destination) becomes a `LoadError` naming the destination and the package."""
    passed_on: tuple[type[BaseException], ...] = (LakeloadError, *spark_exception_types())
    try:
        return client.load_package(load_package_view(storage, load_id))
    except passed_on:
        raise
    except Exception as exc:
        raise LoadError(
            f"Destination '{destination.name}' ({type(destination).__name__}) could not load package {load_id}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


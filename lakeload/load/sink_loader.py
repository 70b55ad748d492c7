"""Load into a sink destination: the sink function gets every normalized file's rows in batches.

By default in this (the driver's) process, file after file, as dlt calls a sink where the script lives: a sink
that appends to the script's list or writes through its open connection sees every batch. With
`run_on="executors"` every file is one Spark task calling the function on an executor.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from lakeload.destinations.impl.sink.factory import sink
from lakeload.destinations.reference import (
    Destination,
    JobClientBase,
    LoadContext,
    LoadPackage,
    LoadResult,
    register_job_client,
)
from lakeload.errors import LakeloadError, LoadError
from lakeload.kernel.contracts import TPackageFile, TSinkResult
from lakeload.kernel.load.sink import SinkPayload, deliver_file
from lakeload.spark.session import run_tasks
from lakeload.storage.packages import PipelineStorage

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class SinkLoader:
    """Delivers normalized packages to a sink function, resuming after the last delivered batch."""

    def __init__(self, spark: SparkSession, storage: PipelineStorage, destination: sink) -> None:
        self.spark = spark
        self.storage = storage
        self.destination = destination

    def load(self, load_id: str) -> LoadResult:
        started = time.perf_counter()
        package_dir, package = self.storage.normalized_package(load_id)
        payload = SinkPayload(
            func=self.destination.func,
            package_dir=package_dir,
            batch_size=self.destination.batch_size,
            skip_dlt_columns=self.destination.skip_dlt_columns_and_tables,
            tables=package["schema"]["tables"],
        )
        files = [f for f in package["files"] if not (self.destination.skip_dlt_columns_and_tables and f["table"].startswith("_dlt"))]
        description = f"lakeload sink {self.destination.name} {load_id}"
        try:
            if self.destination.run_on == "executors":
                delivered = run_tasks(self.spark, deliver_file, payload, files, description, working=self.storage.working, error=LoadError)
            else:
                delivered = self._deliver_here(replace(payload, store=self.storage.working), files, description)
        except LoadError as exc:
            raise LoadError(
                f"Sink '{self.destination.name}' failed: {exc}. Batches delivered so far are recorded; "
                "run pipeline.load() to resume from the failed batch."
            ) from exc
        result = LoadResult(load_id, package["schema_name"], row_counts=package["row_counts"])
        result.files = [{**d, "path": f["path"], "rows": f["rows"]} for d, f in zip(delivered, files, strict=True)]
        result.elapsed = time.perf_counter() - started
        return result

    @staticmethod
    def _deliver_here(payload: SinkPayload, files: list[TPackageFile], description: str) -> list[TSinkResult]:
        """Every file's batches to the sink function in this thread, one file after the other (streamed: one batch
        of rows in memory at a time); the function's own error becomes a `LoadError` naming it, as a task's does."""
        delivered: list[TSinkResult] = []
        for file in files:
            try:
                delivered.append(deliver_file(payload, file))
            except LakeloadError:
                raise
            except Exception as exc:
                raise LoadError(f"{description}: {type(exc).__name__}: {exc} (in table '{file['table']}')") from exc
        return delivered


class SinkJobClient(JobClientBase):
    """A sink's job client: no state or schemas of its own; each package's files to the sink function."""

    def __init__(self, destination: Destination, context: LoadContext) -> None:
        self.destination, self.context = cast(sink, destination), context  # registered for sinks only

    def load_package(self, package: LoadPackage) -> LoadResult:
        return SinkLoader(self.context.spark(), self.context.storage, self.destination).load(package.load_id)


register_job_client("sink", SinkJobClient)


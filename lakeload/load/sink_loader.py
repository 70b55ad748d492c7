"""Load into a sink destination: every normalized file is one Spark task calling the sink function."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from lakeload.destinations.impl.sink.factory import sink
from lakeload.errors import LoadError
from lakeload.load.executor_sink import SinkPayload, deliver_file
from lakeload.load.loader import LoadResult
from lakeload.runtime.packages import PipelineStorage
from lakeload.spark.session import run_tasks

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
        try:
            description = f"lakeload sink {self.destination.name} {load_id}"
            delivered = run_tasks(self.spark, deliver_file, payload, files, description, working=self.storage.working, error=LoadError)
        except LoadError as exc:
            raise LoadError(
                f"Sink '{self.destination.name}' failed: {exc}. Batches delivered so far are recorded; "
                "run pipeline.load() to resume from the failed batch."
            ) from exc
        result = LoadResult(load_id, package["schema_name"], row_counts=package["row_counts"])
        result.files = [{**d, "path": f["path"], "rows": f["rows"]} for d, f in zip(delivered, files, strict=True)]
        self.storage.complete(load_id)
        result.elapsed = time.perf_counter() - started
        return result

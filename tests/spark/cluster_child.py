"""Child process: full pipelines on one `local-cluster[2,1,1024]` session (executors are separate JVMs and Python
workers), so the cluster starts once for every case.

usage: cluster_child.py BUCKET PIPELINES_DIR S3_BUCKET_URL S3_SOURCE_URL; prints one JSON line with what it checked.

- `cluster` (package data in the local pipeline folder): JSON records into the local BUCKET, a Spark DataFrame
  as JSONL, and a sink destination that must run on the executors.
- `cluster_s3` (package data in an S3 working bucket, `CLUSTER_S3__SPARK__WORKING_URL`): JSON records, a
  DataFrame and JSONL/Parquet files read from the S3 server into S3_BUCKET_URL. S3 credentials come from the
  environment (`DESTINATION__FILESYSTEM__CREDENTIALS__*`, `SOURCES__FILESYSTEM__CREDENTIALS__*`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import lakeload
from lakeload.demo.events import generate_events
from lakeload.sources.filesystem import filesystem, read_jsonl, read_parquet
from lakeload.spark.session import get_spark


def local_folder(spark: Any, bucket: str, pipes: str) -> dict[str, Any]:
    """Records and a DataFrame into a local bucket, then a sink; package data in the pipeline folder."""
    p = lakeload.pipeline("cluster", destination=lakeload.destinations.filesystem(bucket), dataset_name="ds", pipelines_dir=pipes)
    first = p.run(lakeload.resource(generate_events(3000), name="events"), loader_file_format="parquet")
    frame = spark.createDataFrame([(i, [f"t{i}", "x"]) for i in range(100)], "id long, tags array<string>")
    second = p.run(frame, table_name="frame_rows")
    sink_dir = os.path.join(pipes, "sink_out")
    os.makedirs(sink_dir, exist_ok=True)

    @lakeload.destination(batch_size=50, run_on="executors")
    def to_files(items: list[dict[str, object]], table: dict[str, object]) -> None:
        with open(os.path.join(sink_dir, f"{os.getpid()}.jsonl"), "a") as f:
            for item in items:
                f.write(json.dumps(item) + "\n")

    sink_pipeline = lakeload.pipeline("cluster_sink", destination=to_files, pipelines_dir=pipes)
    sink_pipeline.run(lakeload.resource(generate_events(500), name="events"))
    sink_rows = {p: len(Path(sink_dir, p).read_text().splitlines()) for p in os.listdir(sink_dir)}
    return {"first": first.row_counts, "second": second.row_counts, "sink_rows": sum(sink_rows.values()),
            "sink_in_driver": f"{os.getpid()}.jsonl" in sink_rows, "working": p.storage.working is not None}


def s3_buckets(spark: Any, bucket_url: str, source_url: str, pipes: str) -> dict[str, Any]:
    """Records, a DataFrame and files from the S3 server into a bucket on it; package data in the S3 working bucket."""
    p = lakeload.pipeline("cluster_s3", destination=lakeload.destinations.filesystem(bucket_url), dataset_name="ds",
                          pipelines_dir=pipes)
    counts = {}
    counts["json"] = p.run(lakeload.resource(generate_events(3000), name="events"), loader_file_format="parquet").row_counts
    frame = spark.createDataFrame(
        [(i, f"n{i}", (f"c{i}", i * 2), [f"t{i}", "x"], [(i, "a")]) for i in range(100)],
        "id long, name string, address struct<city: string, zip: long>, tags array<string>, "
        "pets array<struct<pid: long, kind: string>>",
    )
    counts["frame"] = p.run(frame, table_name="frame_rows", loader_file_format="parquet").row_counts
    counts["jsonl_files"] = p.run(filesystem(source_url, file_glob="*.jsonl*", incremental=True) | read_jsonl(),
                                  table_name="file_events", loader_file_format="parquet").row_counts
    counts["again"] = p.run(filesystem(source_url, file_glob="*.jsonl*", incremental=True) | read_jsonl(),
                            table_name="file_events", loader_file_format="parquet").row_counts
    counts["parquet_files"] = p.run(filesystem(source_url, file_glob="*.parquet") | read_parquet(), table_name="file_rows").row_counts
    return {"counts": counts, "stored": dict(p.dataset().row_counts()), "working": p.storage.working is not None}


def main() -> None:
    bucket, pipes, s3_bucket_url, s3_source_url = sys.argv[1:5]
    spark = get_spark("local-cluster[2,1,1024]", {"spark.executor.memory": "512m"})
    local = local_folder(spark, bucket, pipes)
    s3 = s3_buckets(spark, s3_bucket_url, s3_source_url, pipes)
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1  # minus the driver
    pids = spark.sparkContext.parallelize(range(8), 8).map(lambda _: os.getpid()).distinct().collect()
    print(json.dumps({"executors": executors, "worker_pids": len(pids), "driver_in_workers": os.getpid() in pids,
                      "local": local, "s3": s3}))


if __name__ == "__main__":
    main()

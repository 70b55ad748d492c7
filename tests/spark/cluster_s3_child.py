"""Child process: a full pipeline on `local-cluster[2,1,1024]` into a bucket on the S3 server, with JSON records,
a Spark DataFrame and files (JSONL and Parquet read from the same S3 server) as inputs.

usage: cluster_s3_child.py BUCKET_URL SOURCE_URL PIPELINES_DIR (S3 credentials come from the environment, as
`DESTINATION__FILESYSTEM__CREDENTIALS__*` and `SOURCES__FILESYSTEM__CREDENTIALS__*`); prints one JSON line.
"""

from __future__ import annotations

import json
import os
import sys

import lakeload
from lakeload.demo.events import generate_events
from lakeload.sources.filesystem import filesystem, read_jsonl, read_parquet
from lakeload.spark.session import get_spark


def main() -> None:
    bucket_url, source_url, pipes = sys.argv[1], sys.argv[2], sys.argv[3]
    spark = get_spark("local-cluster[2,1,1024]", {"spark.executor.memory": "512m"})
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
    counts["jsonl_files"] = p.run(filesystem(source_url, "*.jsonl*", incremental=True) | read_jsonl(),
                                  table_name="file_events", loader_file_format="parquet").row_counts
    counts["again"] = p.run(filesystem(source_url, "*.jsonl*", incremental=True) | read_jsonl(),
                            table_name="file_events", loader_file_format="parquet").row_counts
    counts["parquet_files"] = p.run(filesystem(source_url, "*.parquet") | read_parquet(), table_name="file_rows").row_counts
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1  # minus the driver
    pids = spark.sparkContext.parallelize(range(8), 8).map(lambda _: os.getpid()).distinct().collect()
    stored = dict(p.dataset().row_counts())
    print(json.dumps({"executors": executors, "worker_pids": len(pids), "driver_in_workers": os.getpid() in pids,
                      "counts": counts, "stored": stored}))


if __name__ == "__main__":
    main()

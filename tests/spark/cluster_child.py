"""Child process: a full pipeline on `local-cluster[2,1,1024]` (executors are separate JVMs and Python workers).

usage: cluster_child.py BUCKET PIPELINES_DIR; prints one JSON line with what it checked.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import lakeload
from lakeload.demo.events import generate_events
from lakeload.spark.session import get_spark


def main() -> None:
    bucket, pipes = sys.argv[1], sys.argv[2]
    spark = get_spark("local-cluster[2,1,1024]", {"spark.executor.memory": "512m"})
    p = lakeload.pipeline("cluster", destination=lakeload.destinations.filesystem(bucket), dataset_name="ds", pipelines_dir=pipes)
    first = p.run(lakeload.resource(generate_events(3000), name="events"), loader_file_format="parquet")
    frame = spark.createDataFrame([(i, [f"t{i}", "x"]) for i in range(100)], "id long, tags array<string>")
    second = p.run(frame, table_name="frame_rows")
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1  # minus the driver
    sink_dir = os.path.join(pipes, "sink_out")
    os.makedirs(sink_dir, exist_ok=True)

    @lakeload.destination(batch_size=50)
    def to_files(items: list[dict[str, object]], table: dict[str, object]) -> None:
        with open(os.path.join(sink_dir, f"{os.getpid()}.jsonl"), "a") as f:
            for item in items:
                f.write(json.dumps(item) + "\n")

    sink_pipeline = lakeload.pipeline("cluster_sink", destination=to_files, pipelines_dir=pipes)
    sink_pipeline.run(lakeload.resource(generate_events(500), name="events"))
    sink_rows = {p: len(Path(sink_dir, p).read_text().splitlines()) for p in os.listdir(sink_dir)}
    pids = spark.sparkContext.parallelize(range(8), 8).map(lambda _: os.getpid()).distinct().collect()
    print(json.dumps({
        "executors": executors,
        "worker_pids": len(pids),
        "driver_pid_in_workers": os.getpid() in pids,
        "first": first.row_counts,
        "second": second.row_counts,
        "sink_rows": sum(sink_rows.values()),
        "sink_in_driver": f"{os.getpid()}.jsonl" in sink_rows,
    }))


if __name__ == "__main__":
    main()

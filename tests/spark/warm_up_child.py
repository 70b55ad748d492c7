"""Child process: `pipeline.run()` of a generator that waits, after its first page, for Spark to be ready.

usage: warm_up_child.py BUCKET PIPELINES_DIR WAIT_S; prints one JSON line: whether the session started and the
workers were warmed while the generator was still running, and the run's row counts.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from typing import Any


def main() -> None:
    bucket, pipelines_dir, wait_s = sys.argv[1], sys.argv[2], float(sys.argv[3])
    from pyspark import SparkContext

    import lakeload
    from lakeload.spark import warm_up

    seen: dict[str, Any] = {}

    def rows() -> Iterator[dict[str, Any]]:
        yield {"id": 0, "tags": ["a"]}
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and not warm_up._warmed:
            time.sleep(0.1)
        seen["session_during_extract"] = SparkContext._active_spark_context is not None
        seen["warmed_during_extract"] = bool(warm_up._warmed)
        yield from ({"id": i, "tags": ["b"] * i} for i in range(1, 5))

    pipeline = lakeload.pipeline("warm", destination=lakeload.destinations.filesystem(bucket), dataset_name="ds",
                                 pipelines_dir=pipelines_dir)
    info = pipeline.run(rows(), table_name="items")
    print(json.dumps({**seen, "row_counts": info.row_counts}))


if __name__ == "__main__":
    main()

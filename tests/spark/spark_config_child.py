"""Child process: a pipeline's Spark session started from lakeload's configuration (env, TOML, spark-submit).

Run from a folder with `.lakeload/config.toml`; prints one JSON line: the master, the settings the tests
look at, and the environment marker the executors' Python reports.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

import lakeload

KEYS = (
    "spark.sql.shuffle.partitions", "spark.executor.memory", "spark.sql.adaptive.coalescePartitions.enabled",
    "spark.sql.session.timeZone", "spark.ui.enabled",
)


def worker_marker(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for _ in batches:
        yield pa.RecordBatch.from_pylist([{"marker": os.environ.get("LAKELOAD_TEST_WORKER", "none")}])


def vm_option(jvm: Any, name: str) -> str:
    """The value of a HotSpot option in the driver's running JVM."""
    bean = jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean")
    return str(jvm.java.lang.management.ManagementFactory.getPlatformMXBean(bean).getVMOption(name).getValue())


def main() -> None:
    spark = lakeload.pipeline("child", destination="filesystem").spark
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    marker = spark.range(1, numPartitions=1).mapInArrow(worker_marker, "marker string").collect()[0][0]
    print(json.dumps({
        "master": spark.sparkContext.master,
        "conf": {key: spark.conf.get(key, None) for key in KEYS},
        "worker": marker,
        "tier4_invocations": vm_option(jvm, "Tier4InvocationThreshold"),
        "tier4_back_edges": vm_option(jvm, "Tier4BackEdgeThreshold"),
        "java_property": jvm.System.getProperty("lakeload.test.option"),
    }))


if __name__ == "__main__":
    main()

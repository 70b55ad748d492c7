"""Child process of test_class_archive.py: starts lakeload's own Spark session, runs one Python job, prints JSON."""

from __future__ import annotations

import json

from lakeload.kernel.spark.warm import probe
from lakeload.spark.session import get_spark, run_tasks

if __name__ == "__main__":
    spark = get_spark("local[1]")
    options = spark.sparkContext.getConf().get("spark.driver.extraJavaOptions", "")
    runtime = spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()  # type: ignore[union-attr]
    print(json.dumps({"options": options, "jvm_args": list(runtime.getInputArguments()),
                      "result": run_tasks(spark, probe, (2, 0.0), [1, 2, 3], "archive check")}))

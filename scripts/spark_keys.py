"""Write lakeload/spark/spark_keys.txt: every setting Spark's config registries define, in Spark's spelling.

lakeload reads single Spark settings from upper-case environment names (`SPARK__CONF__SPARK__EXECUTOR__MEMORYOVERHEAD`)
and needs this list to give such a name back its case (`spark.executor.memoryOverhead`). Run it again after a
Spark upgrade:

    .venv/bin/python scripts/spark_keys.py

It starts a bare Spark JVM (no SparkContext), loads the Scala objects that register config entries (core,
SQL, Python, UI, deploy, Kubernetes, YARN, Connect, Hive, streaming) and dumps `ConfigEntry.knownConfigs`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent.parent / "lakeload" / "spark" / "spark_keys.txt"
REGISTRIES = [
    *(f"org.apache.spark.internal.config.{name}$" for name in (
        "package", "Deploy", "History", "Kryo", "Network", "Python", "R", "Status", "Streaming", "Tests", "UI", "Worker",
    )),
    "org.apache.spark.sql.internal.SQLConf$",
    "org.apache.spark.sql.internal.StaticSQLConf$",
    "org.apache.spark.sql.connect.config.Connect$",
    "org.apache.spark.sql.connect.common.config.ConnectCommon$",
    "org.apache.spark.deploy.k8s.Config$",
    "org.apache.spark.deploy.yarn.config.package$",
    "org.apache.spark.streaming.StreamingConf$",
    "org.apache.spark.sql.hive.HiveUtils$",
]
# documented settings SparkConf reads directly, without a registered ConfigEntry
UNREGISTERED = ["spark.app.name", "spark.local.dir", "spark.master"]


def known_keys() -> list[str]:
    from pyspark import __version__
    from pyspark.java_gateway import launch_gateway

    gateway = launch_gateway()
    jvm = gateway.jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    for name in REGISTRIES:
        try:
            jvm.java.lang.Class.forName(name, True, loader)
        except Exception as exc:  # a module missing from this Spark build registers nothing
            print(f"skipped {name}: {str(exc).splitlines()[0]}", file=sys.stderr)
    entry = jvm.java.lang.Class.forName("org.apache.spark.internal.config.ConfigEntry$", True, loader)
    method = entry.getDeclaredMethod("knownConfigs", gateway.new_array(jvm.java.lang.Class, 0))
    method.setAccessible(True)
    known = method.invoke(entry.getField("MODULE$").get(None), gateway.new_array(jvm.java.lang.Object, 0))
    keys = sorted({str(key) for key in known.keySet()} | set(UNREGISTERED))
    print(f"{len(keys)} settings of Spark {__version__}", file=sys.stderr)
    return keys


def main() -> None:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark import __version__

    keys = known_keys()
    OUTPUT.write_text(f"# Spark {__version__} settings, written by scripts/spark_keys.py\n" + "\n".join(keys) + "\n")


if __name__ == "__main__":
    main()

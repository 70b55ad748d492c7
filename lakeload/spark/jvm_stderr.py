"""The driver JVM's standard error, copied to this process' without the line Spark's launcher makes every JVM print.

Spark 4's launcher starts each JVM with `--add-modules=jdk.incubator.vector`, and the JVM answers with
`WARNING: Using incubator modules: jdk.incubator.vector` on its standard error before any logging is set up
(lakeload's log4j configuration sends Spark's own log to a file). When lakeload starts the driver's JVM it gives
it a pipe as standard error; a daemon thread, reading from before the JVM starts, copies every other line to
`sys.stderr` as it comes, so a JVM that cannot start, a crash report or an `OutOfMemoryError` still reaches
the console.

>>> is_noise(b"WARNING: Using incubator modules: jdk.incubator.vector\\n")
True
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Mapping
from typing import IO, Any

NOISE = (b"WARNING: Using incubator modules:",)


def is_noise(line: bytes) -> bool:
    """True for a line of the JVM's standard error that says nothing to the user."""
    return line.startswith(NOISE)


def launch_gateway(app_name: str, master: str, conf: Mapping[str, str]) -> Any:
    """Start the driver's JVM as pyspark would for a session of `conf`, its standard error filtered."""
    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway as pyspark_launch

    spark_conf = SparkConf().setAppName(app_name).setMaster(master)
    for key, value in conf.items():
        spark_conf.set(key, value)
    read_fd, write_fd = os.pipe()
    reader = os.fdopen(read_fd, "rb")
    copier = threading.Thread(target=forward, args=(reader,), name="lakeload-jvm-stderr", daemon=True)
    copier.start()
    try:
        gateway = pyspark_launch(spark_conf, popen_kwargs={"stderr": write_fd})
    except BaseException:
        os.close(write_fd)
        copier.join(timeout=5)  # the JVM ended: its last words reach the console before the error does
        raise
    os.close(write_fd)  # the JVM holds its own copy: the copier ends when the JVM does
    return gateway


def forward(reader: IO[bytes], target: IO[str] | None = None) -> None:
    """Copy the lines of `reader` but noise to `target` (the current `sys.stderr` when None) until the end of
    `reader`. Lines that cannot be written (a console closed at exit) are dropped: the JVM must never block on a
    full pipe."""
    with reader:
        for line in iter(reader.readline, b""):
            if is_noise(line):
                continue
            with contextlib.suppress(OSError, ValueError, AttributeError):
                out = target if target is not None else sys.stderr
                out.write(line.decode("utf-8", errors="replace"))
                out.flush()

"""The driver JVM's standard error, copied to this process' without the line Spark's launcher makes every JVM print.

Spark 4's launcher starts each JVM with `--add-modules=jdk.incubator.vector`, and the JVM answers with
`WARNING: Using incubator modules: jdk.incubator.vector` on its standard error before any logging is set up
(lakeload's log4j configuration sends Spark's own log to a file). When lakeload starts the driver's JVM it gives
it a pipe as standard error; a daemon thread, reading from before the JVM starts, copies every other line to
`sys.stderr` as it comes, so a JVM that cannot start, a crash report or an `OutOfMemoryError` still reaches
the console.

Its standard output goes through a pipe of this process too, copied whole to `sys.stdout` (what executors'
Python workers print arrives there). So the JVM never holds the caller's own output: when the script ends, the
JVM still takes about half a second to stop, and a caller reading the script's output through a pipe
(`| tee`, `subprocess.run(capture_output=True)`, an orchestrator) would wait for it.

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
_outputs: list[IO[bytes]] = []  # the read ends of the pipes of the JVM this process started (`output_fds`)


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
    err_copier, err_fd = _copier("lakeload-jvm-stderr", "stderr")
    out_copier, out_fd = _copier("lakeload-jvm-stdout", "stdout")
    try:
        gateway = pyspark_launch(spark_conf, popen_kwargs={"stderr": err_fd, "stdout": out_fd})
    except BaseException:
        os.close(err_fd)
        os.close(out_fd)
        err_copier.join(timeout=5)  # the JVM ended: its last words reach the console before the error does
        out_copier.join(timeout=5)
        raise
    os.close(err_fd)  # the JVM holds its own copies: the copiers end when the JVM does
    os.close(out_fd)
    return gateway


def output_fds() -> tuple[int, ...]:
    """The read ends of the JVM's standard output and error pipes (open while the JVM lives): a process that takes
    the JVM over when this one exits (`lakeload.spark.handover`) reads them from then on."""
    return tuple(reader.fileno() for reader in _outputs if not reader.closed)


def _copier(name: str, stream: str) -> tuple[threading.Thread, int]:
    """A daemon thread copying a new pipe to `sys.<stream>` (started), and the pipe's end to write to."""
    read_fd, write_fd = os.pipe()
    reader = os.fdopen(read_fd, "rb")
    _outputs.append(reader)
    copier = threading.Thread(target=forward, args=(reader, None, stream), name=name, daemon=True)
    copier.start()
    return copier, write_fd


def forward(reader: IO[bytes], target: IO[str] | None = None, stream: str = "stderr") -> None:
    """Copy the lines of `reader` but noise to `target` (the current `sys.<stream>` when None) until the end of
    `reader`. Lines that cannot be written (a console closed at exit) are dropped: the JVM must never block on a
    full pipe."""
    with reader:
        for line in iter(reader.readline, b""):
            if is_noise(line):
                continue
            with contextlib.suppress(OSError, ValueError, AttributeError):
                out = target if target is not None else getattr(sys, stream)
                out.write(line.decode("utf-8", errors="replace"))
                out.flush()

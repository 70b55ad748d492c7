"""A JVM class-data archive for the Spark sessions lakeload starts: Spark starts ~3 s sooner.

Spark's driver JVM loads tens of thousands of classes from its jars at every start, and again while the first
query runs. Java's class-data sharing (CDS) maps them from an archive instead. The first session lakeload starts
on a machine (for a given Java, pyspark and jar set: the archive's key) runs with
`-XX:ArchiveClassesAtExit`: when its process ends, the JVM writes the classes it loaded to a temporary file,
which lakeload waits for (a few seconds, once) and then renames into place. Later sessions start with
`-XX:SharedArchiveFile`. An archive Java cannot use for a session is ignored by Java; one it cannot read makes
lakeload start that session again without it and delete it.

The archives live in `~/.cache/lakeload/jvm/` (`$XDG_CACHE_HOME`), about 150 MB each. `[spark] class_archive =
false` (env `SPARK__CLASS_ARCHIVE=false`) turns this off.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import hashlib
import logging
import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lakeload.spark.settings import add_java_options

logger = logging.getLogger("lakeload.spark")
MAGIC = b"\xa8\xab\x0b\xf0"  # a dynamic CDS archive's first bytes (0xf00baba8, little-endian)
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"  # Java's CDS notes would go to the terminal
EXIT_WAIT_S = 60.0
STALE_PART_S = 600.0  # a temporary archive older than this was left by a process that died
_KEYED_CONF = ("spark.jars", "spark.jars.packages", "spark.driver.extraClassPath")  # they change the classpath
_pending: list[ClassArchive] = []  # the archive this process's JVM writes when it ends (`finish_at_exit`)


def cache_dir() -> str:
    """Where the archives are kept: `$XDG_CACHE_HOME/lakeload/jvm` (`~/.cache/lakeload/jvm`)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "lakeload", "jvm")


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    candidate = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(candidate) if candidate and os.path.exists(candidate) else None


def archive_key(conf: Mapping[str, str], role: str = "session") -> str | None:
    """What an archive is valid for: the Java binary, pyspark's jars, the settings that change the classpath and
    the JVM's `role` (an in-process `session` or the `connect-server`, which loads other classes)."""
    import pyspark

    java = _java()
    if java is None:
        return None
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    binaries = [java, os.path.join(os.path.dirname(os.path.dirname(java)), "lib", "server", "libjvm.so")]
    stats = [f"{path}:{st.st_size}:{int(st.st_mtime)}" for path in binaries if (st := _stat(path)) is not None]
    listed = sorted(os.listdir(jars)) if os.path.isdir(jars) else []
    # the jars' folder itself: Java checks an archive's classpath, so another environment needs its own
    parts = [*stats, pyspark.__version__, os.path.realpath(jars), *listed, *(f"{k}={conf.get(k, '')}" for k in _KEYED_CONF)]
    # an in-process session's JVM may become the warm engine (`handover`): its archive holds Spark Connect's and SQL's
    # classes too, which archives written before that lacked
    parts.append(role if role != "session" else "session-kept")
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _usable(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == MAGIC and os.path.getsize(path) > (1 << 20)
    except OSError:
        return False


@dataclass
class ClassArchive:
    """The archive of one session start: used (`path` exists) or written when the process ends (`part`)."""

    path: str
    part: str | None = None

    @property
    def java_options(self) -> str:
        crash_report = os.path.join(os.path.dirname(self.path), "hs_err_pid%p.log")  # not in the user's folder
        if self.part is not None:
            return f"-XX:ArchiveClassesAtExit={self.part} {QUIET} -XX:ErrorFile={crash_report}"
        return f"-XX:SharedArchiveFile={self.path} -Xshare:auto {QUIET} -XX:ErrorFile={crash_report}"

    def discard(self) -> None:
        """The archive could not be used: remove it (the next session writes a new one)."""
        for name in (self.path, self.part):
            if name is not None and os.path.exists(name):
                os.remove(name)

    def promote(self) -> bool:
        """Put the archive a JVM wrote at exit in place (True), or remove a part that is not a usable archive."""
        if self.part is None or not os.path.exists(self.part):
            return False
        if _usable(self.part):
            os.replace(self.part, self.path)
            return True
        os.remove(self.part)
        return False

    def finish_at_exit(self, gateway: Any) -> None:
        """When this process ends, wait for the JVM to write the archive, then put it in place."""
        proc = getattr(gateway, "proc", None)
        if self.part is None or proc is None:
            return
        _pending[:] = [self]
        atexit.register(_promote, proc, self.part, self.path)


def pending_archive() -> ClassArchive | None:
    """The archive this process's JVM writes when it ends, or None when it writes none."""
    return _pending[0] if _pending else None


def outlive_process() -> None:
    """This process's JVM lives on after it (`lakeload.spark.handover`): neither stopped nor awaited at exit (the
    `part` of its archive is put in place by whoever stops that JVM)."""
    atexit.unregister(_promote)


def _promote(proc: Any, part: str, path: str) -> None:
    from pyspark import SparkContext

    try:
        active = SparkContext._active_spark_context
        if active is not None:
            active.stop()  # also ends PySpark's accumulator server, which would print an EOFError otherwise
        if proc.stdin is not None:
            proc.stdin.close()  # the gateway JVM ends when its stdin closes, writing the archive first
        proc.wait(timeout=EXIT_WAIT_S)
    except Exception:  # at exit: never raise (a JVM that does not end in time leaves its part file)
        return
    if proc.returncode == 0:
        ClassArchive(path, part).promote()
    elif os.path.exists(part):
        os.remove(part)


def _clean_parts(folder: str, key: str) -> bool:
    """Remove temporary archives of dead processes; True when one is being written right now."""
    busy = False
    for part in glob.glob(os.path.join(folder, f"spark-{key}.*.part")):
        try:
            age = time.time() - os.path.getmtime(part)
        except OSError:
            continue
        if age > STALE_PART_S:
            with contextlib.suppress(OSError):
                os.remove(part)
        else:
            busy = True
    return busy


def class_archive(conf: Mapping[str, str], role: str = "session") -> ClassArchive | None:
    """The archive for a JVM in `role` started with `conf`, or None (no Java found, cache not writable, another
    process is writing it)."""
    key = archive_key(conf, role)
    if key is None:
        return None
    folder = cache_dir()
    path = os.path.join(folder, f"spark-{key}.jsa")
    if _usable(path):
        return ClassArchive(path)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    if _clean_parts(folder, key) or not os.access(folder, os.W_OK):
        return None
    return ClassArchive(path, os.path.join(folder, f"spark-{key}.{os.getpid()}.part"))


def with_archive(conf: Mapping[str, str], archive: ClassArchive) -> dict[str, str]:
    """`conf` with the archive's options added to the driver's Java options."""
    return add_java_options(conf, "spark.driver.extraJavaOptions", archive.java_options)

"""The driver JVM's standard error reaches the console without the launcher's incubator-module warning."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lakeload.spark.jvm_stderr import forward, is_noise

REPO = Path(__file__).resolve().parents[2]
INCUBATOR = b"WARNING: Using incubator modules: jdk.incubator.vector\n"
CHILD = """
import sys
import lakeload
p = lakeload.pipeline("quiet", destination=lakeload.destinations.filesystem(sys.argv[1] + "/bucket"),
                      dataset_name="ds", pipelines_dir=sys.argv[1] + "/pipelines")
p.run([{"id": 1, "tags": ["a", "b"]}], table_name="t")
print(p.dataset()("SELECT count(*) FROM t__tags").fetchall()[0][0])
"""


class Closed(io.StringIO):
    def write(self, text: str) -> int:
        raise ValueError("I/O operation on closed file")


def test_forward_drops_the_warning_and_keeps_every_other_line() -> None:
    target = io.StringIO()
    forward(io.BytesIO(b"first\n" + INCUBATOR + b"# A fatal error has been detected\n\xff tail"), target)
    assert target.getvalue() == "first\n# A fatal error has been detected\n\ufffd tail"
    assert is_noise(INCUBATOR) and not is_noise(b"WARNING: something else\n")


def test_forward_reads_to_the_end_when_the_console_is_gone() -> None:
    """The JVM must never block on a full pipe: lines that cannot be written are dropped, the reading goes on."""
    reader = io.BytesIO(b"line\n" * 100_000)
    forward(reader, Closed())
    assert reader.closed  # read to its end, then closed


def run_child(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK__", "JDK_JAVA_OPTIONS"))}
    tmp_path.mkdir(parents=True)
    environ.update(PYTHONPATH=str(REPO), HOME=str(tmp_path / "home"), SPARK__MASTER="local[1]", **env)
    return subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], env=environ, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)


@pytest.mark.slow  # two fresh processes, each starting its own Spark
def test_a_fresh_run_prints_nothing_on_stderr_but_what_the_jvm_has_to_say(tmp_path: Path) -> None:
    quiet = run_child(tmp_path / "quiet")
    assert quiet.returncode == 0, quiet.stderr[-3000:]
    assert quiet.stdout.strip().splitlines()[-1] == "2"
    assert quiet.stderr == ""
    noted = run_child(tmp_path / "noted", JDK_JAVA_OPTIONS="-Dlakeload.test.marker=1")
    assert noted.returncode == 0, noted.stderr[-3000:]
    assert "Picked up JDK_JAVA_OPTIONS: -Dlakeload.test.marker=1" in noted.stderr  # the JVM's own note: copied
    assert "incubator" not in noted.stderr


def test_the_jvm_writes_to_pipes_this_process_reads_not_to_its_callers_output(spark: object) -> None:
    """The JVM takes a moment to stop after the script ends: holding the caller's stdout or stderr, it would keep
    a caller that reads the script's output through a pipe (`| tee`, `capture_output=True`) waiting for it."""
    from pyspark import SparkContext

    proc = getattr(SparkContext._gateway, "proc", None)
    if proc is None:
        pytest.skip("this test process did not start its JVM itself")
    mine = {os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd") if fd not in ("1", "2")
            if os.path.exists(f"/proc/self/fd/{fd}")}
    for fd in (1, 2):
        target = os.readlink(f"/proc/{proc.pid}/fd/{fd}")
        assert target.startswith("pipe:") and target in mine, (fd, target)

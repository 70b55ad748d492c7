"""Two real processes, one pipeline, one working folder: the second fails clearly or waits, and never destroys
the first one's packages; a holder killed with SIGKILL leaves no lock behind."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from bucket_utils import loads_records, read_rows

import lakeload
from lakeload.errors import PipelineLockedError
from lakeload.extract.resource import Resource
from lakeload.storage.packages import EXTRACTING

CHILD = Path(__file__).with_name("two_runs_child.py")


def start_child(bucket: Path, pipes: Path, signals: Path, mode: str, first: int, later: int) -> subprocess.Popen[str]:
    """The child pipeline process, once its generator is inside extract (its package in `extracting/`)."""
    signals.mkdir(exist_ok=True)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(bucket), str(pipes), str(signals), mode, str(first), str(later)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    deadline = time.monotonic() + 180
    while not (signals / "inside").exists():
        if child.poll() is not None or time.monotonic() > deadline:
            os.killpg(child.pid, signal.SIGKILL)
            raise AssertionError(f"child never reached extract: {child.communicate()[1][-3000:]}")
        time.sleep(0.1)
    return child


def extracting(pipes: Path) -> list[str]:
    folder = pipes / "shared_pipe" / "load" / EXTRACTING
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def make_pipeline(bucket: Path, pipes: Path, spark: Any) -> Any:
    return lakeload.pipeline("shared_pipe", destination=lakeload.destinations.filesystem(str(bucket)),
                             dataset_name="ds", pipelines_dir=str(pipes), spark=spark)


class WaitingSeen(logging.Handler):
    """Creates the child's release file when lakeload logs that it waits for the lock (and counts those lines)."""

    def __init__(self, release: Path) -> None:
        super().__init__(logging.WARNING)
        self.release_file, self.lines = release, []  # type: ignore[var-annotated]

    def emit(self, record: logging.LogRecord) -> None:
        if "waiting up to" in record.getMessage():
            self.lines.append(record.getMessage())
            threading.Timer(1.0, self.release_file.write_text, ("go",)).start()  # while we wait, the child goes on


@pytest.mark.slow  # ~25 s: the child starts its own Spark
def test_second_process_fails_or_waits_and_both_runs_land(
    bucket: Path, pipelines_dir: Path, tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    signals = tmp_path / "signals"
    child = start_child(bucket, pipelines_dir, signals, "run", 40, 60)
    try:
        in_flight = extracting(pipelines_dir)
        assert len(in_flight) == 1
        p = make_pipeline(bucket, pipelines_dir, spark)  # constructing a pipeline does not need the lock
        mine = [{"id": 1000 + i, "run": "parent"} for i in range(25)]

        monkeypatch.setenv("PIPELINE__LOCK", "fail")
        with pytest.raises(PipelineLockedError) as refused:
            p.run(mine, table_name="rows")
        assert refused.value.holder_pid == child.pid
        assert f"Pipeline 'shared_pipe' is in use by another process (pid {child.pid} on host" in str(refused.value)
        assert extracting(pipelines_dir) == in_flight  # the child's package in extraction is untouched

        monkeypatch.setenv("PIPELINE__LOCK", "wait")
        monkeypatch.setenv("SHARED_PIPE__PIPELINE__LOCK_TIMEOUT", "120")
        seen = WaitingSeen(signals / "release")
        logging.getLogger("lakeload.pipeline").addHandler(seen)
        try:
            info = p.run(mine, table_name="rows")  # waits for the child's whole run, then runs
        finally:
            logging.getLogger("lakeload.pipeline").removeHandler(seen)
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err[-3000:]
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    assert len(seen.lines) == 1 and f"pid {child.pid}" in seen.lines[0] and "up to 120 s" in seen.lines[0]
    assert info.row_counts == {"rows": 25}
    rows = read_rows(bucket, "ds", "rows")
    assert sum(r["run"] == "child" for r in rows) == 100 and sum(r["run"] == "parent" for r in rows) == 25
    assert len(rows) == 125 and len({r["id"] for r in rows}) == 125
    child_load = out.split("LOADED ")[1].strip()
    assert sorted(r["load_id"] for r in loads_records(bucket, "ds")) == sorted([child_load, *info.load_ids])


def test_killed_holder_frees_the_lock_and_its_package_is_recovered(
    bucket: Path, pipelines_dir: Path, tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    child = start_child(bucket, pipelines_dir, tmp_path / "signals", "extract", 30, 0)
    assert len(extracting(pipelines_dir)) == 1
    monkeypatch.setenv("PIPELINE__LOCK", "fail")
    p = make_pipeline(bucket, pipelines_dir, spark)
    with pytest.raises(PipelineLockedError, match=f"pid {child.pid} "):
        p.drop_pending_packages()
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    info = p.run([{"id": i, "run": "parent"} for i in range(7)], table_name="rows")  # lock = "fail": no waiting
    assert info.row_counts == {"rows": 7}
    assert extracting(pipelines_dir) == []  # the dead run's half-extracted package was dropped by recovery
    rows = read_rows(bucket, "ds", "rows")
    assert len(rows) == 7 and {r["run"] for r in rows} == {"parent"}
    assert len(loads_records(bucket, "ds")) == 1


def test_state_another_run_saved_is_read_before_it_is_extended(bucket: Path, pipelines_dir: Path) -> None:
    """A pipeline object made before another one ran (as in a waiting process) extends the newer state."""

    def count(context: Any) -> Any:
        state = context.resource_state()
        state["runs"] = state.get("runs", 0) + 1
        yield {"run": state["runs"]}

    def counted() -> Resource:
        return Resource("counted", count, takes_context=True)

    first = make_pipeline(bucket, pipelines_dir, None)
    first.extract(counted())
    waiting = make_pipeline(bucket, pipelines_dir, None)  # reads state with runs = 1
    first.extract(counted())  # saves runs = 2
    waiting.extract(counted())  # must see runs = 2, not its stale 1
    stored = waiting.storage.load_state()["sources"]
    assert stored[waiting.default_schema_name]["resources"]["counted"]["runs"] == 3

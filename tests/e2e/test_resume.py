"""A loading process killed with SIGKILL mid-normalize or mid-load; the next run() finishes the package.

Each pipeline run is its own process (own Spark JVM) started in a new process group, and the kill
takes the whole group (driver, JVM, Python workers), like a machine that loses power.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from bucket_utils import loads_records, read_rows

CHILD = Path(__file__).with_name("resume_child.py")
# rows made by resume_child.batch: users 50 (+30 in the second batch); pets: sum of i % 3
FIRST_USERS, FIRST_PETS = 50, sum(i % 3 for i in range(50))
SECOND_USERS, SECOND_PETS = 30, sum(i % 3 for i in range(1000, 1030))


def run_child(bucket: Path, pipes: Path, *args: str, extra_env: dict[str, str] | None = None) -> str:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, **(extra_env or {}))
    done = subprocess.run([sys.executable, str(CHILD), str(bucket), str(pipes), *args], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def load_first_in_process(bucket: Path, pipes: Path, disposition: str = "append", table_format: str | None = None) -> None:
    """What `resume_child.py ... first` loads, in this test process with its Spark session (one JVM start
    fewer than a child: the runs that are killed and resumed stay child processes)."""
    sys.path.insert(0, str(CHILD.parent))
    from resume_child import load

    load(str(bucket), str(pipes), "first", disposition, table_format)


def kill_child_in(
    bucket: Path, pipes: Path, tmp_path: Path, step: str, *args: str, extra_env: dict[str, str] | None = None
) -> None:
    marker = tmp_path / f"paused-{step}"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, **(extra_env or {}))
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(bucket), str(pipes), *args, "--pause-in", step, "--marker", str(marker)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    deadline = time.monotonic() + 240
    while not marker.exists():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            raise AssertionError(f"child never reached {step}: {child.stderr.read().decode()[-3000:] if child.stderr else ''}")
        time.sleep(0.2)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL


@pytest.mark.slow  # child processes with their own Spark, killed and resumed
def test_kill_during_normalize_then_run_finishes_the_package(bucket: Path, tmp_path: Path, spark: Any) -> None:
    pipes = tmp_path / "pipes"
    load_first_in_process(bucket, pipes)
    kill_child_in(bucket, pipes, tmp_path, "normalize", "second")
    assert len(loads_records(bucket, "ds")) == 1
    assert (pipes / "resumable" / "load" / "normalizing").exists()  # the half-done normalize is on disk
    out = run_child(bucket, pipes, "resume")
    assert "LOADED " in out and len(out.split("LOADED ")[1].strip().split(",")) == 1
    assert len(read_rows(bucket, "ds", "users")) == FIRST_USERS + SECOND_USERS
    assert len(read_rows(bucket, "ds", "users__pets")) == FIRST_PETS + SECOND_PETS
    assert len(loads_records(bucket, "ds")) == 2
    assert list((pipes / "resumable" / "load" / "extracted").iterdir()) == []


@pytest.mark.slow  # child processes with their own Spark, killed and resumed
@pytest.mark.parametrize("disposition", ["append", "replace"])
def test_kill_during_load_then_run_completes_without_duplicates(
    bucket: Path, tmp_path: Path, disposition: str, spark: Any
) -> None:
    """`append` keeps its packages under `[spark] working_url` (a folder of its own; the pipelines folder keeps
    only the state), `replace` in the pipelines folder."""
    pipes, shared = tmp_path / "pipes", tmp_path / "shared"
    env = {"SPARK__WORKING_URL": shared.as_uri()} if disposition == "append" else {}
    if env:  # the working_url of a child's environment
        run_child(bucket, pipes, "first", "--disposition", disposition, extra_env=env)
    else:
        load_first_in_process(bucket, pipes, disposition)
    kill_child_in(bucket, pipes, tmp_path, "load", "second", "--disposition", disposition, extra_env=env)
    if env:
        assert (shared / "resumable" / "load" / "normalized").exists() and not (pipes / "resumable" / "load").exists()
    markers = loads_records(bucket, "ds")
    assert len(markers) == 1  # the killed load has no completion marker
    partial = {r["_dlt_load_id"] for r in read_rows(bucket, "ds", "users")} - {markers[0]["load_id"]}
    assert len(partial) <= 1  # some files of the unfinished load may be visible, unmarked
    run_child(bucket, pipes, "resume", extra_env=env)
    users = read_rows(bucket, "ds", "users")
    pets = read_rows(bucket, "ds", "users__pets")
    if disposition == "append":
        assert (len(users), len(pets)) == (FIRST_USERS + SECOND_USERS, FIRST_PETS + SECOND_PETS)
    else:
        assert (len(users), len(pets)) == (SECOND_USERS, SECOND_PETS)
    assert len({r["_dlt_id"] for r in users}) == len(users)
    assert len(loads_records(bucket, "ds")) == 2
    if env:
        assert list((shared / "resumable" / "load" / "normalized").iterdir()) == []
        assert (pipes / "resumable" / "state.json").exists() and not (pipes / "resumable" / "load").exists()

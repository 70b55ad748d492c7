"""`kill -9` at each commit boundary of an Iceberg merge of a three-level tree, then the next run: rows exact,
no nested row without its parent, and no step of the load committed twice to any table (each snapshot mark once).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.iceberg.target import MARK

CHILD = Path(__file__).with_name("iceberg_kill_child.py")
FIRST = [{"id": i, "pets": [{"name": f"p{i}.{k}", "toys": [f"t{i}.{k}.0", f"t{i}.{k}.1"]} for k in range(2)]} for i in range(4)]
SECOND = [{"id": 2, "pets": [{"name": "new2", "toys": ["x"]}]}, {"id": 9, "pets": [{"name": "p9", "toys": ["y", "z"]}]}]
TABLES = ("users", "users__pets", "users__pets__toys")


def pipeline(bucket: str, pipes: str) -> lakeload.Pipeline:
    return lakeload.pipeline("kill", destination=lakeload.destinations.filesystem(bucket), dataset_name="ds",
                             pipelines_dir=pipes)


def users(rows: list[dict[str, Any]]) -> Any:
    return lakeload.resource(rows, name="users", write_disposition="merge", primary_key="id", table_format="iceberg")


def expected() -> dict[str, list[str]]:
    final = {r["id"]: r for r in FIRST} | {r["id"]: r for r in SECOND}
    pets = sorted(p["name"] for r in final.values() for p in r["pets"])
    toys = sorted(t for r in final.values() for p in r["pets"] for t in p["toys"])
    return {"users": sorted(str(i) for i in final), "users__pets": pets, "users__pets__toys": toys}


@pytest.mark.slow  # a child process with its own Spark per kill point
@pytest.mark.parametrize("kill_at", ["1", "2", "3", "4", "5", "after"])
def test_killed_at_a_commit_boundary_the_next_run_finishes_exactly_once(tmp_path: Path, kill_at: str, spark: Any) -> None:
    bucket, pipes = str(tmp_path / "bucket"), str(tmp_path / "pipes")
    p = pipeline(bucket, pipes)
    p.run(users(FIRST))
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join([str(CHILD.parent), *filter(None, [os.environ.get("PYTHONPATH")])]))
    done = subprocess.run([sys.executable, str(CHILD), bucket, pipes, kill_at], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr[-3000:]
    p = pipeline(bucket, pipes)
    p.load()  # what the next run does first: the pending package, finished
    assert not p.list_normalized_load_packages()
    with p.sql_client() as client:
        got = {
            "users": sorted(str(r[0]) for r in client.execute_sql("SELECT id FROM users")),
            "users__pets": sorted(r[0] for r in client.execute_sql("SELECT name FROM users__pets")),
            "users__pets__toys": sorted(r[0] for r in client.execute_sql("SELECT value FROM users__pets__toys")),
        }
        orphans = client.execute_sql(
            "SELECT count(*) FROM users__pets p LEFT JOIN users u ON p._dlt_parent_id = u._dlt_id WHERE u._dlt_id IS NULL "
            "UNION ALL SELECT count(*) FROM users__pets__toys t LEFT JOIN users__pets p ON t._dlt_parent_id = p._dlt_id "
            "WHERE p._dlt_id IS NULL")
    assert got == expected() and orphans == [(0,), (0,)]
    from lakeload.iceberg import get_iceberg_tables

    for name, table in get_iceberg_tables(p).items():
        marks = [s.summary.additional_properties.get(MARK) for s in table.snapshots() if s.summary]
        assert len([m for m in marks if m]) == len({m for m in marks if m}), (name, marks)  # no step twice

"""Delta loads killed between writing files and committing them (concurrent writers: test_delta_concurrency.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from test_resume import (
    FIRST_PETS,
    FIRST_USERS,
    SECOND_PETS,
    SECOND_USERS,
    kill_child_in,
    load_first_in_process,
    run_child,
)


def versions(bucket: Path, table: str) -> list[str]:
    return [h["operation"] for h in reversed(DeltaTable(str(bucket / "ds" / table)).history())]


def count(bucket: Path, table: str) -> int:
    return DeltaTable(str(bucket / "ds" / table)).to_pyarrow_table().num_rows


@pytest.mark.slow  # child processes with their own Spark, killed and resumed
@pytest.mark.parametrize("disposition", ["append", "merge"])
def test_killed_before_commit_keeps_previous_version_and_rerun_commits_once(
    bucket: Path, pipelines_dir: Path, tmp_path: Path, disposition: str, spark: Any
) -> None:
    fmt = ("--table-format", "delta", "--disposition", disposition)
    load_first_in_process(bucket, pipelines_dir, disposition, "delta")
    first = {t: versions(bucket, t) for t in ("users", "users__pets")}
    kill_child_in(bucket, pipelines_dir, tmp_path, "commit", "second", *fmt)
    # one table committed, the other's files written but not committed: it still shows its previous version
    after_kill = {t: versions(bucket, t) for t in ("users", "users__pets")}
    assert sum(len(after_kill[t]) - len(first[t]) for t in after_kill) == 1
    uncommitted = next(t for t in after_kill if after_kill[t] == first[t])
    assert count(bucket, uncommitted) == (FIRST_USERS if uncommitted == "users" else FIRST_PETS)
    orphans = [p for p in (bucket / "ds" / uncommitted).glob("*.parquet") if p.name not in
               {u.rsplit("/", 1)[-1] for u in DeltaTable(str(bucket / "ds" / uncommitted)).file_uris()}]
    assert orphans, "the killed load had written the files it did not commit"
    run_child(bucket, pipelines_dir, "resume")
    for t in ("users", "users__pets"):
        assert len(versions(bucket, t)) - len(first[t]) == 1, (t, versions(bucket, t))  # exactly one commit per load
    assert count(bucket, "users") == FIRST_USERS + SECOND_USERS
    assert count(bucket, "users__pets") == FIRST_PETS + SECOND_PETS

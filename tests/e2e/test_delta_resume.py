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

import lakeload
from lakeload.delta import tree as delta_tree
from lakeload.delta.commit import DeltaTarget
from lakeload.errors import DeltaConflictError, LoadStepFailed, PipelineStepFailed


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


def test_a_lost_commit_is_caught_as_delta_conflict_and_as_step_failed(
    bucket: Path, pipelines_dir: Path, spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer commits to the table right before every commit of a replace load: the load reads the table
    again and redoes its work each time, and after the last try `except DeltaConflictError:` around `run()` catches
    the failure (as the README shows), and so does `except PipelineStepFailed:`; nothing is lost or half done."""
    from deltalake import write_deltalake

    pipeline = lakeload.pipeline("conflict", destination=lakeload.destinations.filesystem(str(bucket)),
                                 dataset_name="ds", pipelines_dir=str(pipelines_dir))
    pipeline.run([{"id": i} for i in range(4)], table_name="t", table_format="delta")
    real_commit, other = DeltaTarget.commit, DeltaTable(str(bucket / "ds" / "t")).to_pyarrow_table().slice(0, 1)
    attempts: list[int] = []

    def commit_after_another_writer(self: DeltaTarget, *args: Any, **kwargs: Any) -> None:
        attempts.append(1)  # the other writer's row commits first, after this load read the table
        write_deltalake(str(bucket / "ds" / "t"), other.set_column(0, "id", [[100 + len(attempts)]]), mode="append")
        real_commit(self, *args, **kwargs)

    monkeypatch.setattr(DeltaTarget, "commit", commit_after_another_writer)
    monkeypatch.setattr(delta_tree, "conflict_pause", lambda attempt: 0.0)
    with pytest.raises(DeltaConflictError) as info:
        pipeline.run([{"id": 10}], table_name="t", table_format="delta", write_disposition="replace")
    assert len(attempts) == delta_tree.CONFLICT_ATTEMPTS
    assert isinstance(info.value, LoadStepFailed) and isinstance(info.value, PipelineStepFailed)
    assert isinstance(info.value.__cause__, DeltaConflictError) and "pipeline.load()" in str(info.value)
    stored = sorted(r["id"] for r in DeltaTable(str(bucket / "ds" / "t")).to_pyarrow_table().to_pylist())
    assert stored == [0, 1, 2, 3, *range(101, 101 + delta_tree.CONFLICT_ATTEMPTS)]  # the replace is not half done
    monkeypatch.setattr(DeltaTarget, "commit", real_commit)
    pipeline.load()  # the pending package loads on the next try
    assert [r["id"] for r in DeltaTable(str(bucket / "ds" / "t")).to_pyarrow_table().to_pylist()] == [10]

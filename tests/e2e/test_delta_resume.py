"""Delta loads killed between writing files and committing them, and concurrent committers."""

from __future__ import annotations

import threading
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


def test_concurrent_pipelines_end_with_both_commits_or_a_clean_conflict(
    bucket: Path, pipelines_dir: Path, spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two pipelines load into one table; their commits race behind a barrier."""

    def make(name: str) -> lakeload.Pipeline:
        return lakeload.pipeline(name, destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                                 pipelines_dir=str(pipelines_dir / name))

    seed = make("seed")
    seed.run([{"id": i, "v": "seed"} for i in range(10)], table_name="t", table_format="delta", primary_key="id",
             write_disposition="merge")
    pipes = {"a": make("a"), "b": make("b")}
    for name, p in pipes.items():
        p.extract([{"id": i, "v": name} for i in range(5)] if name == "a" else [{"id": 100 + i, "v": name} for i in range(3)],
                  table_name="t", table_format="delta", primary_key="id", write_disposition="merge" if name == "a" else "append")
        p.normalize()
    barrier = threading.Barrier(2, timeout=120)
    real_commit = DeltaTarget.commit

    def racing_commit(self: DeltaTarget, *args: Any, **kwargs: Any) -> None:
        barrier.wait()
        real_commit(self, *args, **kwargs)

    monkeypatch.setattr(DeltaTarget, "commit", racing_commit)
    errors: dict[str, BaseException] = {}

    def load(name: str) -> None:
        try:
            pipes[name].load()
        except BaseException as exc:  # noqa: BLE001 - inspected below
            errors[name] = exc

    threads = [threading.Thread(target=load, args=(n,)) for n in pipes]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    table = DeltaTable(str(bucket / "ds" / "t"))
    data = table.to_pyarrow_table().to_pylist()
    for name, exc in errors.items():  # a loser fails cleanly and leaves its package for pipeline.load()
        assert isinstance(exc.__cause__ or exc, DeltaConflictError) or "Another writer" in str(exc), exc
        assert pipes[name].storage.list_packages("normalized"), "the package stays pending"
    monkeypatch.setattr(DeltaTarget, "commit", real_commit)
    for name in errors:
        pipes[name].load()  # loading again after a conflict finishes the package
    data = DeltaTable(str(bucket / "ds" / "t")).to_pyarrow_table().to_pylist()
    assert sorted((r["id"], r["v"]) for r in data) == sorted(
        [(i, "a") for i in range(5)] + [(i, "seed") for i in range(5, 10)] + [(100 + i, "b") for i in range(3)]
    )
    assert table.version() >= 1


def test_a_lost_commit_is_caught_as_delta_conflict_and_as_step_failed(
    bucket: Path, pipelines_dir: Path, spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer deletes the rows a replace load removes, just before its commit: `except DeltaConflictError:`
    around `run()` catches it (as the README shows), and so does `except PipelineStepFailed:`; nothing is lost."""
    pipeline = lakeload.pipeline("conflict", destination=lakeload.destinations.filesystem(str(bucket)),
                                 dataset_name="ds", pipelines_dir=str(pipelines_dir))
    pipeline.run([{"id": i} for i in range(4)], table_name="t", table_format="delta")
    real_commit = DeltaTarget.commit

    def commit_after_another_writer(self: DeltaTarget, *args: Any, **kwargs: Any) -> None:
        DeltaTable(str(bucket / "ds" / "t")).delete("id < 2")  # commits first, removing the files this load removes
        real_commit(self, *args, **kwargs)

    monkeypatch.setattr(DeltaTarget, "commit", commit_after_another_writer)
    with pytest.raises(DeltaConflictError) as info:
        pipeline.run([{"id": 10}], table_name="t", table_format="delta", write_disposition="replace")
    assert isinstance(info.value, LoadStepFailed) and isinstance(info.value, PipelineStepFailed)
    assert isinstance(info.value.__cause__, DeltaConflictError) and "Another writer" in str(info.value)
    assert sorted(r["id"] for r in DeltaTable(str(bucket / "ds" / "t")).to_pyarrow_table().to_pylist()) == [2, 3]
    monkeypatch.setattr(DeltaTarget, "commit", real_commit)
    pipeline.load()  # the pending package loads on the next try
    assert [r["id"] for r in DeltaTable(str(bucket / "ds" / "t")).to_pyarrow_table().to_pylist()] == [10]

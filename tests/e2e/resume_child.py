"""Child process for the resume tests: runs a pipeline and optionally stops dead at a chosen point.

usage: resume_child.py BUCKET PIPELINES_DIR MODE [--pause-in normalize|load] [--marker FILE]

MODE is `first` (load batch A), `second` (load batch B) or `resume` (run() with no data).
With --pause-in, the run stops in the middle of that step (normalize: after pass 1, before its
files are settled; load: after copying the first file; commit: with --table-format delta, after the first
table's commit, once the second table's files are written), creates MARKER and sleeps until killed.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import lakeload


def batch(start: int, n: int) -> list[dict[str, Any]]:
    return [{"id": i, "name": f"user{i}", "pets": [{"n": j} for j in range(i % 3)]} for i in range(start, start + n)]


def pause_forever(marker: str) -> None:
    with open(marker, "w") as f:
        f.write(str(os.getpid()))
    while True:
        time.sleep(1)


def install_pause(step: str, marker: str) -> None:
    if step == "commit":  # Delta: the second table's files are written, its commit never happens
        from lakeload.delta.commit import DeltaTarget

        real_commit = DeltaTarget.commit
        calls: list[str] = []

        def commit(self: DeltaTarget, *args: Any, **kwargs: Any) -> None:
            calls.append(self.name)
            if len(calls) == 2:
                pause_forever(marker)
            real_commit(self, *args, **kwargs)

        DeltaTarget.commit = commit  # type: ignore[method-assign]
        return
    if step == "normalize":  # pass 1 wrote its (draft) files; the driver never settles them
        from lakeload.normalize import normalizer

        def settle(*args: Any, **kwargs: Any) -> None:
            pause_forever(marker)

        assert hasattr(normalizer, "settle_drafts"), "the pause point moved: patch what normalize now calls"
        normalizer.settle_drafts = settle  # type: ignore[assignment]
    else:
        from lakeload.load import plain_format

        real_copy = plain_format.run_tasks
        plain_format.FILES_PER_TASK = 1

        def copy_some(
            spark: Any, task: Any, payload: Any, items: list[Any], description: str, *args: Any, **kwargs: Any
        ) -> Any:
            real_copy(spark, task, payload, items[:1], description, *args, **kwargs)
            pause_forever(marker)

        plain_format.run_tasks = copy_some  # type: ignore[assignment]
        real_link = plain_format.link_files

        def link_some(payload: Any, files: list[Any]) -> Any:  # a local bucket beside the package: the driver links
            real_link(payload, files[:1])
            pause_forever(marker)

        plain_format.link_files = link_some  # type: ignore[assignment]


def load(bucket: str, pipelines_dir: str, mode: str, disposition: str = "append", table_format: str | None = None) -> Any:
    """One MODE run of the pipeline `resumable` (also what the tests run in their own process); its LoadInfo."""
    p = lakeload.pipeline(
        "resumable", destination=lakeload.destinations.filesystem(bucket), dataset_name="ds", pipelines_dir=pipelines_dir
    )
    if mode == "resume":
        return p.run()
    data = batch(0, 50) if mode == "first" else batch(1000, 30)
    return p.run(data, table_name="users", write_disposition=disposition, loader_file_format="parquet",
                 table_format=table_format, primary_key="id" if disposition == "merge" else None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("bucket")
    parser.add_argument("pipelines_dir")
    parser.add_argument("mode", choices=["first", "second", "resume"])
    parser.add_argument("--disposition", default="append")
    parser.add_argument("--pause-in", choices=["normalize", "load", "commit"])
    parser.add_argument("--table-format")
    parser.add_argument("--marker")
    args = parser.parse_args()
    from lakeload.spark.session import get_spark

    get_spark("local[1]")
    if args.pause_in:
        install_pause(args.pause_in, args.marker)
    info = load(args.bucket, args.pipelines_dir, args.mode, args.disposition, args.table_format)
    print("LOADED", ",".join(info.load_ids))


if __name__ == "__main__":
    main()

"""Child process for the Delta read-consistency tests: a merge into a three-level tree, paused between commits.

usage: consistency_child.py BUCKET PIPELINES_DIR MODE [--pause-dir DIR]

MODE is `first` (load FIRST), `second` (load SECOND) or `resume` (run() with no data). With --pause-dir,
the child stops before each Delta commit k (1, 2, ...) and once more after the Delta versions record,
right before the `_dlt_loads` record (k = `record`): it writes DIR/pause-<k> (the table about to be
committed) and waits until DIR/go-<k> exists, so the test can read the bucket in between or kill it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import lakeload


def record(i: int, pets: int) -> dict[str, Any]:
    return {"id": i, "name": f"u{i}", "pets": [{"name": f"p{i}-{j}", "toys": [f"t{i}-{j}-{k}" for k in range(2)]}
                                              for j in range(pets)]}


FIRST = [record(i, 2) for i in range(1, 5)]
SECOND = [record(1, 1), {"id": 2, "deleted": True}, record(3, 3), record(5, 3), record(6, 0)]


def users() -> Any:
    @lakeload.resource(name="users", write_disposition="merge", primary_key="id", table_format="delta",
                       columns={"deleted": {"hard_delete": True}})
    def resource(data: list[dict[str, Any]]) -> Any:
        yield from data

    return resource


def pipeline(bucket: str, pipelines_dir: str) -> lakeload.Pipeline:
    """The pipeline every MODE runs (the tests run it in their own process too)."""
    return lakeload.pipeline("consistent", destination=lakeload.destinations.filesystem(bucket), dataset_name="ds",
                             pipelines_dir=pipelines_dir)


def pause(folder: Path, step: str, what: str) -> None:
    (folder / f"pause-{step}.tmp").write_text(what)
    (folder / f"pause-{step}.tmp").rename(folder / f"pause-{step}")
    while not (folder / f"go-{step}").exists():
        time.sleep(0.1)


def install_pauses(folder: Path) -> None:
    from lakeload.delta import table_format
    from lakeload.delta.commit import DeltaTarget

    real_commit, real_record = DeltaTarget.commit, table_format.record_versions
    calls: list[str] = []

    def commit(self: DeltaTarget, *args: Any, **kwargs: Any) -> None:
        calls.append(self.name)
        pause(folder, str(len(calls)), self.name)
        real_commit(self, *args, **kwargs)

    def record_versions(*args: Any, **kwargs: Any) -> dict[str, int]:
        versions = real_record(*args, **kwargs)
        pause(folder, "record", "")
        return versions

    DeltaTarget.commit = commit  # type: ignore[method-assign]
    table_format.record_versions = record_versions  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("bucket")
    parser.add_argument("pipelines_dir")
    parser.add_argument("mode", choices=["first", "second", "resume"])
    parser.add_argument("--pause-dir")
    args = parser.parse_args()
    from lakeload.spark.session import get_spark

    get_spark("local[1]")
    if args.pause_dir:
        install_pauses(Path(args.pause_dir))
    p = pipeline(args.bucket, args.pipelines_dir)
    info = p.run() if args.mode == "resume" else p.run(users()(FIRST if args.mode == "first" else SECOND))
    print("LOADED", ",".join(info.load_ids))


if __name__ == "__main__":
    main()

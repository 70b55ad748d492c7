"""Child process for the Delta race tests: one writer of each race, with its own Spark and working folders.

usage: delta_race_child.py BUCKET PIPELINES_DIR SIGNAL_DIR

Reads SIGNAL_DIR/trials.json (a list of trials, see `race_rows` in test_delta_concurrency.py), extracts and
normalizes every trial's package first (one pipeline per trial, named by the trial), writes SIGNAL_DIR/ready,
then for each trial waits for SIGNAL_DIR/go-<n>, loads, and writes SIGNAL_DIR/done-<n> (JSON: the attempts the
load needed and the error a load met, if any: a `DeltaConflictError` is followed by `pipeline.load()` again,
as its message says).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from test_delta_concurrency import prepare, race_load


def wait_for(path: Path) -> None:
    while not path.exists():
        time.sleep(0.002)


def signal(path: Path, text: str) -> None:
    """Publish a signal whole: the parent may read the file the moment it exists."""
    path.with_suffix(".tmp").write_text(text)
    path.with_suffix(".tmp").rename(path)


def main() -> None:
    bucket, pipes, signals = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    from lakeload.spark.session import get_spark

    get_spark("local[1]")
    logging.basicConfig(level=logging.WARNING)
    trials: list[dict[str, Any]] = json.loads((signals / "trials.json").read_text())
    pipelines = [prepare(bucket, pipes, trial, "b") for trial in trials]
    signal(signals / "ready", "ready")
    for n, pipeline in enumerate(pipelines):
        wait_for(signals / f"go-{n}")
        signal(signals / f"done-{n}", json.dumps(race_load(pipeline)))


if __name__ == "__main__":
    main()

"""Child process for the two-process tests: a pipeline whose generator stops inside extract until told to go on.

usage: two_runs_child.py BUCKET PIPELINES_DIR SIGNAL_DIR run|extract FIRST LATER

Yields FIRST rows, writes SIGNAL_DIR/inside (the package is then in `extracting/`), waits for
SIGNAL_DIR/release, yields LATER more rows. `run` runs the whole pipeline on its own local Spark;
`extract` only extracts (no Spark).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lakeload


def slow_rows(signal_dir: Path, first: int, later: int) -> Iterator[dict[str, Any]]:
    for i in range(first):
        yield {"id": i, "run": "child"}
    (signal_dir / "inside").write_text("extracting")
    while not (signal_dir / "release").exists():
        time.sleep(0.05)
    for i in range(first, first + later):
        yield {"id": i, "run": "child"}


def main() -> None:
    bucket, pipes, signal_dir, mode, first, later = sys.argv[1:7]
    if mode == "run":
        from lakeload.spark.session import get_spark

        get_spark("local[1]")
    p = lakeload.pipeline("shared_pipe", destination=lakeload.destinations.filesystem(bucket), dataset_name="ds",
                          pipelines_dir=pipes)
    rows = slow_rows(Path(signal_dir), int(first), int(later))
    if mode == "run":
        print("LOADED", ",".join(p.run(rows, table_name="rows").load_ids))
    else:
        print("EXTRACTED", p.extract(rows, table_name="rows").loads_ids[0])


if __name__ == "__main__":
    main()

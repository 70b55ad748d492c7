#!/usr/bin/env python
"""A/B of one normalize split in one process (no Spark): the Python path vs the Arrow fast path.

Writes ``generate_events(n)`` as one plain JSONL split (1% of the events carry a string
``external_ref``), then runs ``normalize_split`` on it alternately with ``LAKELOAD_ARROW_NORMALIZE=0``
and ``=1`` and prints the process CPU time per event (after one warm-up run of each: imports,
memory pools). Parquet and csv outputs are Arrow chunks (finalize, not measured here, turns them
into files); jsonl output writes the final files.

Example::

    python bench/bench_normalize_split.py --events 50000 --format parquet --runs 3
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lakeload.demo.events import generate_events  # noqa: E402
from lakeload.kernel.normalize.plan import NormalizePlan, Split
from lakeload.kernel.normalize.relational import NormalizerSettings, RootTableSettings  # noqa: E402
from lakeload.kernel.normalize.tasks import normalize_split  # noqa: E402
from lakeload.schema.naming import SnakeCaseNaming  # noqa: E402
from lakeload.schema.schema import Schema  # noqa: E402


def plan_for(path: str, out: str, file_format: str) -> NormalizePlan:
    schema = Schema("bench")
    naming = SnakeCaseNaming()
    settings = NormalizerSettings(load_id="1.5", naming=naming, roots={"events": RootTableSettings()})
    return NormalizePlan(
        load_id="1.5", naming=naming, tables=copy.deepcopy(schema.tables), detections=tuple(schema.settings["detections"]),
        default_hints=schema.settings["default_hints"], normalizer=settings, splits=[Split(0, path, "events")],
        file_format=file_format, compressed=file_format != "parquet", output_dir=out,
    )


def cpu_per_event(path: str, events: int, file_format: str, fast: bool) -> float:
    os.environ["LAKELOAD_ARROW_NORMALIZE"] = "1" if fast else "0"
    out = tempfile.mkdtemp()
    plan = plan_for(path, out, file_format)
    started = time.process_time()
    normalize_split(plan, plan.splits[0])
    elapsed = time.process_time() - started
    shutil.rmtree(out)
    return elapsed / events * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--format", default="parquet", choices=["parquet", "csv", "jsonl"])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "events.jsonl")
    with open(path, "wb") as f:
        for event in generate_events(args.events):
            f.write(orjson.dumps(event) + b"\n")
    results: dict[bool, list[float]] = {False: [], True: []}
    for fast in (False, True):
        cpu_per_event(path, args.events, args.format, fast)  # warm-up
    for _ in range(args.runs):
        for fast in (False, True):
            results[fast].append(cpu_per_event(path, args.events, args.format, fast))
    shutil.rmtree(folder)
    for fast, name in ((False, "python path"), (True, "arrow fast path")):
        runs = ", ".join(f"{r:.1f}" for r in results[fast])
        print(f"{name:16s} {args.format}: min {min(results[fast]):5.1f}  median {statistics.median(results[fast]):5.1f} µs/event  ({runs})")
    print(f"speedup: {min(results[False]) / min(results[True]):.2f}x (min), "
          f"{statistics.median(results[False]) / statistics.median(results[True]):.2f}x (median)")


if __name__ == "__main__":
    main()

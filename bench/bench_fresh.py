#!/usr/bin/env python
"""A 10-record run in a fresh Python process, wall time including Python's start and imports (issue 17).

Side by side in one run, each configuration started ``--runs`` times after one unmeasured run (median shown):

- ``dlt``: dlt 1.31, ``pipeline.run(records)`` to a local filesystem bucket;
- ``lakeload``: the same script with ``import lakeload as dlt``, Spark in the process (``SPARK__MODE=local``);
- ``lakeload+server``: the same with a local Spark Connect server running (``lakeload spark start``, started
  here when none runs and stopped at the end), which the pipeline uses (``[spark] mode = "auto"``).

Example::

    python bench/bench_fresh.py --runs 5 --check
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from goals import Goal, print_goals  # noqa: E402

SCRIPT = """
import sys
import {module} as dlt
records = [{{"id": i, "name": f"user {{i}}", "tags": ["a", "b"], "address": {{"city": "x"}}}} for i in range(10)]
pipeline = dlt.pipeline("fresh", destination=dlt.destinations.filesystem(sys.argv[1]), dataset_name="bench",
                        pipelines_dir=sys.argv[2])
pipeline.run(records, table_name="users")
"""
CONNECT_BOUND_S = 2.5


def timed_run(module: str, env: dict[str, str], folder: Path) -> float:
    """Wall seconds of one fresh process running the script."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(module=module), str(folder / "bucket"), str(folder / "pipelines")],
        env=env, capture_output=True, text=True, timeout=300,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{module} run failed:\n{done.stderr[-2000:]}")
    return elapsed


def measure(label: str, module: str, env: dict[str, str], runs: int, folder: Path) -> float:
    timed_run(module, env, folder)  # unmeasured: first-time caches (bytecode, the JVM class archive)
    times = [timed_run(module, env, folder) for _ in range(runs)]
    median = statistics.median(times)
    print(f"{label:18} median {median:6.2f} s   runs: {', '.join(f'{t:.2f}' for t in times)}", flush=True)
    return median


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--check", action="store_true", help="exit 1 if issue 17's bound is missed")
    args = parser.parse_args(argv)
    from lakeload.spark.connect_server import running_server, start_server, stop_server

    work = Path(tempfile.mkdtemp(prefix="bench_fresh_"))
    base = {k: v for k, v in os.environ.items() if not k.startswith("SPARK__") and k != "SPARK_REMOTE"}
    base["RUNTIME__DLTHUB_TELEMETRY"] = "false"
    results = {"dlt": measure("dlt", "dlt", base, args.runs, work / "dlt")}
    results["lakeload"] = measure("lakeload", "lakeload", {**base, "SPARK__MODE": "local"}, args.runs, work / "ll")
    started_here = running_server() is None
    server_start = time.perf_counter()
    state = start_server()
    print(f"local Connect server {state.url} ready in {time.perf_counter() - server_start:.1f} s", flush=True)
    try:
        env = {**base, "SPARK__MODE": "remote"}  # the running local server, or fail
        results["lakeload+server"] = measure("lakeload+server", "lakeload", env, args.runs, work / "llc")
    finally:
        if started_here:
            stop_server()
    shutil.rmtree(work, ignore_errors=True)
    goals = [Goal("lakeload with a running local Connect server [s]", results["lakeload+server"], CONNECT_BOUND_S, True, " s")]
    misses = print_goals("issue 17, a 10-record run in a fresh process", goals)
    print(f"  (dlt {results['dlt']:.2f} s; lakeload without a server, Spark in the process: {results['lakeload']:.2f} s)")
    return 1 if args.check and misses else 0


if __name__ == "__main__":
    sys.exit(main())

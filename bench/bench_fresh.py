#!/usr/bin/env python
"""Small runs in a fresh Python process beside dlt 1.31's, wall time including Python's start and imports
(issues 17 and 32).

The same script (``import dlt`` or ``import lakeload as dlt``) loads 10, 1,000 and 10,000 records to a local
filesystem bucket, each run in its own process. lakeload runs as a user would, with nothing started by hand:
its warm engine (``lakeload.spark.warm_engine``) starts in the background when the first run's process exits
(that run has Spark in its process), and later runs use it. For each size:

- ``dlt``: median of ``--runs`` runs after one unmeasured run;
- ``first runs``: ``--runs`` pairs, each a dlt run and then a lakeload run with no engine running or starting
  (stopped just before); the figure is the median of the pairs' ratios;
- ``second runs``: with each first run, a run started the moment it ended (it waits for the engine the first
  run's JVM becomes, `lakeload.spark.handover`); the figure is the median of their ratios to the dlt run;
- ``lakeload later``: median of ``--runs`` runs once the engine answers;
- with ``--after-init S``: a first run S seconds after ``lakeload init`` (which starts the engine ahead).

lakeload runs with its own HOME (a temporary folder: its engine's state, logs and lakeload's zip) and the real
cache folder (the JVM class archives); the engine is stopped at the end. Bytecode caches are written for both
tools (PYTHONDONTWRITEBYTECODE is dropped). ``--in-process`` adds lakeload with Spark in the process
(``SPARK__MODE=local``).

Example::

    python bench/bench_fresh.py --runs 3 --check
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
records = [{{"id": i, "name": f"user {{i}}", "tags": ["a", "b"], "address": {{"city": "x"}}}} for i in range(int(sys.argv[3]))]
pipeline = dlt.pipeline("fresh", destination=dlt.destinations.filesystem(sys.argv[1]), dataset_name="bench",
                        pipelines_dir=sys.argv[2])
pipeline.run(records, table_name="users")
"""
SIZES = (10, 1_000, 10_000)
FIRST_BOUND, LATER_BOUND = 3.0, 1.5  # x dlt (issue 32)


def timed_run(module: str, env: dict[str, str], folder: Path, records: int) -> float:
    """Wall seconds of one fresh process running the script."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(module=module), str(folder / "bucket"), str(folder / "pipelines"),
         str(records)], env=env, capture_output=True, text=True, timeout=600,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{module} run failed:\n{done.stderr[-2000:]}")
    return elapsed


def median_of(module: str, env: dict[str, str], runs: int, folder: Path, records: int) -> tuple[float, list[float]]:
    times = [timed_run(module, env, folder, records) for _ in range(runs)]
    return statistics.median(times), times


def wait_for_engine(env: dict[str, str], timeout: float = 180) -> None:
    """Until lakeload's engine under the bench's HOME answers (`lakeload spark status` exits 0)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = subprocess.run([sys.executable, "-m", "lakeload.cli.main", "spark", "status"], env=env,
                                capture_output=True, timeout=120)
        if status.returncode == 0:
            return
        time.sleep(0.5)
    raise SystemExit("lakeload's warm engine did not start")


def stop_engine(env: dict[str, str]) -> None:
    """Stop lakeload's engine under the bench's HOME (it writes its class archive as it stops)."""
    subprocess.run([sys.executable, "-m", "lakeload.cli.main", "spark", "stop"], env=env, capture_output=True, timeout=120)


def quiet_machine(env: dict[str, str]) -> None:
    """No lakeload engine left running or starting (the one a first run starts as it exits is stopped too)."""
    status = subprocess.run([sys.executable, "-m", "lakeload.cli.main", "spark", "status"], env=env,
                            capture_output=True, timeout=120)
    if status.returncode == 0 or supervisor_alive(env):
        wait_for_engine(env)
    stop_engine(env)


def supervisor_alive(env: dict[str, str]) -> bool:
    """Whether the warm engine's supervisor of the bench's HOME runs (it holds its lock file)."""
    probe = ("import sys; from lakeload.spark.warm_engine import supervisor_running; "
             "sys.exit(0 if supervisor_running() else 1)")
    return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, timeout=60).returncode == 0


def first_runs(base: dict[str, str], ll: dict[str, str], work: Path, records: int,
               runs: int) -> list[tuple[float, float, float]]:
    """`runs` triples (dlt, lakeload first run, lakeload second run): each first run with no engine, right after a dlt
    run on the same quiet machine, so that the machine's drift hits both alike; the second started the moment the
    first ended (it waits for the engine the first one left)."""
    triples = []
    for _ in range(runs):
        quiet_machine(ll)
        theirs = timed_run("dlt", base, work / "dlt", records)
        first = timed_run("lakeload", ll, work / "ll", records)
        triples.append((theirs, first, timed_run("lakeload", ll, work / "ll", records)))
    quiet_machine(ll)
    return triples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--in-process", action="store_true", help="also lakeload with Spark in the process")
    parser.add_argument("--after-init", type=float, default=None, metavar="SECONDS",
                        help="also a first run SECONDS after `lakeload init` (which starts the engine in the background)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a goal of issue 32 is missed")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="bench_fresh_"))
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("SPARK__") and k not in ("SPARK_REMOTE", "PYTHONDONTWRITEBYTECODE")}
    base["RUNTIME__DLTHUB_TELEMETRY"] = "false"
    base.setdefault("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache"))
    repo = str(Path(__file__).resolve().parents[1])
    ll = {**base, "HOME": str(work / "home"), "PYTHONPATH": os.pathsep.join(filter(None, (repo, base.get("PYTHONPATH"))))}
    goals = []
    try:
        timed_run("dlt", base, work / "dlt", 10)  # unmeasured: bytecode caches, the engine's class archive
        timed_run("lakeload", ll, work / "ll", 10)
        stop_engine(ll)
        for records in args.sizes:
            triples = first_runs(base, ll, work, records, args.runs)
            first_ratio = statistics.median(first / theirs for theirs, first, _ in triples)
            second_ratio = statistics.median(second / theirs for theirs, _, second in triples)
            print(f"{records:>6} records  first runs, each beside a dlt run just before: "
                  f"{', '.join(f'{first:.2f}/{theirs:.2f} s' for theirs, first, _ in triples)}   median {first_ratio:4.2f}x",
                  flush=True)
            print(f"{'':>6}          second runs, each the moment its first ended: "
                  f"{', '.join(f'{second:.2f}/{theirs:.2f} s' for theirs, _, second in triples)}   median {second_ratio:4.2f}x",
                  flush=True)
            dlt_s, dlt_runs = median_of("dlt", base, args.runs, work / "dlt", records)
            timed_run("lakeload", ll, work / "ll", records)  # the engine up again
            wait_for_engine(ll)
            later, later_runs = median_of("lakeload", ll, args.runs, work / "ll", records)
            print(f"{'':>6}          dlt {dlt_s:5.2f} s ({', '.join(f'{t:.2f}' for t in dlt_runs)})   "
                  f"lakeload later {later:5.2f} s = {later / dlt_s:4.2f}x ({', '.join(f'{t:.2f}' for t in later_runs)})",
                  flush=True)
            if args.in_process:
                local, _ = median_of("lakeload", {**ll, "SPARK__MODE": "local"}, args.runs, work / "lp", records)
                print(f"{'':>6}          lakeload, Spark in the process {local:5.2f} s = {local / dlt_s:4.2f}x", flush=True)
            if args.after_init is not None:
                stop_engine(ll)
                project = work / "project"
                shutil.rmtree(project, ignore_errors=True)
                subprocess.run([sys.executable, "-m", "lakeload.cli.main", "init", "generator", "filesystem", "--dir",
                                str(project)], env=ll, capture_output=True, timeout=120, check=True)
                time.sleep(args.after_init)  # the user reads the generated script
                after_init = timed_run("lakeload", ll, work / "ll", records)
                print(f"{'':>6}          lakeload first run {args.after_init:.0f} s after `lakeload init` "
                      f"{after_init:5.2f} s = {after_init / dlt_s:4.2f}x", flush=True)
            goals += [Goal(f"{records} records, first run / dlt (median of pairs)", first_ratio, FIRST_BOUND, True),
                      Goal(f"{records} records, second run right after a first / dlt", second_ratio, LATER_BOUND, True),
                      Goal(f"{records} records, later runs / dlt", later / dlt_s, LATER_BOUND, True)]
    finally:
        stop_engine(ll)
        shutil.rmtree(work, ignore_errors=True)
    misses = print_goals("issue 32, small runs in a fresh process, nothing started by hand", goals)
    return 1 if args.check and misses else 0


if __name__ == "__main__":
    sys.exit(main())

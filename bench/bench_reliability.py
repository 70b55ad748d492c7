#!/usr/bin/env python
"""Reliability campaign: `kill -9` a pipeline at a random moment, resume it, and check that nothing is lost or doubled.

Each trial takes a fresh bucket and pipeline folder and one write disposition (`append`, `replace`, or `merge` into
Delta tables), then for two batches of nested records (the second overlaps half of the first's ids with new values):
1. a child process runs `pipeline.run(batch)` and is killed with SIGKILL (its whole process group: the Spark JVM and
   Python workers too) after a random delay once Spark is up, i.e. somewhere in extract, normalize or load, or
   not at all when the run is quicker than the delay;
2. a second child runs `pipeline.run()` without data, which finishes what the killed run left pending;
3. if the batch's rows are not in the bucket (the kill came before the package was extracted), the batch is run
   again, as a user would rerun a failed job.
Then the bucket is read back with DuckDB (files) or delta-rs (Delta) and compared with the exact expected rows
of the root and the nested table, and the `_dlt_loads` records with the loads that wrote rows. Prints every
trial and the tally `exact/total`; the step each kill hit comes from the child's progress lines.

    python bench/bench_reliability.py --trials 12
    python bench/bench_reliability.py --trials 30 --dispositions merge --max-delay 8
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WORKDIR = REPO_ROOT / "bench" / "results" / "reliability"
ROWS = 3000
DISPOSITIONS = ("append", "replace", "merge")


def batch(k: int) -> list[dict[str, Any]]:
    """Batch `k`: ids from k * ROWS / 2 (so batch 1 overlaps half of batch 0), `version` = k, nested `tags`."""
    start = k * ROWS // 2
    return [{"id": i, "version": k, "tags": [{"t": f"{i}-{j}-{k}"} for j in range(i % 3)]} for i in range(start, start + ROWS)]


def expected(disposition: str, batches: int) -> dict[str, Any]:
    """The exact root rows (id, version) and nested tags after `batches` batches."""
    rows: dict[int, int] | list[tuple[int, int]]
    if disposition == "append":
        loaded = [r for k in range(batches) for r in batch(k)]
    elif disposition == "replace":
        loaded = batch(batches - 1)
    else:
        merged = {r["id"]: r for k in range(batches) for r in batch(k)}
        loaded = list(merged.values())
    rows = sorted((r["id"], r["version"]) for r in loaded)
    tags = sorted(t["t"] for r in loaded for t in r["tags"])
    return {"rows": rows, "tags": tags}


# -- child ------------------------------------------------------------------------------------------
def child(args: argparse.Namespace) -> None:
    import lakeload
    from lakeload.runtime.progress import Progress
    from lakeload.spark.session import get_spark

    class Steps(Progress):
        def start(self, stage: str, total: int | None = None, unit: str = "items") -> None:
            print(f"STEP {stage}", flush=True)

    get_spark("local[1]")
    print("SPARK_READY", flush=True)
    p = lakeload.pipeline("campaign", destination=lakeload.destinations.filesystem(args.bucket), dataset_name="ds",
                          pipelines_dir=args.pipelines_dir, progress=Steps())
    if args.batch < 0:
        p.run()
    else:
        merge = args.disposition == "merge"
        p.run(batch(args.batch), table_name="events", write_disposition=args.disposition, loader_file_format="parquet",
              table_format="delta" if merge else None, primary_key="id" if merge else None)
    print("DONE", flush=True)


# -- parent -----------------------------------------------------------------------------------------
def spawn(bucket: Path, pipelines: Path, disposition: str, k: int, kill_after: float | None) -> tuple[str, str]:
    """Run one child; kill its process group `kill_after` s after Spark is up. Returns (outcome, last step)."""
    command = [sys.executable, __file__, "--child", "--bucket", str(bucket), "--pipelines-dir", str(pipelines),
               "--disposition", disposition, "--batch", str(k)]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                            start_new_session=True)
    assert proc.stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(line.strip() for line in proc.stdout), daemon=True)  # type: ignore[union-attr]
    reader.start()
    deadline = None
    while proc.poll() is None:
        if deadline is None and kill_after is not None and "SPARK_READY" in lines:
            deadline = time.monotonic() + kill_after
        if deadline is not None and time.monotonic() >= deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return "killed", _last_step(lines)
        time.sleep(0.02)
    reader.join(timeout=5)
    return ("done" if "DONE" in lines else f"failed rc={proc.returncode}"), _last_step(lines)


def _last_step(lines: list[str]) -> str:
    return next((line[5:] for line in reversed(list(lines)) if line.startswith("STEP ")), "start")


def read_back(bucket: Path, disposition: str) -> dict[str, Any]:
    """Root rows (id, version), nested tags and the `_dlt_loads` records, straight from the bucket."""
    import duckdb

    root, nested = bucket / "ds" / "events", bucket / "ds" / "events__tags"
    if disposition == "merge":
        from deltalake import DeltaTable

        def table(path: Path) -> Any:
            return DeltaTable(str(path)).to_pyarrow_table() if (path / "_delta_log").is_dir() else None

        events, tags = table(root), table(nested)
    else:
        def table(path: Path) -> Any:
            files = sorted(glob.glob(str(path / "*.parquet")))
            return duckdb.sql(f"SELECT * FROM read_parquet({files!r}, union_by_name=true)").to_arrow_table() if files else None

        events, tags = table(root), table(nested)
    rows = sorted(zip(events["id"].to_pylist(), events["version"].to_pylist(), strict=True)) if events is not None else []
    load_ids = sorted(set(events["_dlt_load_id"].to_pylist())) if events is not None else []
    loads = sorted(glob.glob(str(bucket / "ds" / "_dlt_loads" / "*.jsonl")))
    return {"rows": rows, "tags": sorted(tags["t"].to_pylist()) if tags is not None else [], "load_ids": load_ids,
            "loads": len(loads)}


def trial(index: int, disposition: str, workdir: Path, rng: random.Random, max_delay: float) -> dict[str, Any]:
    folder = workdir / f"trial_{index:03d}"
    bucket, pipelines = folder / "bucket", folder / "pipelines"
    kills: list[str] = []
    runs = 0
    for k in range(2):
        delay = rng.uniform(0.0, max_delay)
        outcome, step = spawn(bucket, pipelines, disposition, k, delay)
        runs += 1
        if outcome == "killed":
            kills.append(step)
        spawn(bucket, pipelines, disposition, -1, None)  # finish what is pending
        runs += 1
        if not any(version == k for _, version in read_back(bucket, disposition)["rows"]):
            outcome, _ = spawn(bucket, pipelines, disposition, k, None)  # never extracted: run the batch again
            runs += 1
    got, want = read_back(bucket, disposition), expected(disposition, 2)
    loads_ok = got["loads"] >= 2 and (disposition != "append" or got["loads"] == len(got["load_ids"]))
    exact = got["rows"] == want["rows"] and got["tags"] == want["tags"] and loads_ok
    return {"trial": index, "disposition": disposition, "kills": kills, "runs": runs, "exact": exact,
            "rows": len(got["rows"]), "expected_rows": len(want["rows"]), "tags": len(got["tags"]),
            "expected_tags": len(want["tags"]), "loads": got["loads"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--dispositions", default=",".join(DISPOSITIONS), help="comma-separated subset of %(default)s")
    parser.add_argument("--max-delay", type=float, default=6.0, help="kill within this many seconds after Spark is up")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--bucket", help=argparse.SUPPRESS)
    parser.add_argument("--pipelines-dir", help=argparse.SUPPRESS)
    parser.add_argument("--disposition", help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    import shutil

    shutil.rmtree(args.workdir, ignore_errors=True)
    rng = random.Random(args.seed)
    dispositions = [d for d in args.dispositions.split(",") if d]
    results = []
    started = time.perf_counter()
    for i in range(args.trials):
        result = trial(i, dispositions[i % len(dispositions)], args.workdir, rng, args.max_delay)
        results.append(result)
        print(json.dumps(result), flush=True)
    exact = sum(r["exact"] for r in results)
    kills = [step for r in results for step in r["kills"]]
    by_step = {step: kills.count(step) for step in sorted(set(kills))}
    print(f"exact {exact}/{len(results)} trials; {len(kills)} kill -9s by step {by_step}; "
          f"{time.perf_counter() - started:.0f} s")
    (args.workdir / "summary.json").write_text(json.dumps({"exact": exact, "trials": len(results), "kills": by_step,
                                                           "results": results}, indent=2))
    sys.exit(0 if exact == len(results) else 1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Delta Lake and Apache Iceberg side by side: dlt 1.31 (delta-rs `write_deltalake` / `merge`; pyiceberg `append` /
`upsert`) and lakeload (Spark executors write, delta-rs / pyiceberg commit).

``--formats delta,iceberg`` runs every scenario on each table format; with both, the lakeload append to Iceberg is
also put beside its append to Delta. ``--formats duckdb`` runs them into each tool's DuckDB destination instead (a
database file in the run's folder; ``upsert`` is dlt's default there, ``delete-insert``; dlt loads Parquet files
there, its faster path than its default INSERT statements; ``--dlt-duckdb-format default`` gives it its default).

Scenarios, each tool in its own fresh subprocess, on the same generated events (``lakeload/demo/events.py``):

- ``append``: N events into a Delta table ``events`` (and its nested tables);
- ``upsert``: N events merged by ``id`` (the first merge creates the tables), then N more events
  of which half have ids already loaded (``start_id = N/2``, new content): the second merge is
  timed per stage; its load step is each tool's merge engine (dlt: delta-rs `merge`, in-process;
  lakeload: the Spark copy-on-write merge), which is the measurement behind lakeload's choice.
- ``scd2``: the same two batches merged with the ``scd2`` strategy (row hashes; the second batch's records are all
  new versions and every first-batch record absent from it is retired): 2 N root rows. dlt 1.31 refuses scd2 on its
  filesystem destination, so dlt runs it into its DuckDB destination (a database file in the run's folder).

After each run the tables are counted from their current Delta snapshot. The root table must have
N (append) or 1.5 N (upsert) rows; nested tables of an exact upsert hold only the surviving records'
rows, so dlt's counts (which keep stale nested rows, a limitation it documents) are reported beside
lakeload's.

``--input frame`` gives lakeload each batch as a Spark DataFrame (the events written as JSON lines in the run's
folder and read by ``spark.read.json`` before the clock starts; dlt, which takes no DataFrames, gets records), to
time the DataFrame normalize path, whose upsert ids run as Arrow UDFs on the executors.

Examples::

    python bench/bench_delta.py --events 100000
    python bench/bench_delta.py --events 100000,1000000 --tools dlt,lakeload --scenarios append,upsert
    python bench/bench_delta.py --events 100000 --tools lakeload --scenarios upsert --input frame
    python bench/bench_delta.py --events 100000,1000000 --tools dlt,lakeload --scenarios upsert --check

``--check`` prints the ratios of issue 16 goal 3 this run can compute and exits 1 when one misses.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_vs_dlt as base  # noqa: E402 - shared helpers (event generator, RSS, dlt rotation)

PRIMARY_KEY = "id"


def _counts(bucket: Path) -> dict[str, int]:
    from deltalake import DeltaTable

    root = bucket / base.DATASET
    counts = {}
    for table in sorted(p for p in root.iterdir() if (p / "_delta_log").is_dir()):
        counts[table.name] = DeltaTable(str(table)).to_pyarrow_dataset().count_rows()
    for table in sorted(p for p in root.iterdir() if (p / "metadata").is_dir()):
        from pyiceberg.table import StaticTable

        newest = max((table / "metadata").glob("*.metadata.json"), key=lambda m: int(m.name.split("-", 1)[0]))
        snapshot = StaticTable.from_metadata(f"file://{newest}").current_snapshot()
        counts[table.name] = int(snapshot.summary["total-records"]) if snapshot and snapshot.summary else 0
    return counts


def _duckdb_counts(database: Path) -> dict[str, int]:
    import duckdb

    with duckdb.connect(str(database), read_only=True) as connection:
        tables = [r[0] for r in connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_name NOT LIKE '_dlt%'",
            [base.DATASET]).fetchall()]
        return {t: int(connection.execute(f'SELECT count(*) FROM "{base.DATASET}"."{t}"').fetchone()[0]) for t in sorted(tables)}


def _dlt_stages(spec: dict[str, Any], pipeline: Any, events: Any, hints: dict[str, Any]) -> dict[str, float]:
    import dlt

    t0 = time.perf_counter()
    table_format = None if spec["scenario"] == "scd2" or spec.get("format") == "duckdb" else spec.get("format", "delta")
    # into DuckDB dlt writes Parquet files (its faster path there than its default INSERT statements)
    parquet = spec.get("format") == "duckdb" and spec.get("dlt_duckdb_format", "parquet") == "parquet"
    file_format = {"loader_file_format": "parquet"} if parquet else {}
    pipeline.extract(dlt.resource(events, name=base.RESOURCE_NAME, table_format=table_format, **hints), **file_format)
    t1 = time.perf_counter()
    pipeline.normalize(workers=spec["workers"])
    t2 = time.perf_counter()
    info = pipeline.load()
    t3 = time.perf_counter()
    if info.has_failed_jobs:
        raise RuntimeError(f"dlt load has failed jobs: {info}")
    return {"extract": t1 - t0, "normalize": t2 - t1, "load": t3 - t2}


def _lakeload_stages(pipeline: Any, events: Any, hints: dict[str, Any], fmt: str = "delta") -> dict[str, float]:
    import lakeload

    t0 = time.perf_counter()
    pipeline.extract(lakeload.resource(events, name=base.RESOURCE_NAME, table_format=None if fmt == "duckdb" else fmt, **hints))
    t1 = time.perf_counter()
    pipeline.normalize()
    t2 = time.perf_counter()
    pipeline.load()
    t3 = time.perf_counter()
    return {"extract": t1 - t0, "normalize": t2 - t1, "load": t3 - t2}


def _as_frame(spark: Any, events: Any, path: Path) -> Any:
    """The events as a cached Spark DataFrame (structs and arrays, as `spark.read.json` infers them)."""
    import orjson

    with path.open("wb") as f:
        for event in events:
            f.write(orjson.dumps(event, default=str) + b"\n")
    frame = spark.read.json(str(path)).cache()
    frame.count()
    return frame


def child(spec: dict[str, Any]) -> dict[str, Any]:
    n, tool, scenario = spec["events"], spec["tool"], spec["scenario"]
    bucket, pipes = Path(spec["bucket"]), Path(spec["pipelines_dir"])
    hints: dict[str, Any] = {}
    if scenario == "upsert":
        strategy = "delete-insert" if spec.get("format") == "duckdb" else "upsert"
        hints = {"write_disposition": {"disposition": "merge", "strategy": strategy}, "primary_key": PRIMARY_KEY}
    if scenario == "scd2":
        hints = {"write_disposition": {"disposition": "merge", "strategy": "scd2"}}
    batches = [base.generate_events(n, spec["seed"])]
    if scenario in ("upsert", "scd2"):
        gen = base.load_events_module().generate_events
        batches.append(gen(n, seed=spec["seed"], start_id=n // 2))
    started = time.perf_counter()
    if tool == "dlt":
        os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
        os.environ.setdefault("RUNTIME__LOG_LEVEL", "WARNING")
        items = base.dlt_file_max_items(n, spec["workers"])
        if items:
            os.environ.update(base.dlt_rotation_env(items))
        import dlt

        destination = dlt.destinations.filesystem("file://" + str(bucket))
        if scenario == "scd2" or spec.get("format") == "duckdb":
            bucket.mkdir(parents=True, exist_ok=True)
            destination = dlt.destinations.duckdb(str(bucket / "dlt.duckdb"))
        pipeline = dlt.pipeline("bench_delta_dlt", destination=destination, dataset_name=base.DATASET, pipelines_dir=str(pipes))
        runs = [_dlt_stages(spec, pipeline, batch, hints) for batch in batches]
        version = dlt.__version__
    else:
        import lakeload
        from lakeload.spark.session import get_spark

        spark = get_spark()
        if spec.get("input") == "frame":
            batches = [_as_frame(spark, batch, bucket.parent / f"batch{i}.jsonl") for i, batch in enumerate(batches)]
        destination = lakeload.destinations.filesystem(str(bucket))
        if spec.get("format") == "duckdb":
            bucket.mkdir(parents=True, exist_ok=True)
            destination = lakeload.destinations.duckdb(str(bucket / "dlt.duckdb"))
        pipeline = lakeload.pipeline("bench_delta_ll", destination=destination, dataset_name=base.DATASET,
                                     pipelines_dir=str(pipes), progress="log")
        runs = [_lakeload_stages(pipeline, batch, hints, spec.get("format", "delta")) for batch in batches]
        version = "lakeload"
    total_s = time.perf_counter() - started
    peak_rss_mb = base.self_peak_rss_mb()  # before the check below: delta-rs counting rows in this process is not the load's
    return {
        "tool": tool, "version": version, "scenario": scenario, "events": n, "runs": runs, "input": spec.get("input", "records"),
        "format": spec.get("format", "delta"),
        "total_s": total_s, "driver_peak_rss_mb": peak_rss_mb,
        "counts": _duckdb_counts(bucket / "dlt.duckdb") if (bucket / "dlt.duckdb").exists() else _counts(bucket),
    }


def run_child(spec: dict[str, Any], workdir: Path) -> dict[str, Any]:
    name = f"{spec['tool']}-{spec.get('format', 'delta')}-{spec['scenario']}-{spec['events']}"
    spec = dict(spec, bucket=str(workdir / name / "bucket"), pipelines_dir=str(workdir / name / "pipes"))
    base._reset_dir(workdir / name)
    spec_path = workdir / name / "spec.json"
    spec_path.write_text(json.dumps(spec))
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    done = subprocess.run([sys.executable, __file__, "--child", str(spec_path)], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return {**spec, "error": done.stderr[-2000:]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def expected_root_rows(result: dict[str, Any]) -> int:
    n = result["events"]
    return {"append": n, "scd2": 2 * n}.get(result["scenario"], n + n // 2)


def print_results(results: list[dict[str, Any]]) -> None:
    print(f"\n{'tool':9} {'format':8} {'scenario':8} {'events':>9} {'last run: extract/normalize/load (s)':>38} {'total s':>8} {'RSS MB':>7}  rows (root, nested)")
    for r in results:
        if "error" in r:
            print(f"{r['tool']:9} {r.get('format', 'delta'):8} {r['scenario']:8} {r['events']:>9} ERROR {r['error'][-300:]}")
            continue
        last = r["runs"][-1]
        stages = "/".join(f"{last[k]:.1f}" for k in ("extract", "normalize", "load"))
        root = r["counts"].get(base.RESOURCE_NAME, 0)
        ok = "ok" if root == expected_root_rows(r) else f"WRONG (expected {expected_root_rows(r)})"
        nested = {k.replace("events__", ""): v for k, v in r["counts"].items() if k.startswith("events__")}
        print(f"{r['tool']:9} {r['format']:8} {r['scenario']:8} {r['events']:>9} {stages:>38} {r['total_s']:>8.1f} "
              f"{r['driver_peak_rss_mb']:>7.0f}  {root} {ok}; {nested}")
    by_key = {(r["tool"], r["format"], r["scenario"], r["events"]): r for r in results if "error" not in r}
    for (tool, fmt, scenario, n), r in sorted(by_key.items()):
        other = by_key.get(("dlt", fmt, scenario, n))
        if tool == "lakeload" and other:
            print(f"speedup {fmt} {scenario} {n}: total {other['total_s'] / r['total_s']:.2f}x, "
                  f"last load step {other['runs'][-1]['load'] / r['runs'][-1]['load']:.2f}x")
        delta = by_key.get(("lakeload", "delta", scenario, n))
        if tool == "lakeload" and fmt == "iceberg" and delta:
            print(f"lakeload {scenario} {n}: iceberg / delta total {r['total_s'] / delta['total_s']:.2f}x")


RSS_LIMIT_MB = 200
UPSERT_SPEEDUP = {100_000: 1.5, 1_000_000: 3.0}  # issue 16 goal 3: dlt total / lakeload total, at least


def goal_checks(results: list[dict[str, Any]]) -> list[tuple[str, float, str, bool]]:
    """Issue 16 goal 3's ratios this run can compute: (what, value, goal, met).

    - the upsert's 2nd load step (the merge) of lakeload no slower than dlt's (delta-rs merge), at each N;
    - the upsert end to end (both loads): dlt / lakeload >= 1.5 at 100k, >= 3 at 1M;
    - lakeload's driver peak RSS <= 200 MB in every run.
    """
    by_key = {(r["tool"], r["scenario"], r["events"]): r for r in results if "error" not in r and r["format"] == "delta"}
    checks = []
    for (tool, scenario, n), r in sorted(by_key.items()):
        if tool != "lakeload":
            continue
        rss = r["driver_peak_rss_mb"]
        checks.append((f"{scenario} {n}: lakeload driver peak RSS [MB]", rss, f"<= {RSS_LIMIT_MB}", rss <= RSS_LIMIT_MB))
        other = by_key.get(("dlt", scenario, n))
        if scenario != "upsert" or other is None:
            continue
        merge = other["runs"][-1]["load"] / r["runs"][-1]["load"]
        checks.append((f"upsert {n}: merge step dlt (delta-rs) / lakeload", merge, ">= 1.0", merge >= 1.0))
        goal = UPSERT_SPEEDUP.get(n)
        if goal is not None:
            speedup = other["total_s"] / r["total_s"]
            checks.append((f"upsert {n}: end to end dlt / lakeload", speedup, f">= {goal}", speedup >= goal))
    return checks


def print_checks(results: list[dict[str, Any]]) -> int:
    """Print each goal check; 1 when one misses (or a run failed), else 0."""
    checks = goal_checks(results)
    failed = [r for r in results if "error" in r]
    print("\nissue 16 goal 3 checks:")
    for what, value, goal, met in checks:
        print(f"  {'ok  ' if met else 'MISS'} {what}: {value:.2f} (goal {goal})")
    for r in failed:
        print(f"  MISS {r['tool']} {r['scenario']} {r['events']}: the run failed")
    if not any(k[0].startswith("upsert") and "dlt" in k[0] for k in checks):
        print("  (no dlt upsert run beside lakeload's: run with --tools dlt,lakeload --scenarios upsert for the ratios)")
    return 1 if failed or not all(met for *_, met in checks) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", default="100000")
    parser.add_argument("--tools", default="dlt,lakeload")
    parser.add_argument("--scenarios", default="append,upsert")
    parser.add_argument("--formats", default="delta", help="delta, iceberg, duckdb (a DuckDB destination), or several")
    parser.add_argument("--dlt-workers", type=int, default=2)
    parser.add_argument("--dlt-duckdb-format", default="parquet", choices=("parquet", "default"),
                        help="dlt's loader file format into DuckDB: Parquet (its faster path) or its default (INSERT statements)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--input", choices=("records", "frame"), default="records", help="lakeload's input (dlt: records)")
    parser.add_argument("--workdir", default=str(base.DEFAULT_WORKDIR / "delta"))
    parser.add_argument("--json")
    parser.add_argument("--child")
    parser.add_argument("--check", action="store_true",
                        help="print issue 16 goal 3's ratios (merge step and upsert end to end vs dlt, driver RSS); "
                             "exit 1 when one misses")
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(Path(args.child).read_text()))))
        return 0
    workdir = Path(args.workdir)
    results = []
    for n in (int(x) for x in args.events.split(",")):
        for scenario in args.scenarios.split(","):
            for fmt in args.formats.split(","):
                for tool in args.tools.split(","):
                    spec = {"tool": tool, "scenario": scenario, "events": n, "seed": args.seed,
                            "workers": args.dlt_workers, "input": args.input, "format": fmt,
                            "dlt_duckdb_format": args.dlt_duckdb_format}
                    result = run_child(spec, workdir)
                    results.append(result)
                    print(json.dumps({k: v for k, v in result.items() if k not in ("error",)})[:400], flush=True)
    print_results(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return print_checks(results) if args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())

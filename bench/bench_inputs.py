#!/usr/bin/env python
"""Side-by-side benchmark of loading JSONL files, and of lakeload's fixed costs on tiny runs.

Scenarios (each tool/configuration in its own fresh process, like ``bench_vs_dlt.py``):

- ``files``: ``generate_events(n)`` is written once as JSONL files (``--files`` plain files, the
  same bytes for every tool), then loaded to parquet by
  dlt 1.31 (``filesystem(...) | read_jsonl()``, 2 normalize workers with extract file rotation, its best
  configuration), lakeload's file source (``filesystem(...) | read_jsonl()``), and a bare Spark
  ``spark.read.json(files).write.parquet(...)`` (Spark's inference pass plus its parse pass), DuckDB's
  ``COPY (SELECT * FROM read_json(files)) TO parquet`` on 2 threads (the floor: every byte parsed once, every
  column written) and Polars' ``scan_ndjson(files).sink_parquet(...)`` (skipped if polars is not installed);
  on request (``--tools ...,lakeload_files_connect``, not in the default tools) ``lakeload_files`` once more on a
  local Spark Connect server (issue 17): the parent starts the server first when none runs (its start is
  printed on its own and in no figure) and stops it afterwards if it started it; the child runs exactly
  ``lakeload_files`` with ``SPARK__MODE=remote``. Every Spark child otherwise runs with ``SPARK__MODE=local``, so a
  running server never changes an in-process figure;
- ``small``: in one process, Spark's own session start and first Python job (JVM and worker warm-up), lakeload's
  first 10-record run (cold) and the median of 5 more 10-record runs (warm, session already started); then
  the same in a fresh process without the warm-up job (lakeload's first run pays Spark's warm-up).

Examples::

    python bench/bench_inputs.py --events 1000000 --scenarios files --check
    python bench/bench_inputs.py --scenarios small
    python bench/bench_inputs.py --events 1000000 --scenarios files --tools dlt_files,lakeload_files --destination duckdb
    python bench/bench_inputs.py --events 1000000 --scenarios files --tools lakeload_files,lakeload_files_connect --check

``--rounds N`` runs every files tool N times, interleaved, and the goals use each tool's median run (all rounds'
totals are printed). ``--check`` prints issue 16's goal 1 (lakeload <= 2x DuckDB, >= 2x bare Spark, >= 8x dlt; totals without
Spark's session start) and, when both lakeload runs were measured, issue 17's Connect / in-process <= 1.15
with PASS/MISS, and exits 1 if any measured goal is missed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_vs_dlt as core  # noqa: E402
from connect_runs import (  # noqa: E402
    LOCAL_ENV,
    REMOTE_ENV,
    child_environment,
    connect_goal,
    run_on_server,
    spark_engine,
)
from goals import Goal, median_run, print_goals, ratio, rotated, rounds_text  # noqa: E402

WORKDIR = core.DEFAULT_WORKDIR / "inputs"


def write_jsonl_files(n: int, seed: int, folder: Path, files: int) -> dict[str, Any]:
    """The events as `files` plain JSONL files of near-equal size (written once, shared by all tools)."""
    import orjson

    marker = folder / f".done-{n}-{seed}-{files}"
    if marker.exists():
        return json.loads(marker.read_text())
    core._reset_dir(folder)
    per_file = -(-n // files)
    handles = [open(folder / f"events-{i:03d}.jsonl", "wb", buffering=8 << 20) for i in range(files)]  # noqa: SIM115
    for i, event in enumerate(core.generate_events(n, seed)):
        handles[i // per_file].write(orjson.dumps(event) + b"\n")
    for handle in handles:
        handle.close()
    info = {"files": files, "bytes": sum(f.stat().st_size for f in folder.glob("*.jsonl"))}
    marker.write_text(json.dumps(info))
    return info


def duckdb_read_back(database: Path) -> dict[str, Any]:
    """Rows per table of the benchmark's dataset in a DuckDB database (the ``--destination duckdb`` runs)."""
    import duckdb

    with duckdb.connect(str(database), read_only=True) as connection:
        names = [r[0] for r in connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ?", [core.DATASET]).fetchall()]
        counts = {n: connection.execute(f'SELECT count(*) FROM "{core.DATASET}"."{n}"').fetchone()[0] for n in names}
    return {"tables": {n: {"rows": int(c)} for n, c in counts.items()}}


def _destination(tool: Any, spec: dict[str, Any], bucket: Path) -> Any:
    """The run's destination: the bucket folder, or (``--destination duckdb``) a database file in it."""
    if spec.get("destination") == "duckdb":
        bucket.mkdir(parents=True, exist_ok=True)
        return tool.destinations.duckdb(str(bucket / f"{tool.__name__}.duckdb"))  # (not the dataset's name: DuckDB would find both)
    return tool.destinations.filesystem(("file://" if tool.__name__ == "dlt" else "") + str(bucket))


def _result(n: int, started: float, ready: float, end: float, stages: dict[str, float], bucket: Path) -> dict[str, Any]:
    database = next(bucket.glob("*.duckdb"), bucket / "none.duckdb")
    return {
        "stages": stages,
        "startup_s": ready - started,
        "total_s": end - ready,
        "total_with_startup_s": end - started,
        "rows_per_s": n / (end - ready),
        "driver_peak_rss_mb": core.self_peak_rss_mb(),
        "readback": duckdb_read_back(database) if database.exists() else core.read_back(bucket / core.DATASET),
    }


def child_dlt_files(spec: dict[str, Any]) -> dict[str, Any]:
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    os.environ.update(core.dlt_rotation_env(core.dlt_file_max_items(spec["events"], 2) or spec["events"]))
    started = time.perf_counter()
    import dlt
    from dlt.sources.filesystem import filesystem, read_jsonl

    bucket, pipes = Path(spec["bucket"]), Path(spec["pipelines_dir"])
    pipeline = dlt.pipeline("bench_dlt_files", destination=_destination(dlt, spec, bucket),
                            dataset_name=core.DATASET, pipelines_dir=str(pipes))
    ready = time.perf_counter()
    files = filesystem(bucket_url="file://" + spec["source"], file_glob="*.jsonl") | read_jsonl()
    pipeline.extract(files.with_name(core.RESOURCE_NAME), loader_file_format="parquet")
    t_extract = time.perf_counter()
    pipeline.normalize(workers=2)
    t_normalize = time.perf_counter()
    pipeline.load()
    end = time.perf_counter()
    stages = {"extract": t_extract - ready, "normalize": t_normalize - t_extract, "load": end - t_normalize}
    return _result(spec["events"], started, ready, end, stages, bucket)


def child_lakeload_files(spec: dict[str, Any]) -> dict[str, Any]:
    started = time.perf_counter()
    import lakeload
    from lakeload.sources.filesystem import filesystem, read_jsonl
    from lakeload.spark.session import get_spark

    get_spark()
    bucket, pipes = Path(spec["bucket"]), Path(spec["pipelines_dir"])
    pipeline = lakeload.pipeline("bench_ll_files", destination=_destination(lakeload, spec, bucket),
                                 dataset_name=core.DATASET, pipelines_dir=str(pipes))
    ready = time.perf_counter()
    pipeline.extract(filesystem(bucket_url=spec["source"], file_glob="*.jsonl") | read_jsonl(),
                     table_name=core.RESOURCE_NAME, loader_file_format="parquet")
    t_extract = time.perf_counter()
    pipeline.normalize()
    t_normalize = time.perf_counter()
    pipeline.load()
    end = time.perf_counter()
    stages = {"extract": t_extract - ready, "normalize": t_normalize - t_extract, "load": end - t_normalize}
    return {**_result(spec["events"], started, ready, end, stages, bucket), "spark_engine": spark_engine()}


def child_spark_files(spec: dict[str, Any]) -> dict[str, Any]:
    started = time.perf_counter()
    from lakeload.spark.session import get_spark

    spark = get_spark()
    ready = time.perf_counter()
    out = Path(spec["bucket"]) / core.DATASET / core.RESOURCE_NAME
    spark.read.json(str(Path(spec["source"]) / "*.jsonl")).write.mode("overwrite").parquet(str(out))
    end = time.perf_counter()
    return _result(spec["events"], started, ready, end, {"read_json_write_parquet": end - ready}, Path(spec["bucket"]))


def child_duckdb_files(spec: dict[str, Any]) -> dict[str, Any]:
    """DuckDB's nested COPY of the same files to one parquet file, 2 threads, timed from connect."""
    import duckdb

    bucket = Path(spec["bucket"])
    out = bucket / core.DATASET / core.RESOURCE_NAME / "events.parquet"
    out.parent.mkdir(parents=True)
    started = time.perf_counter()
    con = duckdb.connect()
    con.execute("SET threads=2")
    source = str(Path(spec["source"]) / "*.jsonl")
    con.execute(f"COPY (SELECT * FROM read_json('{source}', format='newline_delimited')) TO '{out}' (FORMAT parquet)")
    con.close()
    end = time.perf_counter()
    return _result(spec["events"], started, started, end, {"copy": end - started}, bucket)


def child_polars_files(spec: dict[str, Any]) -> dict[str, Any]:
    """Polars' lazy ``scan_ndjson(files).sink_parquet(...)`` of the same files, timed from the scan."""
    import polars as pl

    bucket = Path(spec["bucket"])
    out = bucket / core.DATASET / core.RESOURCE_NAME / "events.parquet"
    out.parent.mkdir(parents=True)
    started = time.perf_counter()
    pl.scan_ndjson(sorted(Path(spec["source"]).glob("*.jsonl"))).sink_parquet(out)
    end = time.perf_counter()
    return _result(spec["events"], started, started, end, {"scan_ndjson_sink_parquet": end - started}, bucket)


def child_small(spec: dict[str, Any]) -> dict[str, Any]:
    """Spark's own start and first job, then lakeload's cold and warm 10-record runs."""
    started = time.perf_counter()
    import lakeload
    from lakeload.spark.session import get_spark

    t_import = time.perf_counter()
    spark = get_spark()
    t_session = time.perf_counter()
    if spec.get("warm_up", True):  # Spark's own first Python job (JVM and Python worker warm-up)
        spark.range(2, numPartitions=2).mapInArrow(lambda batches: batches, "id long").collect()
    t_first_job = time.perf_counter()
    records = [{"id": i, "name": f"user {i}", "tags": ["a", "b"], "address": {"city": "x"}} for i in range(10)]
    pipeline = lakeload.pipeline("bench_small", destination=lakeload.destinations.filesystem(spec["bucket"]),
                                 dataset_name=core.DATASET, pipelines_dir=spec["pipelines_dir"])
    t0 = time.perf_counter()
    pipeline.run(records, table_name="users")
    cold = time.perf_counter() - t0
    warm = []
    for _ in range(5):
        t0 = time.perf_counter()
        pipeline.run(records, table_name="users")
        warm.append(time.perf_counter() - t0)
    return {
        "stages": {"import": t_import - started, "spark_session_start": t_session - t_import,
                   "spark_first_python_job": t_first_job - t_session, "lakeload_cold_run": cold,
                   "lakeload_warm_run_median": statistics.median(warm)},
        "warm_runs": warm,
        "total_s": cold,
        "rows_per_s": 10 / statistics.median(warm),
        "driver_peak_rss_mb": core.self_peak_rss_mb(),
        "readback": core.read_back(Path(spec["bucket"]) / core.DATASET),
    }


CHILDREN = {"dlt_files": child_dlt_files, "lakeload_files": child_lakeload_files, "spark_files": child_spark_files,
            "duckdb_files": child_duckdb_files, "polars_files": child_polars_files, "small": child_small,
            "lakeload_files_connect": child_lakeload_files}
FILE_TOOLS = "dlt_files,lakeload_files,spark_files,duckdb_files,polars_files"
SPARK_ENV = {"lakeload_files": LOCAL_ENV, "spark_files": LOCAL_ENV, "small": LOCAL_ENV,
             "lakeload_files_connect": REMOTE_ENV}
"""Spark's mode per child: in-process, or the local Connect server the parent started (issue 17)."""


def run_child(spec: dict[str, Any]) -> dict[str, Any]:
    run_dir = Path(spec["run_dir"])
    core._reset_dir(run_dir)
    spec = {**spec, "bucket": str(run_dir / "bucket"), "pipelines_dir": str(run_dir / "pipelines")}
    spec_path = run_dir / "spec.json"
    spec_path.write_text(json.dumps(spec))
    print(f"--> {spec['label']} log: {run_dir / 'child.log'}", flush=True)
    env = child_environment(dict(os.environ, PYTHONPATH=str(core.REPO_ROOT)), SPARK_ENV.get(spec["tool"]))
    with open(run_dir / "child.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, __file__, "--child", str(spec_path)], stdout=log, stderr=subprocess.STDOUT,
                                env=env, cwd=run_dir)
        sampler = core.TreeRssSampler(proc.pid)
        sampler.start()
        proc.wait()
        sampler.stop()
    result_path = run_dir / "result.json"
    result = json.loads(result_path.read_text()) if result_path.exists() else {"error": f"exit {proc.returncode}"}
    result.update(label=spec["label"], sampled_driver_peak_rss_mb=sampler.peak_process_mb,
                  sampled_tree_peak_rss_mb=sampler.peak_tree_mb, cpu_s=sampler.cpu_s())
    print(json.dumps({k: result.get(k) for k in ("stages", "total_s", "cpu_s", "error")}, default=str), flush=True)
    return result


def run_file_tool(tool: str, events: int, source: Path, destination: str = "filesystem") -> dict[str, Any]:
    """One run of a files-scenario tool in its own process (the Connect one on a local Connect server)."""
    spec = {"label": tool, "tool": tool, "events": events, "source": str(source), "run_dir": str(WORKDIR / tool),
            "destination": destination}
    if tool == "lakeload_files_connect":
        return run_on_server(lambda: run_child(spec), core.TreeRssSampler)
    return run_child(spec)


def rows(result: dict[str, Any]) -> dict[str, int]:
    tables = result.get("readback", {}).get("tables", {})
    return {t: v["rows"] for t, v in tables.items() if not t.startswith("_dlt")}


def print_files(results: list[dict[str, Any]]) -> None:
    by = {r["label"]: r for r in results}
    dlt_total = by.get("dlt_files", {}).get("total_s")
    duckdb_total = by.get("duckdb_files", {}).get("total_s")
    print("\nvs dlt = dlt's total / this total (>1: faster than dlt); vs DuckDB = this total / DuckDB's (1: its speed)")
    print(f"{'':24}{'total [s]':>12}{'vs dlt':>9}{'vs DuckDB':>11}{'driver RSS [MB]':>18}  stages")
    for label, r in by.items():
        total = r.get("total_s")
        vs_dlt, vs_duckdb = ratio(dlt_total, total), ratio(total, duckdb_total)
        rss = r.get("sampled_driver_peak_rss_mb") or 0
        server_rss = r.get("connect_server_peak_rss_mb")
        stages = ", ".join(f"{k} {v:.1f}" for k, v in r.get("stages", {}).items())
        stages += f" (Spark {r['spark_engine']})" if r.get("spark_engine") else ""
        stages += f", Connect server peak RSS {server_rss:.0f} MB" if server_rss else ""
        stages += rounds_text(r)
        print(f"{label:24}{total or float('nan'):12.1f}{_times(vs_dlt):>9}{_times(vs_duckdb):>11}{rss:18.0f}  {stages}")
    counted = {label: rows(r).get(core.RESOURCE_NAME) for label, r in by.items()}
    print(f"root rows per tool: {counted}")


def _times(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}x"


def files_goals(results: list[dict[str, Any]]) -> list[Goal]:
    """Issue 16 goal 1 from the files scenario's totals (lakeload's without its Spark session start)."""
    total = {r["label"]: r.get("total_s") for r in results}
    lakeload = total.get("lakeload_files")
    return [
        Goal("lakeload / DuckDB COPY (time)", ratio(lakeload, total.get("duckdb_files")), 2.0, at_most=True),
        Goal("bare Spark read.json->write.parquet / lakeload (speed-up)", ratio(total.get("spark_files"), lakeload),
             2.0, at_most=False),
        Goal("dlt / lakeload (speed-up)", ratio(total.get("dlt_files"), lakeload), 8.0, at_most=False),
    ]


def connect_files_goals(results: list[dict[str, Any]]) -> list[Goal]:
    """Issue 17: lakeload_files through a local Connect server against lakeload_files in-process."""
    by = {r["label"]: r for r in results}
    connect = by.get("lakeload_files_connect", {})
    if connect.get("total_s"):
        start = connect.get("connect_server_start_s")
        server = "it was already running" if start is None else f"it started in {start:.1f} s"
        print("\n(totals after the session is ready: in-process excludes Spark's session start, Connect excludes the "
              f"client's connect; the local Connect server's start is in neither: {server})")
    return [connect_goal("files", connect, by.get("lakeload_files"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--files", type=int, default=8, help="JSONL files the events are written to")
    parser.add_argument("--scenarios", default="files,small")
    parser.add_argument("--tools", default=FILE_TOOLS, help=f"files scenario tools (default {FILE_TOOLS})")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run every files tool this many times, interleaved; goals use each tool's median run")
    parser.add_argument("--destination", default="filesystem", choices=("filesystem", "duckdb"),
                        help="where dlt_files and lakeload_files load: a Parquet bucket, or each a DuckDB database "
                             "(issue 35; the other tools always write Parquet)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a measured goal of issue 16 is missed")
    parser.add_argument("--child")
    args = parser.parse_args(argv)
    if args.child:
        spec = json.loads(Path(args.child).read_text())
        result = CHILDREN[spec["tool"]](spec)
        (Path(spec["run_dir"]) / "result.json").write_text(json.dumps(result, default=str))
        return 0
    scenarios = args.scenarios.split(",")
    results = []
    misses = 0
    if "files" in scenarios:
        source = WORKDIR / "source"
        info = write_jsonl_files(args.events, args.seed, source, args.files)
        print(f"{args.events:,} events in {info['files']} JSONL files, {info['bytes'] / 1e6:,.0f} MB", flush=True)
        tools = args.tools.split(",")
        if "polars_files" in tools and importlib.util.find_spec("polars") is None:
            print("--> polars_files skipped: polars is not installed in this environment", flush=True)
            tools.remove("polars_files")
        runs: dict[str, list[dict[str, Any]]] = {tool: [] for tool in tools}
        for round_index in range(args.rounds):
            for tool in rotated(tools, round_index):
                runs[tool].append(run_file_tool(tool, args.events, source, args.destination))
        results.extend(median_run(runs[tool]) for tool in tools)
        print_files(results)
        if args.destination == "duckdb":
            total = {r["label"]: r.get("total_s") for r in results}
            speedup = ratio(total.get("dlt_files"), total.get("lakeload_files"))
            rss = next((r.get("sampled_driver_peak_rss_mb") for r in results if r["label"] == "lakeload_files"), None)
            misses += print_goals(f"issue 35, {args.files} JSONL files -> DuckDB, {args.events:,} events", [
                Goal("dlt / lakeload into DuckDB (speed-up)", speedup, 4.0, at_most=False),
                Goal("lakeload driver peak RSS", rss, 250.0, at_most=True, unit=" MB")])
        else:
            misses += print_goals(f"issue 16 goal 1, JSONL files -> parquet, {args.events:,} events", files_goals(results))
        misses += print_goals(f"issue 17, JSONL files -> parquet through Connect, {args.events:,} events",
                              connect_files_goals(results))
    if "small" in scenarios:
        for warm_up in (True, False):
            label = "small" if warm_up else "small, no Spark warm-up job first"
            spec = {"label": label, "tool": "small", "events": 10, "warm_up": warm_up, "run_dir": str(WORKDIR / "small")}
            result = run_child(spec)
            print(f"\n{label}:\n" + "\n".join(f"  {k:28}{v:8.2f} s" for k, v in result.get("stages", {}).items()))
            results.append(result)
    out = WORKDIR / f"results-{int(time.time())}.json"
    out.write_text(json.dumps(results, indent=2, default=str))
    print(f"raw results: {out}")
    return 1 if args.check and misses else 0


if __name__ == "__main__":
    sys.exit(main())

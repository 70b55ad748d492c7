#!/usr/bin/env python
"""Side-by-side benchmark of dlt and lakeload loading the same nested GitHub-like events.

Both tools load ``generate_events(n, seed)`` (``lakeload/demo/events.py``) as a resource named
``events`` into a local filesystem bucket (parquet by default), in pages (lists) of ``--page-size`` events
(1,000 by default, as issue 16 measures; 1 yields single events). Every tool/configuration runs in
its own fresh subprocess (this script re-invoked with ``--child SPEC.json``) so that import
costs, peak RSS and caches are measured per run. The child reports per-stage seconds, peak RSS
of the driver (``getrusage``) and the rows/files found in the bucket (read back with pyarrow);
the parent samples the RSS of the child's descendants (dlt's normalize worker processes,
Spark's JVM and its Python workers) with psutil, checks that all runs produced the same rows
per table and prints the figures side by side with ratios (>1 means lakeload is better).

Examples::

    python bench/bench_vs_dlt.py --events 100000                      # dlt (1,2 workers) + lakeload
    python bench/bench_vs_dlt.py --events 5000 --only dlt --dlt-workers 1,2
    python bench/bench_vs_dlt.py --events 100000 --only lakeload --lakeload-modes stages,run
    python bench/bench_vs_dlt.py --events 100000 --generator-only
    python bench/bench_vs_dlt.py --events 100000 --spark-baseline     # bare spark json -> parquet
    python bench/bench_vs_dlt.py --events 100000 --json bench/results/100k.json
    python bench/bench_vs_dlt.py --events 1000000 --dlt-workers 1,2 --lakeload-modes cold --check
    python bench/bench_vs_dlt.py --events 1000000,10000000 --only lakeload --lakeload-modes run --check
    python bench/bench_vs_dlt.py --events 1000000 --only lakeload --lakeload-modes cold,cold_connect --check

With lakeload's ``cold`` mode, two more children run: the generator alone (the same pages, iterated and
dropped) and Spark's session start (``get_spark()``), the floor of issue 16's goal 2. Several ``--events``
sizes give goal 4 (driver peak RSS <= 200 MB at each size, time grows at most linearly in events).
Mode ``cold_connect`` (issue 17) is ``cold``'s child on a local Spark Connect server (``SPARK__MODE=remote``):
the parent starts the server first when none runs (its start is printed on its own, in no figure) and stops
it afterwards if it started it; every other Spark child runs with ``SPARK__MODE=local`` (in-process).
The goals are printed after the tables; ``--check`` exits 1 if a measured one is missed. ``--rounds N`` runs
every configuration N times, interleaved, and the tables and goals use each one's median run.

The lakeload side is isolated in :func:`run_lakeload_child` so it is easy to adapt to the API.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import importlib.util
import itertools
import json
import math
import os
import platform
import resource
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from connect_runs import (  # noqa: E402
    LOCAL_ENV,
    REMOTE_ENV,
    child_environment,
    connect_goal,
    run_on_server,
    spark_engine,
)
from goals import Goal, median_run, print_goals, ratio, rotated, rounds_text  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
EVENTS_PY = REPO_ROOT / "lakeload" / "demo" / "events.py"
DEFAULT_WORKDIR = REPO_ROOT / "bench" / "results"
DATASET = "bench"
RESOURCE_NAME = "events"
DLT_EXTRACT_ROTATION_ENV = "SOURCES__DATA_WRITER__FILE_MAX_ITEMS"
"""Rotates dlt's *extract* files. dlt resolves the extract data writer inside the
``sources.<section>.<name>`` config section, so ``EXTRACT__DATA_WRITER__FILE_MAX_ITEMS`` is
ignored by dlt 1.31 (verified: still one extracted file); ``DATA_WRITER__FILE_MAX_ITEMS`` would
work too but also rotates the normalize (output) files."""
DLT_EXTRACT_BUFFER_ENV = "SOURCES__DATA_WRITER__BUFFER_MAX_ITEMS"
"""dlt rotates only when its item buffer is flushed; see :func:`dlt_rotation_env`."""

# --------------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------------


def load_events_module() -> ModuleType:
    """Loads ``lakeload/demo/events.py`` by file path.

    This avoids importing the ``lakeload`` package (and thus pyspark) in the dlt child, which
    would otherwise inflate its import time and RSS.
    """
    spec = importlib.util.spec_from_file_location("_bench_demo_events", EVENTS_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def generate_events(n: int, seed: int) -> Iterator[dict[str, Any]]:
    """The events both tools load (same generator, same seed)."""
    gen: Callable[..., Iterator[dict[str, Any]]] = load_events_module().generate_events
    return gen(n, seed=seed)


def spec_events(spec: dict[str, Any]) -> Iterator[Any]:
    """What the resource receives: the spec's events in pages (lists) of ``page_size``, or single events."""
    events = generate_events(spec["events"], spec["seed"])
    size = spec.get("page_size", 1)
    if size <= 1:
        return events
    return iter(lambda: list(itertools.islice(events, size)), [])


def self_peak_rss_mb() -> float:
    """Peak RSS of the current process in MB (``ru_maxrss`` is KB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def children_peak_rss_mb() -> float:
    """Largest peak RSS among terminated, waited-for descendants (not a sum)."""
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def _count_jsonl_rows(path: Path) -> int:
    opener: Callable[..., Any] = gzip.open if _is_gzip(path) else open
    with opener(path, "rb") as f:
        return sum(1 for line in f if line.strip())


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def read_back(root: Path) -> dict[str, Any]:
    """Counts files and rows per table under ``root`` (``<root>/<table>/**/<files>``).

    Parquet rows come from the file footers (pyarrow); jsonl/csv-like files (dlt writes its
    ``_dlt_*`` tables as jsonl, possibly gzipped) are counted by lines. Files directly in
    ``root`` (e.g. dlt's ``init`` marker) and hidden/``_SUCCESS`` files are ignored.
    """
    import pyarrow.parquet as pq

    tables: dict[str, dict[str, int]] = {}
    if not root.exists():
        return {"tables": tables, "error": f"{root} does not exist"}
    for table_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        files = rows = size = 0
        for f in table_dir.rglob("*"):
            if not f.is_file() or f.name.startswith((".", "_")) or f.name.endswith(".crc"):
                continue
            files += 1
            size += f.stat().st_size
            if f.suffix == ".parquet" or ".parquet" in f.name:
                rows += pq.ParquetFile(f).metadata.num_rows
            elif ".jsonl" in f.name or ".json" in f.name:
                rows += _count_jsonl_rows(f)
        tables[table_dir.name] = {"files": files, "rows": rows, "bytes": size}
    data = {k: v for k, v in tables.items() if not k.startswith("_dlt")}
    return {
        "tables": tables,
        "data_files": sum(v["files"] for v in data.values()),
        "data_bytes": sum(v["bytes"] for v in data.values()),
    }


def _reset_dir(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)


# --------------------------------------------------------------------------------------------
# child side: one tool / configuration per process
# --------------------------------------------------------------------------------------------


def run_dlt_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Runs dlt extract -> normalize(workers) -> load into a filesystem bucket, timed per stage.

    With more than one normalize worker dlt only parallelizes over *extracted files*, and the
    extract step writes a single file per table unless the extract data writer rotates files.
    :data:`DLT_EXTRACT_ROTATION_ENV` is therefore set (see :func:`dlt_file_max_items`, or
    ``--dlt-file-max-items``) so every worker gets a near-equal share of the root table.
    """
    n, workers = spec["events"], spec["workers"]
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    os.environ.setdefault("RUNTIME__LOG_LEVEL", "WARNING")
    file_max_items = spec.get("file_max_items")
    if file_max_items is None:
        file_max_items = dlt_file_max_items(n, workers, spec.get("files_per_worker", 8))
    if file_max_items:
        os.environ.update(dlt_rotation_env(file_max_items))
    for key, value in spec.get("env", {}).items():
        os.environ[key] = value
    settings = {k: v for k, v in os.environ.items() if "__" in k and k.split("__")[0] in _DLT_SECTIONS}

    events = spec_events(spec)  # lazy; generation is timed inside extract
    t0 = time.perf_counter()
    import dlt

    t_import = time.perf_counter()
    bucket, pipes = Path(spec["bucket"]), Path(spec["pipelines_dir"])
    pipeline = dlt.pipeline(
        pipeline_name="bench_dlt",
        destination=dlt.destinations.filesystem("file://" + str(bucket)),
        dataset_name=DATASET,
        pipelines_dir=str(pipes),
    )
    t_setup = time.perf_counter()
    pipeline.extract(dlt.resource(events, name=RESOURCE_NAME), loader_file_format=spec["format"])
    t_extract = time.perf_counter()
    extracted_files = sum(
        1
        for f in (pipes / "bench_dlt" / "normalize").rglob("new_jobs/*")
        if f.is_file() and not f.name.startswith("_dlt")
    )
    pipeline.normalize(workers=workers)
    t_normalize = time.perf_counter()
    load_info = pipeline.load()
    t_load = time.perf_counter()
    if load_info.has_failed_jobs:
        raise RuntimeError(f"dlt load has failed jobs: {load_info}")
    stages = {
        "setup": t_setup - t_import,
        "extract": t_extract - t_setup,
        "normalize": t_normalize - t_extract,
        "load": t_load - t_normalize,
    }
    total = t_load - t_import
    return {
        "version": dlt.__version__,
        "settings": settings,
        "extracted_files": extracted_files,
        "import_s": t_import - t0,
        "spark_start_s": None,
        "stages": stages,
        "total_s": total,
        "total_with_startup_s": t_load - t0,
        "rows_per_s": n / total,
        "driver_peak_rss_mb": self_peak_rss_mb(),
        "waited_children_max_rss_mb": children_peak_rss_mb(),
        "readback": read_back(bucket / DATASET),
    }


def dlt_file_max_items(n: int, workers: int, files_per_worker: int = 8) -> int | None:
    """Extract file rotation that splits ``n`` root items evenly over dlt's normalize workers.

    dlt sorts the extracted files (the first run also has one ``_dlt_pipeline_state`` file,
    which sorts first), cuts the list into ``len(files) // workers`` sized chunks and appends
    the remainder to the last chunks. Producing ``workers * files_per_worker - 1`` event files
    makes the file count divisible by ``workers``: with 2 workers and 8 files per worker the
    split is 7 vs 8 event files (``ceil(n / workers)``, i.e. 2 files, would give both event
    files to one worker and the state file to the other). Returns None (no rotation) for 1 worker.
    """
    if workers <= 1:
        return None
    return max(1, math.ceil(n / max(1, workers * files_per_worker - 1)))


def dlt_rotation_env(file_max_items: int, default_buffer: int = 5000) -> dict[str, str]:
    """dlt config env vars that rotate extracted files every ~``file_max_items`` items.

    dlt only checks for rotation after flushing its item buffer (5000 items by default), so a
    file holds ``ceil(file_max_items / buffer) * buffer`` items. The buffer is therefore set to
    ``ceil(file_max_items / flushes)`` (at most ``default_buffer``) to keep files near
    the requested size without growing the buffer.
    """
    flushes = math.ceil(file_max_items / default_buffer)
    buffer = math.ceil(file_max_items / flushes)
    return {DLT_EXTRACT_ROTATION_ENV: str(buffer * flushes), DLT_EXTRACT_BUFFER_ENV: str(buffer)}


_DLT_SECTIONS = {"EXTRACT", "NORMALIZE", "LOAD", "DATA_WRITER", "RUNTIME", "SOURCES"}


def run_lakeload_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Runs lakeload; mode ``stages`` (extract/normalize/load) or ``run`` (single ``run``).

    Spark session start is timed on its own (``get_spark()`` before the pipeline is created)
    and excluded from ``total_s``; ``total_with_startup_s`` includes import and Spark start.
    Adapt this function when lakeload's API changes.
    """
    n, mode, fmt = spec["events"], spec["mode"], spec["format"]
    events = spec_events(spec)
    t0 = time.perf_counter()
    import lakeload

    t_import = time.perf_counter()
    spark_start: float | None = None
    try:
        from lakeload.spark.session import get_spark
    except ImportError:  # pragma: no cover - API not there yet
        get_spark = None
    if get_spark is not None and not mode.startswith("cold"):  # cold: run() starts Spark itself, beside the extract
        get_spark()
        spark_start = time.perf_counter() - t_import
    t_ready = time.perf_counter()

    bucket, pipes = Path(spec["bucket"]), Path(spec["pipelines_dir"])
    kwargs: dict[str, Any] = {}
    if spec.get("progress"):
        kwargs["progress"] = spec["progress"]
    pipeline = lakeload.pipeline(
        pipeline_name="bench_ll",
        destination=lakeload.destinations.filesystem(bucket_url=str(bucket)),
        dataset_name=DATASET,
        pipelines_dir=str(pipes),
        **kwargs,
    )
    resource_ = lakeload.resource(events, name=RESOURCE_NAME)
    t_setup = time.perf_counter()
    stages = {"setup": t_setup - t_ready}
    if mode == "stages":
        pipeline.extract(resource_, loader_file_format=fmt)
        t_extract = time.perf_counter()
        pipeline.normalize()
        t_normalize = time.perf_counter()
        pipeline.load()
        t_end = time.perf_counter()
        stages.update(
            extract=t_extract - t_setup, normalize=t_normalize - t_extract, load=t_end - t_normalize
        )
    elif mode in ("run", "cold", "cold_connect"):
        info = pipeline.run(resource_, loader_file_format=fmt)
        t_end = time.perf_counter()
        stages["run"] = t_end - t_setup
        if getattr(info, "has_failed_jobs", False):
            raise RuntimeError(f"lakeload load has failed jobs: {info}")
    else:
        raise ValueError(f"unknown lakeload mode {mode!r}")
    total = t_end - t_ready
    return {
        "version": getattr(lakeload, "__version__", None),
        "settings": {"mode": mode, **kwargs},
        "spark_engine": spark_engine(),  # after the clock: "connect" or "in-process"
        "import_s": t_import - t0,
        "spark_start_s": spark_start,
        "stages": stages,
        "total_s": total,
        "total_with_startup_s": t_end - t0,
        "rows_per_s": n / total,
        "driver_peak_rss_mb": self_peak_rss_mb(),
        "waited_children_max_rss_mb": children_peak_rss_mb(),
        "readback": read_back(bucket / DATASET),
    }


def run_spark_baseline_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Writes the events to JSONL, then times a bare ``spark.read.json(...).write.parquet(...)``."""
    n = spec["events"]
    run_dir = Path(spec["run_dir"])
    jsonl, out = run_dir / "events.jsonl", Path(spec["bucket"]) / DATASET / RESOURCE_NAME
    try:
        import orjson

        def dumps(obj: Any) -> bytes:
            return orjson.dumps(obj) + b"\n"
    except ImportError:  # pragma: no cover

        def dumps(obj: Any) -> bytes:
            return json.dumps(obj, separators=(",", ":")).encode() + b"\n"

    t0 = time.perf_counter()
    with open(jsonl, "wb") as f:
        for event in generate_events(n, spec["seed"]):
            f.write(dumps(event))
    t_jsonl = time.perf_counter()
    try:
        from lakeload.spark.session import get_spark

        spark = get_spark()
    except ImportError:  # pragma: no cover - fall back to a plain local session
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.master("local[*]").appName("bench_baseline").getOrCreate()
    t_spark = time.perf_counter()
    spark.read.json(str(jsonl)).write.mode("overwrite").parquet(str(out))
    t_end = time.perf_counter()
    total = t_end - t_spark
    return {
        "version": getattr(spark, "version", None),
        "settings": {"jsonl_bytes": jsonl.stat().st_size},
        "import_s": None,
        "spark_start_s": t_spark - t_jsonl,
        "stages": {"write_jsonl": t_jsonl - t0, "spark_json_to_parquet": total},
        "total_s": total,
        "total_with_startup_s": t_end - t0,
        "rows_per_s": n / total,
        "driver_peak_rss_mb": self_peak_rss_mb(),
        "waited_children_max_rss_mb": children_peak_rss_mb(),
        "readback": read_back(out.parent),
    }


def run_generator_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Iterates exactly what the resource receives (:func:`spec_events`) and nothing else, timed."""
    pages = spec_events(spec)  # loads the events module before the clock starts, like the tools' children
    t0 = time.perf_counter()
    count = sum(len(page) if isinstance(page, list) else 1 for page in pages)
    total = time.perf_counter() - t0
    return {"stages": {"iterate": total}, "total_s": total, "rows_per_s": count / total, "generated": count,
            "driver_peak_rss_mb": self_peak_rss_mb()}


def run_spark_start_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Spark's session start as lakeload's cold ``run()`` pays it: ``get_spark()`` after importing lakeload."""
    import lakeload  # noqa: F401  (imported before the clock starts, as in the lakeload child)
    from lakeload.spark.session import get_spark

    t0 = time.perf_counter()
    get_spark()
    total = time.perf_counter() - t0
    return {"stages": {"get_spark": total}, "spark_start_s": total, "total_s": total, "rows_per_s": 0.0,
            "driver_peak_rss_mb": self_peak_rss_mb()}


CHILD_RUNNERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "dlt": run_dlt_child,
    "lakeload": run_lakeload_child,
    "spark_baseline": run_spark_baseline_child,
    "generator": run_generator_child,
    "spark_start": run_spark_start_child,
}


def child_main(spec_path: str) -> int:
    """Entry point of a child process: runs one spec and writes its result JSON."""
    spec = json.loads(Path(spec_path).read_text())
    result: dict[str, Any] = {"label": spec["label"], "tool": spec["tool"], "ok": False}
    try:
        result.update(CHILD_RUNNERS[spec["tool"]](spec))
        result["ok"] = True
    except BaseException as ex:  # report any failure to the parent
        import traceback

        traceback.print_exc()
        result["error"] = f"{type(ex).__name__}: {ex}"
    Path(spec["result_path"]).write_text(json.dumps(result, indent=2, default=str))
    return 0 if result["ok"] else 1


# --------------------------------------------------------------------------------------------
# parent side
# --------------------------------------------------------------------------------------------


class TreeRssSampler(threading.Thread):
    """Samples the RSS of a process and of all its descendants (JVM, pool workers) with psutil, and the CPU
    seconds each of them used (the last value seen per process, summed by kind: `cpu_s()`)."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_process_mb = self.peak_descendants_mb = self.peak_tree_mb = 0.0
        self.max_descendants = 0
        self.available = True
        self._stop_event = threading.Event()
        self._cpu: dict[int, tuple[str, float]] = {}

    def run(self) -> None:
        try:
            import psutil
        except ImportError:
            self.available = False
            return
        try:
            proc = psutil.Process(self.pid)
        except psutil.Error:
            return
        while not self._stop_event.is_set():
            try:
                own = proc.memory_info().rss
                self._note_cpu(proc)
                desc = 0
                children = proc.children(recursive=True)
                for child in children:
                    with contextlib.suppress(psutil.Error):
                        desc += child.memory_info().rss
                        self._note_cpu(child)
            except psutil.Error:
                break
            mb = 1024 * 1024
            self.peak_process_mb = max(self.peak_process_mb, own / mb)
            self.peak_descendants_mb = max(self.peak_descendants_mb, desc / mb)
            self.peak_tree_mb = max(self.peak_tree_mb, (own + desc) / mb)
            self.max_descendants = max(self.max_descendants, len(children))
            self._stop_event.wait(self.interval)

    def _note_cpu(self, proc: Any) -> None:
        times = proc.cpu_times()
        known = self._cpu.get(proc.pid, ("other", 0.0))[0]
        kind = known if known != "other" else self._kind(proc)  # spark-class's bash becomes the JVM (exec)
        self._cpu[proc.pid] = (kind, times.user + times.system)

    def _kind(self, proc: Any) -> str:
        if proc.pid == self.pid:
            return "driver"
        if proc.name() == "java":
            return "jvm"
        args = proc.cmdline()
        module = args[args.index("-m") + 1] if "-m" in args[:-1] else ""
        return "python_workers" if module in ("pyspark.daemon", "lakeload.kernel.spark.daemon") else "other"

    def cpu_s(self) -> dict[str, float]:
        """CPU seconds (user + system) per kind of process: driver, jvm, python_workers, other; a process that
        ended between two samples loses at most one interval."""
        totals: dict[str, float] = {}
        for kind, seconds in self._cpu.values():
            totals[kind] = round(totals.get(kind, 0.0) + seconds, 2)
        return totals

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)


def run_child(spec: dict[str, Any], timeout: float, verbose: bool) -> dict[str, Any]:
    """Runs one spec in a fresh ``python bench_vs_dlt.py --child`` process and returns its result."""
    run_dir = Path(spec["run_dir"])
    _reset_dir(run_dir)
    spec = {
        **spec,
        "bucket": str(run_dir / "bucket"),
        "pipelines_dir": str(run_dir / "pipelines"),
        "result_path": str(run_dir / "result.json"),
    }
    spec_path = run_dir / "spec.json"
    spec_path.write_text(json.dumps(spec, indent=2))
    log_path = run_dir / "child.log"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env = child_environment(env, spec.get("process_env"))  # Spark in-process, or on the local Connect server
    print(f"--> {spec['label']} ({spec['events']:,} events) log: {log_path}", flush=True)
    t0 = time.perf_counter()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--child", str(spec_path)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=str(run_dir),
        )
        sampler = TreeRssSampler(proc.pid)
        sampler.start()
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        finally:
            sampler.stop()
    wall = time.perf_counter() - t0
    result_path = Path(spec["result_path"])
    if result_path.exists():
        result = json.loads(result_path.read_text())
    else:
        result = {"label": spec["label"], "tool": spec["tool"], "ok": False, "error": f"exit code {rc}"}
    result.update(
        events=spec["events"],
        process_wall_s=wall,
        sampled_driver_peak_rss_mb=sampler.peak_process_mb if sampler.available else None,
        sampled_children_peak_rss_mb=sampler.peak_descendants_mb if sampler.available else None,
        sampled_tree_peak_rss_mb=sampler.peak_tree_mb if sampler.available else None,
        max_child_processes=sampler.max_descendants if sampler.available else None,
        cpu_s=sampler.cpu_s() if sampler.available else None,
        run_dir=str(run_dir),
    )
    if not result.get("ok"):
        tail = log_path.read_text(errors="replace").splitlines()[-25:]
        print(f"    FAILED: {result.get('error')}\n    " + "\n    ".join(tail), flush=True)
    elif verbose:
        print(json.dumps(result, indent=2, default=str))
    else:
        print(f"    ok in {result['total_s']:.2f}s ({result['rows_per_s']:,.0f} events/s), CPU [s] {result['cpu_s']}",
              flush=True)
    return result


def build_specs(args: argparse.Namespace, workdir: Path) -> list[dict[str, Any]]:
    """Expands the command line into one spec per tool/configuration."""
    base = {"events": args.events, "seed": args.seed, "format": args.format, "page_size": args.page_size}
    specs: list[dict[str, Any]] = []
    if args.spark_baseline:
        return [
            {
                **base,
                "tool": "spark_baseline",
                "label": "spark baseline",
                "process_env": LOCAL_ENV,
                "run_dir": str(workdir / "spark_baseline"),
            }
        ]
    if args.only in (None, "dlt"):
        env = dict(kv.split("=", 1) for kv in args.dlt_env)
        for w in _int_list(args.dlt_workers):
            specs.append(
                {
                    **base,
                    "tool": "dlt",
                    "label": f"dlt w={w}",
                    "workers": w,
                    "file_max_items": args.dlt_file_max_items,
                    "files_per_worker": args.dlt_files_per_worker,
                    "env": env,
                    "run_dir": str(workdir / f"dlt_w{w}"),
                }
            )
    modes = [m.strip() for m in args.lakeload_modes.split(",") if m.strip()]
    if args.only in (None, "lakeload"):
        for mode in modes:
            specs.append(
                {
                    **base,
                    "tool": "lakeload",
                    "label": f"lakeload {mode}",
                    "mode": mode,
                    "progress": None if args.ll_progress == "none" else args.ll_progress,
                    "run_dir": str(workdir / f"lakeload_{mode}"),
                    "process_env": REMOTE_ENV if mode == "cold_connect" else LOCAL_ENV,
                    "connect": mode == "cold_connect",
                }
            )
        if "cold" in modes:  # goal 2's floor: the generator alone plus Spark's session start
            for tool, label in (("generator", "generator alone"), ("spark_start", "spark session start")):
                specs.append({**base, "tool": tool, "label": label, "run_dir": str(workdir / tool),
                              "process_env": LOCAL_ENV})
    return specs


def _int_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def check_row_counts(results: list[dict[str, Any]], n: int) -> list[str]:
    """Compares rows per data table (``_dlt*`` tables excluded) across successful runs."""
    problems: list[str] = []
    loaded = [r for r in results if r.get("ok") and "readback" in r]
    ok = [r for r in loaded if r["tool"] != "spark_baseline"]
    for r in loaded:
        root_rows = r["readback"]["tables"].get(RESOURCE_NAME, {}).get("rows")
        if root_rows != n:
            problems.append(f"{r['label']}: table {RESOURCE_NAME!r} has {root_rows} rows, expected {n}")
    if len(ok) < 2:
        return problems
    ref = ok[0]

    def data_rows(r: dict[str, Any]) -> dict[str, int]:
        return {k: v["rows"] for k, v in r["readback"]["tables"].items() if not k.startswith("_dlt")}

    ref_rows = data_rows(ref)
    for r in ok[1:]:
        rows = data_rows(r)
        for table in sorted(set(ref_rows) | set(rows)):
            if ref_rows.get(table) != rows.get(table):
                problems.append(
                    f"{table}: {ref['label']}={ref_rows.get(table)} vs {r['label']}={rows.get(table)}"
                )
    return problems


def _fmt(value: Any, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value:.2f}"
    if unit == "MB":
        return f"{value:,.0f}"
    if unit == "/s":
        return f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def result_rows(results: list[dict[str, Any]]) -> list[tuple[str, str, list[Any]]]:
    """(metric name, unit, values per run) for the comparison table."""
    stage_names: list[str] = []
    for r in results:
        for s in r.get("stages", {}) or {}:
            if s not in stage_names:
                stage_names.append(s)
    rows: list[tuple[str, str, list[Any]]] = [
        ("import", "s", [r.get("import_s") for r in results]),
        ("spark start", "s", [r.get("spark_start_s") for r in results]),
        ("spark engine", "", [r.get("spark_engine") for r in results]),
    ]
    rows += [(s, "s", [(r.get("stages") or {}).get(s) for r in results]) for s in stage_names]
    rows += [
        ("total (excl. import/spark start)", "s", [r.get("total_s") for r in results]),
        ("total incl. startup", "s", [r.get("total_with_startup_s") for r in results]),
        ("events/s", "/s", [r.get("rows_per_s") for r in results]),
        ("driver peak RSS (getrusage)", "MB", [r.get("driver_peak_rss_mb") for r in results]),
        ("children peak RSS (psutil)", "MB", [r.get("sampled_children_peak_rss_mb") for r in results]),
        ("process tree peak RSS (psutil)", "MB", [r.get("sampled_tree_peak_rss_mb") for r in results]),
        ("Connect server peak RSS (psutil)", "MB", [r.get("connect_server_peak_rss_mb") for r in results]),
        ("dlt extracted files", "", [r.get("extracted_files") for r in results]),
        ("data files", "", [(r.get("readback") or {}).get("data_files") for r in results]),
    ]
    tables: list[str] = []
    for r in results:
        for t in (r.get("readback") or {}).get("tables") or {}:
            if not t.startswith("_dlt") and t not in tables:
                tables.append(t)
    for t in tables:
        rows.append(
            (
                f"rows {t}",
                "",
                [((r.get("readback") or {}).get("tables") or {}).get(t, {}).get("rows") for r in results],
            )
        )
    return rows


def print_results(results: list[dict[str, Any]]) -> None:
    """Prints runs side by side; ratio columns compare the fastest dlt run with each other run.

    Ratios are dlt / other for seconds and MB and other / dlt for events/s, so >1 always means
    the other tool (lakeload) is better.
    """
    ok = [r for r in results if r.get("ok") and "readback" in r]  # the generator and Spark start load nothing
    if not ok:
        print("no successful runs")
        return
    dlt_runs = [r for r in ok if r["tool"] == "dlt"]
    best_dlt = min(dlt_runs, key=lambda r: r["total_s"]) if dlt_runs else None
    others = [r for r in ok if r["tool"] != "dlt"] if best_dlt else []
    headers = (
        ["metric"]
        + [r["label"] for r in ok]
        + [f"{best_dlt['label']}/{o['label']}" for o in others if best_dlt]
    )
    idx = {id(r): i for i, r in enumerate(ok)}
    table: list[list[str]] = []
    for name, unit, values in result_rows(ok):
        line = [f"{name} [{unit}]" if unit else name] + [_fmt(v, unit) for v in values]
        for o in others:
            assert best_dlt is not None
            d, v = values[idx[id(best_dlt)]], values[idx[id(o)]]
            ratio = None
            if unit in ("s", "MB") and d and v:
                ratio = d / v
            elif unit == "/s" and d and v:
                ratio = v / d
            line.append(f"{ratio:.2f}x" if ratio is not None else "")
        table.append(line)
    try:
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        rt = Table(title=f"dlt vs lakeload, {ok[0]['events']:,} events")
        for i, h in enumerate(headers):
            rt.add_column(escape(h), justify="left" if i == 0 else "right")
        for line in table:
            rt.add_row(*(escape(c) for c in line))
        Console(width=None if sys.stdout.isatty() else 200).print(rt)  # a redirected log keeps whole columns
    except ImportError:
        widths = [max(len(row[i]) for row in [headers, *table]) for i in range(len(headers))]
        for row in [headers, *table]:
            print(
                "  ".join(
                    c.ljust(w) if i == 0 else c.rjust(w)
                    for i, (c, w) in enumerate(zip(row, widths, strict=True))
                )
            )


def generator_only(n: int, seed: int) -> dict[str, Any]:
    """Times iterating the generator in-process; the mean JSON size is measured on a sample."""
    gen = load_events_module().generate_events
    t0 = time.perf_counter()
    count = 0
    for _ in gen(n, seed=seed):
        count += 1
    dt = time.perf_counter() - t0
    sample = min(n, 20_000)
    size = sum(len(json.dumps(e, separators=(",", ":"))) for e in gen(sample, seed=seed))
    result = {
        "label": "generator",
        "tool": "generator",
        "ok": True,
        "events": count,
        "total_s": dt,
        "us_per_event": dt / max(count, 1) * 1e6,
        "events_per_s": count / dt if dt else None,
        "mean_event_bytes": size / max(sample, 1),
        "driver_peak_rss_mb": self_peak_rss_mb(),
    }
    print(
        f"generator: {count:,} events in {dt:.2f}s = {result['us_per_event']:.2f} us/event "
        f"({result['events_per_s']:,.0f} events/s), mean compact JSON size "
        f"{result['mean_event_bytes']:.0f} B (sample of {sample:,})"
    )
    return result


def _total(results: list[dict[str, Any]], label: str) -> float | None:
    return next((r.get("total_s") for r in results if r.get("ok") and r["label"] == label), None)


def generator_goals(results: list[dict[str, Any]]) -> list[Goal]:
    """Issue 16 goal 2: lakeload's cold ``run()`` against dlt's best and against the generator + Spark start."""
    dlt_best = min((r["total_s"] for r in results if r.get("ok") and r["tool"] == "dlt"), default=None)
    cold, generator, spark = (_total(results, x) for x in ("lakeload cold", "generator alone", "spark session start"))
    floor = generator + spark if generator and spark else None
    if floor:
        print(f"\ngenerator alone {generator:.2f} s + Spark session start {spark:.2f} s = {floor:.2f} s; "
              f"lakeload cold total {cold or float('nan'):.2f} s")
    return [
        Goal("dlt's best / lakeload cold (speed-up)", ratio(dlt_best, cold), 4.0, at_most=False),
        Goal("lakeload cold / (generator alone + Spark session start)", ratio(cold, floor), 1.5, at_most=True),
    ]


def connect_generator_goals(results: list[dict[str, Any]]) -> list[Goal]:
    """Issue 17: lakeload's cold ``run()`` through a local Connect server against the same run in-process."""
    connect = next((r for r in results if r.get("ok") and r["label"] == "lakeload cold_connect"), {})
    if connect:
        start = connect.get("connect_server_start_s")
        server = "a server was already running" if start is None else f"it started in {start:.1f} s"
        print("\n(lakeload cold's total includes Spark's in-process session start (JVM launch); cold_connect's "
              f"includes only the Connect client's session on the running local server ({server}, in no total))")
    cold = next((r for r in results if r.get("ok") and r["label"] == "lakeload cold"), None)
    return [connect_goal("generator, cold", connect, cold)]


def scaling_goals(by_events: dict[int, list[dict[str, Any]]]) -> list[Goal]:
    """Issue 16 goal 4: lakeload's driver peak RSS at each size, and time growing at most linearly in events."""
    lakeload = {n: {r["label"]: r for r in rs if r.get("ok") and r["tool"] == "lakeload"} for n, rs in by_events.items()}
    goals = [Goal(f"driver peak RSS, {label}, {n:,} events", r["driver_peak_rss_mb"], 200, at_most=True, unit=" MB")
             for n, runs in lakeload.items() for label, r in runs.items()]
    low, high = min(lakeload), max(lakeload)
    for label in sorted(lakeload[low].keys() & lakeload[high].keys()):
        goals.append(Goal(f"time({high:,}) / time({low:,}), {label}",
                          ratio(lakeload[high][label]["total_s"], lakeload[low][label]["total_s"]),
                          high / low, at_most=True))
    return goals


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command line of the benchmark (see module docstring)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=_int_list, default=[100_000],
                   help="number of root events, or several sizes comma separated (default 100000)")
    p.add_argument("--page-size", type=int, default=1000, help="events per page the resource yields (1: single events)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", choices=["dlt", "lakeload"], help="run only one tool")
    p.add_argument("--format", default="parquet", choices=["parquet", "jsonl"], help="loader file format")
    p.add_argument("--dlt-workers", default="1,2", help="comma separated dlt normalize worker counts")
    p.add_argument(
        "--dlt-file-max-items",
        type=int,
        default=None,
        help=f"{DLT_EXTRACT_ROTATION_ENV} for dlt (default: ceil(events / (workers * "
        "files_per_worker - 1)) when workers > 1, no rotation otherwise; 0 disables)",
    )
    p.add_argument("--dlt-files-per-worker", type=int, default=8, help="extracted event files per dlt worker")
    p.add_argument("--dlt-env", action="append", default=[], metavar="KEY=VALUE", help="extra dlt config env")
    p.add_argument("--lakeload-modes", default="stages,run",
                   help="'stages' (extract/normalize/load), 'run' (Spark started first), 'cold' (run() starts Spark "
                   "itself), 'cold_connect' (cold on a local Spark Connect server the parent starts if none runs)")
    p.add_argument("--ll-progress", default="log", help="lakeload pipeline(progress=...); 'none' to omit")
    p.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR, help="output dir (default bench/results)")
    p.add_argument("--json", type=Path, help="save all results to this JSON file")
    p.add_argument("--timeout", type=float, default=3600, help="per child run, seconds")
    p.add_argument("--cleanup", action="store_true", help="delete each run's bucket after a successful run")
    p.add_argument("--verbose", action="store_true", help="print full child results")
    p.add_argument("--generator-only", action="store_true", help="only time iterating the generator")
    p.add_argument(
        "--spark-baseline",
        action="store_true",
        help="write events to JSONL and time a bare spark.read.json(...).write.parquet(...)",
    )
    p.add_argument("--rounds", type=int, default=1,
                   help="run every configuration this many times, interleaved; tables and goals use each one's median run")
    p.add_argument("--check", action="store_true", help="exit 1 if a measured goal of issue 16 is missed")
    p.add_argument("--child", metavar="SPEC_JSON", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def run_size(args: argparse.Namespace, events: int, meta: dict[str, Any]) -> list[dict[str, Any]]:
    """Every configuration at one size, each in its own process; prints the table and the row-count check."""
    workdir = args.workdir.resolve() / f"{events}_{args.format}"
    workdir.mkdir(parents=True, exist_ok=True)
    specs = build_specs(argparse.Namespace(**{**vars(args), "events": events}), workdir)
    runs: dict[str, list[dict[str, Any]]] = {spec["label"]: [] for spec in specs}
    for round_index in range(args.rounds):
        for spec in rotated(specs, round_index):
            if spec.get("connect"):
                result = run_on_server(lambda spec=spec: run_child(spec, args.timeout, args.verbose), TreeRssSampler)
            else:
                result = run_child(spec, args.timeout, args.verbose)
            runs[spec["label"]].append(result)
            if args.cleanup and result.get("ok"):
                shutil.rmtree(Path(spec["run_dir"]) / "bucket", ignore_errors=True)
    results = [median_run(label_runs) for label_runs in runs.values()]
    print()
    print_results(results)
    for result in results:
        if rounds_text(result):
            print(f"{result['label']}: median of {len(result['rounds'])} runs{rounds_text(result)}")
    problems = check_row_counts(results, events)
    if problems:
        print("ROW COUNT MISMATCH:\n  " + "\n  ".join(problems))
    else:
        print(f"row counts per table consistent across {sum(1 for r in results if r.get('readback'))} loading run(s)")
    meta.setdefault("row_count_problems", {})[events] = problems
    return results


def main(argv: list[str] | None = None) -> int:
    """Parent entry point: runs every configuration in its own subprocess and reports."""
    args = parse_args(argv)
    if args.child:
        return child_main(args.child)
    meta = {
        "events": args.events,
        "seed": args.seed,
        "format": args.format,
        "page_size": args.page_size,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    misses = 0
    if args.generator_only:
        results = [generator_only(n, args.seed) for n in args.events]
    else:
        by_events = {n: run_size(args, n, meta) for n in args.events}
        results = [r for rs in by_events.values() for r in rs]
        if not args.spark_baseline:
            for n, rs in by_events.items():
                misses += print_goals(f"issue 16 goal 2, generator -> parquet, {n:,} events", generator_goals(rs))
                misses += print_goals(f"issue 17, generator -> parquet through Connect, {n:,} events",
                                      connect_generator_goals(rs))
            if len(by_events) > 1:
                misses += print_goals("issue 16 goal 4, scaling", scaling_goals(by_events))
            else:
                print("\nissue 16 goal 4, scaling: not measured (give two sizes: --events 1000000,10000000)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2, default=str))
        print(f"results saved to {args.json}")
    if args.check and misses:
        return 1
    return 0 if all(r.get("ok") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

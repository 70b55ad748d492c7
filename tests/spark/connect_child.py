"""Child process: lakeload's core path on a Spark Connect server, in a Connect-only client.

usage: connect_child.py JSON  with keys url, parquet_bucket, jsonl_bucket, csv_bucket, delta_bucket, files_bucket,
files_source, sink_out, missing_module_dir, pipelines_dir, s3 (the S3 server: prefix, keys, endpoint_url, region),
s3_bucket, s3_destination (a bucket/prefix on the S3 server), layout_bucket, dagster_root; prints one JSON line. (More paths in connect_extras.py.)

Before lakeload is imported, every way to a JVM in this process is refused (py4j's gateway launch and
`SparkContext._ensure_initialized` raise), so a `sparkContext`, `_jvm` or RDD use anywhere on the path fails
the run. The parquet pipeline gets its session from `[spark] mode = "auto"` (the running server recorded
under HOME), the jsonl one from `spark=` (a session the script opened itself).
"""

from __future__ import annotations

import json
import sys
from typing import Any

JVM_REFUSED = "a JVM was asked for in a Spark Connect client"


def records() -> list[dict[str, Any]]:
    """Nested records: child tables from lists, nested dicts flattened, mixed scalar types and nulls."""
    return [
        {"id": i, "name": f"user {i}", "score": i * 1.5, "active": i % 2 == 0, "note": None if i % 3 else "x",
         "created_at": f"2024-05-{i + 1:02d}T10:00:00+00:00", "address": {"city": f"c{i}", "zip": 1000 + i},
         "tags": [f"t{j}" for j in range(i % 3)], "orders": [{"sku": f"s{i}-{j}", "qty": j} for j in range(i % 4)]}
        for i in range(12)
    ]


def run_delta(pipeline: Any) -> list[dict[str, int]]:
    """Delta append twice, then a merge on `id` that updates, inserts and replaces nested rows."""
    import lakeload

    rows = [{"id": i, "value": f"a{i}", "kids": [{"k": j} for j in range(i % 3)]} for i in range(6)]
    updates = [{"id": i, "value": f"b{i}", "kids": [{"k": 9}]} for i in range(3, 8)]
    counts = [pipeline.run(rows, table_name="appended", table_format="delta").row_counts for _ in range(2)]
    for batch in (rows, updates):
        merged = lakeload.resource(batch, name="merged", write_disposition="merge", primary_key="id", table_format="delta")
        counts.append(pipeline.run(merged).row_counts)
    return counts


FRAME_ROWS = [(i, f"f{i}", [i, i + 1]) for i in range(5)]
FRAME_SCHEMA = "id long, label string, numbers array<long>"


def write_jsonl_files(folder: str) -> None:
    """Two JSONL files for the filesystem source (one gzipped), with nested rows."""
    import gzip
    import os

    os.makedirs(folder, exist_ok=True)
    lines = [json.dumps({"id": i, "kind": f"k{i % 2}", "info": {"n": i}, "parts": list(range(i % 3))}) for i in range(8)]
    with open(os.path.join(folder, "a.jsonl"), "w") as handle:
        handle.write("\n".join(lines[:5]) + "\n")
    with gzip.open(os.path.join(folder, "b.jsonl.gz"), "wt") as handle:
        handle.write("\n".join(lines[5:]) + "\n")


def run_files(pipeline: Any, source_folder: str) -> dict[str, int]:
    """filesystem(...) | read_jsonl() into the pipeline's bucket as parquet."""
    from lakeload.sources.filesystem import filesystem, read_jsonl

    files = filesystem(f"file://{source_folder}", file_glob="*.jsonl*") | read_jsonl()
    return dict(pipeline.run(files, table_name="events", loader_file_format="parquet").row_counts)


def sink_recorder(out: str) -> Any:
    """A sink that writes each batch it gets to its own file in `out` (run on the server's Python workers)."""
    import lakeload

    @lakeload.destination(batch_size=4, name="connect_sink", run_on="executors")
    def record(items: list[dict[str, Any]], table: dict[str, Any]) -> None:
        import os
        import uuid

        with open(os.path.join(out, f"{table['name']}-{uuid.uuid4().hex}.json"), "w") as handle:
            json.dump(items, handle, default=str)

    return record


def sink_rows(out: str) -> dict[str, list[Any]]:
    """Rows each table's batches delivered, by table, sorted by id."""
    import pathlib

    rows: dict[str, list[Any]] = {}
    for path in sorted(pathlib.Path(out).glob("*.json")):
        rows.setdefault(path.name.rsplit("-", 1)[0], []).extend(json.loads(path.read_text()))
    return {table: sorted(batch, key=lambda row: json.dumps(row, sort_keys=True)) for table, batch in rows.items()}


def _worker_has_lakeload(_batches: Any) -> Any:
    import pyarrow as pa

    try:
        import lakeload
        where = lakeload.__file__
    except ImportError:
        where = ""
    yield pa.RecordBatch.from_pydict({"where": [where]})


def lakeload_on_workers(spark: Any) -> str:
    """Where the server's Python workers import lakeload from ('' when they cannot)."""
    return str(spark.range(1).mapInArrow(_worker_has_lakeload, "where string").collect()[0][0])


def isolated_sessions(url: str, shipped_to: Any, folder: str) -> list[str]:
    """Where lakeload is imported from in two sessions of one server: `shipped_to`, which got this client's zip,
    and a new session given another version's zip (this one with a marker file added)."""
    import os
    import shutil
    import zipfile

    from pyspark.sql import SparkSession

    from lakeload.spark.connect_shipping import package_archive

    other = os.path.join(folder, "lakeload-0.0.1-0123456789abcdef.zip")
    os.makedirs(folder, exist_ok=True)
    shutil.copy(package_archive(), other)
    with zipfile.ZipFile(other, "a") as archive:
        archive.writestr("lakeload/other_version.txt", "0.0.1")
    second = SparkSession.builder.remote(url).create()
    second.addArtifacts(other, pyfile=True)
    return [lakeload_on_workers(shipped_to), lakeload_on_workers(second)]


def refuse_jvm() -> None:
    """Make every way to a JVM in this process raise."""
    import pyspark.core.context as context
    import pyspark.java_gateway as gateway

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(JVM_REFUSED)

    gateway.launch_gateway = refused
    context.launch_gateway = refused  # type: ignore[attr-defined]
    context.SparkContext._ensure_initialized = classmethod(refused)  # type: ignore[assignment,method-assign]


def missing_module_error(folder: str, pipelines_dir: str) -> str:
    """The error of a run whose sink function comes from an installed package the server lacks."""
    import os

    import lakeload
    from lakeload.errors import LakeloadError

    package = os.path.join(folder, "site-packages")  # where cloudpickle ships functions by reference, as installed
    os.makedirs(package, exist_ok=True)
    with open(os.path.join(package, "client_only_helpers.py"), "w") as handle:
        handle.write("def deliver(items, table):\n    pass\n")
    sys.path.insert(0, package)
    import client_only_helpers

    pipeline = lakeload.pipeline("connect_missing", destination=lakeload.destination(client_only_helpers.deliver, run_on="executors"),
                                 pipelines_dir=pipelines_dir)
    try:
        pipeline.run(records()[:2], table_name="missing")
    except LakeloadError as exc:
        return str(exc)
    return ""


SLOW_SECONDS = 12.0


def slow_sink(out: str, flag: str) -> Any:
    """A sink that sleeps while the `flag` file exists (after writing `started`, and `finished` if the sleep ever
    ends), then writes each batch to its own file in `out`."""
    import os
    import time

    import lakeload

    @lakeload.destination(batch_size=4, name="slow_sink", run_on="executors")
    def slow(items: list[dict[str, Any]], table: dict[str, Any]) -> None:
        import uuid

        if os.path.exists(flag):
            with open(os.path.join(out, "started"), "w") as handle:
                handle.write(str(time.time()))
            time.sleep(SLOW_SECONDS)
            with open(os.path.join(out, "finished"), "w") as handle:
                handle.write(str(time.time()))
        with open(os.path.join(out, f"{table['name']}-{uuid.uuid4().hex}.json"), "w") as handle:
            json.dump(items, handle, default=str)

    return slow


def wait_out_slow_sink(out: str) -> bool:
    """Wait until the slow sink would have finished (3 s to spare); True when it did finish."""
    import os
    import time

    with open(os.path.join(out, "started")) as handle:
        time.sleep(max(0.0, float(handle.read()) + SLOW_SECONDS + 3 - time.time()))
    return os.path.exists(os.path.join(out, "finished"))


def interrupt_main(args: dict[str, Any]) -> None:
    """Ctrl-C while a sink runs on the server (the parent sends SIGINT once `started` is there), then
    `pipeline.load()` resumes the package on the same server. With mode `kill`, the parent kills this
    process instead and mode `resume` finishes the package in a new one."""
    import logging
    import os
    import time

    import lakeload

    out, flag = args["sink_out"], args["slow_flag"]
    messages: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: messages.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("lakeload.spark").addHandler(handler)
    logging.getLogger("lakeload.spark").setLevel(logging.INFO)
    pipeline = lakeload.pipeline("connect_interrupt", destination=slow_sink(out, flag), pipelines_dir=args["pipelines_dir"])
    if args["mode"] == "resume":
        info = pipeline.run()
        finished = wait_out_slow_sink(out)
        print(json.dumps({"resumed_packages": len(info.loads_ids), "finished": finished, "messages": messages,
                          "rows": {table: len(rows) for table, rows in sink_rows(out).items()},
                          "pending": pipeline.storage.list_packages("normalized")}))
        return
    started = time.monotonic()
    try:
        pipeline.run(records(), table_name="items")
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    stopped = time.monotonic() - started
    os.remove(flag)
    resumed = pipeline.load()
    print(json.dumps({
        "interrupted": interrupted, "stopped_after": stopped, "messages": messages,
        "resumed_packages": len(resumed.loads_ids), "finished": wait_out_slow_sink(out),
        "rows": {table: len(rows) for table, rows in sink_rows(out).items()},
        "pending": pipeline.storage.list_packages("normalized"),
    }))


def main() -> None:
    args = json.loads(sys.argv[1])
    refuse_jvm()
    if args.get("mode") in ("interrupt", "kill", "resume"):
        interrupt_main(args)
        return
    import connect_extras as extras
    from pyspark.core.context import SparkContext
    from pyspark.sql import SparkSession

    import lakeload

    auto = lakeload.pipeline("connect_parquet", destination=lakeload.destinations.filesystem(args["parquet_bucket"]),
                             dataset_name="ds", pipelines_dir=args["pipelines_dir"])
    before = lakeload_on_workers(SparkSession.builder.remote(args["url"]).getOrCreate())  # nothing shipped yet
    first = auto.run(records(), table_name="items", loader_file_format="parquet")
    after = lakeload_on_workers(auto.spark)
    frame = auto.spark.createDataFrame(FRAME_ROWS, FRAME_SCHEMA)
    second = auto.run(frame, table_name="frame_rows", loader_file_format="parquet")
    explicit_session = SparkSession.builder.remote(args["url"]).getOrCreate()
    explicit = lakeload.pipeline("connect_jsonl", destination=lakeload.destinations.filesystem(args["jsonl_bucket"]),
                                 dataset_name="ds", pipelines_dir=args["pipelines_dir"], spark=explicit_session)
    third = explicit.run(records(), table_name="items", loader_file_format="jsonl")
    delta = lakeload.pipeline("connect_delta", destination=lakeload.destinations.filesystem(args["delta_bucket"]),
                              dataset_name="ds", pipelines_dir=args["pipelines_dir"])
    delta_counts = run_delta(delta)
    replace_counts = extras.run_delta_replace(delta)
    strategy_counts = extras.run_merge_strategies(delta)
    csv = lakeload.pipeline("connect_csv", destination=lakeload.destinations.filesystem(args["csv_bucket"]),
                            dataset_name="ds", pipelines_dir=args["pipelines_dir"])
    csv_counts = extras.run_csv(csv, records())
    layout = extras.run_layout(args["layout_bucket"], args["pipelines_dir"], records())
    s3_working = extras.run_s3_working(args["s3"], args["s3_bucket"], args["pipelines_dir"], records())
    s3_destination = extras.run_s3_destination(args["s3"], args["s3_destination"], args["pipelines_dir"], records())
    dagster = extras.run_dagster(auto.spark, args["dagster_root"])
    files = lakeload.pipeline("connect_files", destination=lakeload.destinations.filesystem(args["files_bucket"]),
                              dataset_name="ds", pipelines_dir=args["pipelines_dir"])
    write_jsonl_files(args["files_source"])
    files_counts = run_files(files, args["files_source"])
    sink = lakeload.pipeline("connect_sink", destination=sink_recorder(args["sink_out"]), pipelines_dir=args["pipelines_dir"])
    sink_counts = dict(sink.run(records(), table_name="items").row_counts)
    missing = missing_module_error(args["missing_module_dir"], args["pipelines_dir"])
    isolated = isolated_sessions(args["url"], auto.spark, args["missing_module_dir"])
    dataset_rows = auto.dataset()["items"].spark(auto.spark).count()
    from lakeload.kernel.spark.warm import probe
    from lakeload.spark.session import run_tasks

    progress: list[int] = []
    doubled = run_tasks(explicit_session, probe, (2, 0.5), list(range(4)), "progress check", on_progress=progress.append)
    try:
        explicit_session.sparkContext  # noqa: B018 - Connect has none: pyspark raises
        has_context = True
    except Exception:
        has_context = False
    print(json.dumps({
        "auto_session": type(auto.spark).__module__,
        "explicit_session": type(explicit.spark).__module__,
        "row_counts": [first.row_counts, second.row_counts, third.row_counts],
        "delta_counts": delta_counts,
        "tasks": [doubled, sum(progress)],
        "has_spark_context": has_context,
        "jvm": SparkContext._jvm is not None or SparkContext._gateway is not None,
        "workers_lakeload": [before, after],
        "files_counts": files_counts,
        "sink_counts": sink_counts,
        "missing_module_error": missing,
        "isolated_sessions": isolated,
        "dataset_rows": dataset_rows,
        "replace_counts": replace_counts,
        "csv_counts": csv_counts,
        "layout": layout,
        "s3_working": s3_working,
        "strategy_counts": strategy_counts,
        "s3_destination": s3_destination,
        "dagster": dagster,
    }))


if __name__ == "__main__":
    main()

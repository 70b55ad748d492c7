"""More of lakeload's paths for the Connect child (tests/spark/connect_child.py) and its in-process twin: CSV
files, Delta replace, `[spark] working_url` on the S3 test server, and the Dagster Spark I/O manager.

Each function takes a pipeline or a session, so the test runs the same code through Connect (in the child) and
in-process (in the test) and compares what lands in the buckets.
"""

# no `from __future__ import annotations`: Dagster reads the assets' type annotations at definition time

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

REPLACED = [[{"id": i, "value": f"r{i}", "kids": [{"k": j} for j in range(i % 3)]} for i in range(5)],
            [{"id": i, "value": f"s{i}", "kids": [{"k": 7}]} for i in range(2, 5)]]
DAGSTER_ROWS = [(i, f"d{i}", float(i) / 2) for i in range(6)]
DAGSTER_SCHEMA = "id long, label string, score double"
PARTS_SCHEMA = "kind string, run long, i long"
PARTITION_A = [("a", 3, 0), ("a", 3, 1)]  # the third run replaced the first one's slice


def run_delta_replace(pipeline: Any) -> list[dict[str, int]]:
    """Delta replace twice: the second run's rows (and nested rows) are all that remain."""
    return [dict(pipeline.run(rows, table_name="replaced", table_format="delta", write_disposition="replace").row_counts)
            for rows in REPLACED]


UPSERTED = [[{"id": i, "value": f"u{i}", "gone": False, "kids": [{"k": j} for j in range(i % 3 + 1)]} for i in range(5)],
            [{"id": 1, "value": "u1", "gone": True}, {"id": 2, "value": "v2", "gone": False, "kids": [{"k": 8}]},
             {"id": 9, "value": "v9", "gone": False, "kids": []}]]
INSERTED = [[{"id": i, "value": f"i{i}", "kids": [{"k": i}]} for i in range(3)],
            [{"id": i, "value": f"j{i}", "kids": [{"k": 10 + i}]} for i in range(2, 5)]]


def run_merge_strategies(pipeline: Any) -> list[dict[str, int]]:
    """Delta merges with the `upsert` strategy (a hard delete, replaced and removed nested rows, an insert) and
    `insert-only` (stored rows kept, new keys added), two loads each."""
    import lakeload

    upsert = {"table_format": "delta", "primary_key": "id", "write_disposition": {"disposition": "merge", "strategy": "upsert"},
              "columns": {"gone": {"hard_delete": True, "data_type": "bool"}}}
    insert_only = {"table_format": "delta", "primary_key": "id",
                   "write_disposition": {"disposition": "merge", "strategy": "insert-only"}}
    counts = [dict(pipeline.run(lakeload.resource(rows, name="upserted", **upsert)).row_counts) for rows in UPSERTED]
    return counts + [dict(pipeline.run(lakeload.resource(rows, name="inserted", **insert_only)).row_counts) for rows in INSERTED]


def s3_destination(s3: dict[str, str], prefix: str) -> Any:
    """A filesystem destination on the S3 test server under `prefix`."""
    import lakeload

    credentials = {"aws_access_key_id": s3["access_key"], "aws_secret_access_key": s3["secret_key"],
                   "endpoint_url": s3["endpoint_url"], "region_name": s3["region"]}
    return lakeload.destinations.filesystem(f"s3://{prefix}", credentials=credentials)


def run_s3_destination(s3: dict[str, str], prefix: str, pipelines_dir: str, rows: list[dict[str, Any]]) -> list[dict[str, int]]:
    """Records as parquet (dataset `ds`), then Delta upserts with nested rows (dataset `ds_delta`), into a bucket on
    the S3 server."""
    import lakeload

    files = lakeload.pipeline("connect_s3_dest", destination=s3_destination(s3, prefix), dataset_name="ds",
                              pipelines_dir=pipelines_dir)
    delta = lakeload.pipeline("connect_s3_delta", destination=s3_destination(s3, prefix), dataset_name="ds_delta",
                              pipelines_dir=pipelines_dir)
    return [dict(files.run(rows, table_name="items", loader_file_format="parquet").row_counts),
            *run_merge_strategies(delta)[:2]]


def download(s3: dict[str, str], prefix: str, folder: str) -> None:
    """Copy everything under `prefix` on the S3 server into the local `folder`."""
    _s3fs(s3).get(f"{prefix}/", folder.rstrip("/") + "/", recursive=True)


def _owner(schema: str, table: str, load_id: str, file_id: str, ext: str) -> str:
    return f"{schema}-{table[:4]}-{ext}"  # a layout callback: runs where the files are written (the server)


def run_layout(bucket: str, pipelines_dir: str, rows: list[dict[str, Any]]) -> list[str]:
    """A layout with a callback placeholder, and a resource with `add_map`: the data files' folders."""
    import lakeload

    destination = lakeload.destinations.filesystem(bucket, layout="{table_name}/{owner}/{load_id}.{file_id}.{ext}",
                                                   extra_placeholders={"owner": _owner})
    pipeline = lakeload.pipeline("connect_layout", destination=destination, dataset_name="ds", pipelines_dir=pipelines_dir)
    mapped = lakeload.resource(rows, name="items").add_map(lambda row: {**row, "doubled": row["id"] * 2})
    pipeline.run(mapped, loader_file_format="parquet")
    found = [os.path.relpath(os.path.join(folder, name), os.path.join(bucket, "ds"))
             for folder, _, names in os.walk(os.path.join(bucket, "ds")) for name in names]
    return sorted({path.rsplit("/", 1)[0] for path in found if path.split("/")[0].startswith("items")})


def run_csv(pipeline: Any, rows: list[dict[str, Any]]) -> dict[str, int]:
    """Records to CSV files."""
    return dict(pipeline.run(rows, table_name="items", loader_file_format="csv").row_counts)


def working_env(s3: dict[str, str]) -> dict[str, str]:
    """`[spark] working_url` on the S3 server's bucket prefix, with its credentials, as environment variables."""
    return {"SPARK__WORKING_URL": f"s3://{s3['prefix']}",
            "SPARK__WORKING_CREDENTIALS__AWS_ACCESS_KEY_ID": s3["access_key"],
            "SPARK__WORKING_CREDENTIALS__AWS_SECRET_ACCESS_KEY": s3["secret_key"],
            "SPARK__WORKING_CREDENTIALS__ENDPOINT_URL": s3["endpoint_url"],
            "SPARK__WORKING_CREDENTIALS__REGION_NAME": s3["region"]}


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """`values` set in os.environ inside the block only."""
    os.environ.update(values)
    try:
        yield
    finally:
        for name in values:
            os.environ.pop(name, None)


def _s3fs(s3: dict[str, str]) -> Any:
    """An s3fs filesystem on the S3 test server, its listing cache cleared (s3fs reuses instances)."""
    import s3fs

    fs = s3fs.S3FileSystem(key=s3["access_key"], secret=s3["secret_key"],
                           client_kwargs={"endpoint_url": s3["endpoint_url"], "region_name": s3["region"]})
    fs.invalidate_cache()
    return fs


def _objects(s3: dict[str, str], path: str) -> list[str]:
    return [f for f in _s3fs(s3).find(path) if not f.endswith("/")]


def run_s3_working(s3: dict[str, str], bucket: str, pipelines_dir: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Records to parquet in a local bucket with the package data in the S3 working bucket, step by step: what the
    working bucket holds after extract and after load, and the row counts."""
    import lakeload

    with environment(working_env(s3)):
        pipeline = lakeload.pipeline("connect_s3", destination=lakeload.destinations.filesystem(bucket),
                                     dataset_name="ds", pipelines_dir=pipelines_dir)
        pipeline.extract(rows, table_name="items", loader_file_format="parquet")
        extracted = len(_objects(s3, f"{s3['prefix']}/connect_s3"))
        local_data = [name for _, _, files in os.walk(os.path.join(pipelines_dir, "connect_s3", "load"))
                      for name in files if name.endswith((".jsonl", ".gz", ".parquet"))]
        pipeline.normalize()
        info = pipeline.load()
        left = len(_objects(s3, f"{s3['prefix']}/connect_s3"))
    return {"extracted": extracted, "left": left, "loads": len(info.loads_ids), "local_data_files": len(local_data),
            "row_counts": info.row_counts}


def run_dagster(spark: Any, root: str, partitioned: bool = True) -> dict[str, Any]:
    """Store a Spark DataFrame asset with lakeload's Delta Spark I/O manager and load it into the next asset; then,
    when `partitioned`, the same for a partitioned asset."""
    from dagster import asset, materialize
    from pyspark.sql import DataFrame

    from lakeload.dagster import DeltaLakeSparkIOManager, LocalConfig

    seen: dict[str, Any] = {}

    @asset(key_prefix="connect")
    def frame() -> DataFrame:
        return spark.createDataFrame(DAGSTER_ROWS, DAGSTER_SCHEMA).repartition(2)

    @asset(key_prefix="connect")
    def reader(frame: DataFrame) -> None:
        seen["type"] = type(frame).__module__
        seen["rows"] = sorted(tuple(row) for row in frame.collect())

    io = DeltaLakeSparkIOManager(root_uri=root, storage_options=LocalConfig())
    result = materialize([frame, reader], resources={"io_manager": io})
    events = result.get_asset_materialization_events()
    metadata = {k: v.value for k, v in events[0].materialization.metadata.items()}
    parts = _partitioned(spark, io) if partitioned else {}
    return {"success": result.success, "row_count": metadata.get("dagster/row_count"), **seen, **parts}


def _partitioned(spark: Any, io: Any) -> dict[str, Any]:
    """A static-partitioned asset materialized for a, b, then a again (its slice replaced), and partition a
    loaded into a downstream asset (only its rows are read)."""
    from dagster import AssetExecutionContext, StaticPartitionsDefinition, asset, materialize
    from pyspark.sql import DataFrame

    kinds, runs, seen = StaticPartitionsDefinition(["a", "b"]), {"n": 0}, {}

    @asset(key_prefix="connect", partitions_def=kinds, metadata={"partition_expr": "kind"})
    def parts(context: AssetExecutionContext) -> DataFrame:
        runs["n"] += 1
        return spark.createDataFrame([(context.partition_key, runs["n"], i) for i in range(2)], PARTS_SCHEMA)

    @asset(key_prefix="connect", partitions_def=kinds)
    def part_reader(parts: DataFrame) -> None:
        seen["rows"] = sorted(tuple(row) for row in parts.collect())

    ok = [materialize([parts], partition_key=key, resources={"io_manager": io}).success for key in ("a", "b", "a")]
    ok.append(materialize([parts, part_reader], selection=[part_reader], partition_key="a",
                          resources={"io_manager": io}).success)
    return {"partitions_ok": ok, "partition_a": seen.get("rows")}

"""lakeload's core path (records, DataFrames, file sources, sinks, Parquet/JSONL/CSV, Delta append, merge and
replace, `working_url` on S3, the Dagster Spark I/O manager) through the session's local Spark Connect server,
compared with the same runs in-process.

The server's Python workers cannot import lakeload (see tests/servers/spark_connect.py): every run here works
only because lakeload ships its own code to the session with `addArtifacts`.

The Connect runs happen in a child process (tests/spark/connect_child.py) that is a Connect-only client: it
refuses every way to a JVM before lakeload is imported, so any `sparkContext` / `_jvm` / RDD use on the path
fails it. (A Connect session in this test process would also switch pyspark's functions to Connect for the
in-process tests that share it.)
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import compat.compat_harness  # noqa: F401 - puts tests/conformance (harness) on sys.path
import connect_extras as extras
import pyarrow as pa
import pytest
from connect_child import FRAME_ROWS, FRAME_SCHEMA, records, run_delta, run_files, sink_recorder, sink_rows
from harness import canonicalize, diff, read_bucket
from servers.fixtures import S3Server, fresh_prefix
from servers.spark_connect import ConnectServer

import lakeload

CHILD = Path(__file__).with_name("connect_child.py")


def _in_process(spark: Any, local: Path, files_source: Path, s3: dict[str, str], s3_destination: str) -> None:
    parquet_bucket, jsonl_bucket, delta_bucket, pipelines_dir = (local / name for name in ("parquet", "jsonl", "delta", "pipelines"))
    first = lakeload.pipeline("connect_parquet", destination=lakeload.destinations.filesystem(str(parquet_bucket)),
                              dataset_name="ds", pipelines_dir=str(pipelines_dir))
    first.run(records(), table_name="items", loader_file_format="parquet")
    first.run(spark.createDataFrame(FRAME_ROWS, FRAME_SCHEMA), table_name="frame_rows", loader_file_format="parquet")
    second = lakeload.pipeline("connect_jsonl", destination=lakeload.destinations.filesystem(str(jsonl_bucket)),
                               dataset_name="ds", pipelines_dir=str(pipelines_dir))
    second.run(records(), table_name="items", loader_file_format="jsonl")
    delta = lakeload.pipeline("connect_delta", destination=lakeload.destinations.filesystem(str(delta_bucket)),
                              dataset_name="ds", pipelines_dir=str(pipelines_dir))
    run_delta(delta)
    extras.run_delta_replace(delta)
    extras.run_merge_strategies(delta)
    extras.run_s3_destination(s3, s3_destination, str(pipelines_dir), records())
    csv = lakeload.pipeline("connect_csv", destination=lakeload.destinations.filesystem(str(local / "csv")),
                            dataset_name="ds", pipelines_dir=str(pipelines_dir))
    extras.run_csv(csv, records())
    extras.run_layout(str(local / "layout"), str(pipelines_dir), records())
    plain = lakeload.pipeline("connect_s3", destination=lakeload.destinations.filesystem(str(local / "s3_working")),
                              dataset_name="ds", pipelines_dir=str(pipelines_dir))
    plain.run(records(), table_name="items", loader_file_format="parquet")  # the same rows, package data at home
    dagster = extras.run_dagster(spark, str(local / "dagster"), partitioned=False)
    assert dagster["success"] and dagster["rows"] == sorted(extras.DAGSTER_ROWS)
    files = lakeload.pipeline("connect_files", destination=lakeload.destinations.filesystem(str(local / "files")),
                              dataset_name="ds", pipelines_dir=str(pipelines_dir))
    run_files(files, str(files_source))
    (local / "sink").mkdir()
    sink = lakeload.pipeline("connect_sink", destination=sink_recorder(str(local / "sink")), pipelines_dir=str(pipelines_dir))
    sink.run(records(), table_name="items")


def _delta_rows(bucket: Path, table: str, dataset: str = "ds", columns: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
    """The current snapshot of a Delta table (`columns`, else all but ids and load ids), sorted."""
    from deltalake import DeltaTable

    data = pa.table(DeltaTable(str(bucket / dataset / table)).to_pyarrow_table())
    keep = list(columns) or [name for name in data.column_names if not name.startswith("_dlt_")]
    return sorted(tuple(row.values()) for row in data.select(keep).to_pylist())


@pytest.mark.slow  # a child process on the Connect server (its first Python workers start cold)
def test_records_frames_and_delta_through_connect_match_in_process(
    connect_server: ConnectServer, s3_server: S3Server, spark: Any, tmp_path: Path
) -> None:
    remote, local = tmp_path / "connect", tmp_path / "in_process"
    s3 = {"prefix": f"{s3_server.bucket}/{fresh_prefix('connect-work')}", "access_key": s3_server.access_key,
          "secret_key": s3_server.secret_key, "endpoint_url": s3_server.endpoint_url, "region": s3_server.region}
    args = {"url": connect_server.url, "parquet_bucket": str(remote / "parquet"),
            "jsonl_bucket": str(remote / "jsonl"), "csv_bucket": str(remote / "csv"), "delta_bucket": str(remote / "delta"),
            "s3": s3, "s3_bucket": str(remote / "s3_working"), "dagster_root": str(remote / "dagster"),
            "files_bucket": str(remote / "files"), "files_source": str(tmp_path / "source"),
            "sink_out": str(remote / "sink"), "missing_module_dir": str(tmp_path / "client_only"),
            "s3_destination": f"{s3_server.bucket}/{fresh_prefix('connect-dest')}", "layout_bucket": str(remote / "layout"),
            "pipelines_dir": str(remote / "pipelines")}
    (remote / "sink").mkdir(parents=True)
    done = subprocess.run([sys.executable, str(CHILD), json.dumps(args)], env=connect_server.env(),
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    # mode auto found the running server; spark= took the script's own Connect session
    assert result["auto_session"] == result["explicit_session"] == "pyspark.sql.connect.session"
    assert result["has_spark_context"] is False and result["jvm"] is False  # no JVM in the client, ever
    items = {"items": 12, "items__tags": 12, "items__orders": 18}
    assert result["row_counts"] == [items, {"frame_rows": 5, "frame_rows__numbers": 10}, items]

    doubled, reported = result["tasks"]  # run_tasks' progress comes from Connect's progress messages (best effort)
    assert doubled == [0, 2, 4, 6] and 0 < reported <= 4
    assert result["delta_counts"] == [{"appended": 6, "appended__kids": 6}] * 2 + [
        {"merged": 6, "merged__kids": 6}, {"merged": 5, "merged__kids": 5}]

    # lakeload reached the server's Python workers only by the shipped, versioned zip, and they import its bytecode
    before, after = result["workers_lakeload"]
    assert before == "" and "/lakeload-" in after and after.endswith(".zip/lakeload/__init__.pyc"), after
    assert result["files_counts"] == {"events": 8, "events__parts": 7}
    assert result["sink_counts"] == {"items": 12}
    missing = result["missing_module_error"]  # a sink from a package the server lacks: named, with the fix
    assert "client_only_helpers" in missing and "spark.addArtifacts(" in missing, missing
    # two lakeload versions on one server: each session's workers import the zip that session was given
    mine, other = result["isolated_sessions"]
    assert mine == after and other.endswith("/lakeload-0.0.1-0123456789abcdef.zip/lakeload/__init__.pyc"), other
    assert result["dataset_rows"] == 12  # dataset().spark() through Connect
    assert result["replace_counts"] == [{"replaced": 5, "replaced__kids": 4}, {"replaced": 3, "replaced__kids": 3}]
    assert result["csv_counts"] == items
    # a layout callback ran on the server's workers; add_map's column reached every file
    assert result["layout"] == [f"{table}/connect_layout-item-parquet" for table in ("items", "items__orders", "items__tags")]
    # package data went to the S3 working bucket (none at home), the load left nothing there
    s3_working = result["s3_working"]
    assert s3_working["extracted"] > 0 and s3_working["local_data_files"] == 0 and s3_working["left"] == 0, s3_working
    assert s3_working["loads"] == 1 and s3_working["row_counts"] == items
    # the Dagster Spark I/O manager stored the Connect DataFrame and loaded it back as one
    dagster = result["dagster"]
    assert dagster["success"] and dagster["row_count"] == len(extras.DAGSTER_ROWS), dagster
    assert dagster["type"] == "pyspark.sql.connect.dataframe" and dagster["rows"] == [list(r) for r in sorted(extras.DAGSTER_ROWS)]
    # a partitioned asset: the re-materialized slice replaced, one partition loaded with only its rows
    assert dagster["partitions_ok"] == [True] * 4 and dagster["partition_a"] == [list(r) for r in extras.PARTITION_A], dagster

    # merge strategies through Connect: upsert with a hard delete, insert-only
    assert result["strategy_counts"] == [{"upserted": 5, "upserted__kids": 9}, {"upserted": 3, "upserted__kids": 1},
                                         {"inserted": 3, "inserted__kids": 3}, {"inserted": 3, "inserted__kids": 3}]
    assert result["s3_destination"] == [items, *result["strategy_counts"][:2]]

    in_process_destination = f"{s3_server.bucket}/{fresh_prefix('in-process-dest')}"
    _in_process(spark, local, tmp_path / "source", s3, in_process_destination)
    extras.download(s3, args["s3_destination"], str(remote / "s3_destination"))
    extras.download(s3, in_process_destination, str(local / "s3_destination"))
    assert _delta_rows(remote / "delta", "upserted", columns=("id", "value")) == [
        (0, "u0"), (2, "v2"), (3, "u3"), (4, "u4"), (9, "v9")]
    assert _delta_rows(remote / "delta", "upserted__kids", columns=("k",)) == [(0,), (0,), (0,), (1,), (8,)]
    assert _delta_rows(remote / "delta", "inserted", columns=("id", "value")) == [
        (0, "i0"), (1, "i1"), (2, "i2"), (3, "j3"), (4, "j4")]
    assert _delta_rows(remote / "delta", "inserted__kids", columns=("k",)) == [(0,), (1,), (2,), (13,), (14,)]
    for table in ("upserted", "upserted__kids", "inserted", "inserted__kids"):
        assert _delta_rows(remote / "delta", table) == _delta_rows(local / "delta", table), table
    for table in ("upserted", "upserted__kids"):
        expected = _delta_rows(local / "s3_destination", table, "ds_delta")
        assert _delta_rows(remote / "s3_destination", table, "ds_delta") == expected == _delta_rows(remote / "delta", table)
    assert sink_rows(str(remote / "sink")) == sink_rows(str(local / "sink")) and sink_rows(str(local / "sink"))["items"]
    assert _layout_rows(remote / "layout") == _layout_rows(local / "layout")
    assert {row[1] for row in _layout_rows(remote / "layout")} == {i * 2 for i in range(12)}  # add_map's column
    for kind in ("parquet", "jsonl", "csv", "files", "s3_working", "s3_destination"):
        expected, actual = canonicalize(read_bucket(local / kind)), canonicalize(read_bucket(remote / kind))
        assert diff(expected, actual) == [], kind
        assert sorted(expected["tables"]) == sorted(actual["tables"])
        expected_tables = {"events", "events__parts"} if kind == "files" else {"items", "items__tags", "items__orders"}
        assert expected_tables <= set(actual["tables"])
    for table in ("appended", "appended__kids", "merged", "merged__kids", "replaced", "replaced__kids"):
        assert _delta_rows(remote / "delta", table) == _delta_rows(local / "delta", table), table
    assert len(_delta_rows(remote / "delta", "replaced")) == 3 and len(_delta_rows(remote / "delta", "replaced__kids")) == 3
    assert _delta_rows(remote / "dagster", "frame", "connect") == _delta_rows(local / "dagster", "frame", "connect") == sorted(extras.DAGSTER_ROWS)
    from deltalake import DeltaTable

    parts = DeltaTable(str(remote / "dagster" / "connect" / "parts")).to_pyarrow_table().select(["kind", "run", "i"])
    assert sorted(tuple(row.values()) for row in parts.to_pylist()) == [*extras.PARTITION_A, ("b", 2, 0), ("b", 2, 1)]
    assert len(_delta_rows(remote / "delta", "merged")) == 8 and len(_delta_rows(remote / "delta", "merged__kids")) == 8
    assert all(path.name.endswith(".jsonl.gz") for path in (remote / "jsonl" / "ds" / "items").iterdir())


def _layout_rows(bucket: Path) -> list[tuple[Any, ...]]:
    """(id, doubled) of the `items` files under a custom layout, sorted."""
    import pyarrow.parquet as pq

    tables = [pq.read_table(path) for path in sorted((bucket / "ds" / "items").rglob("*.parquet"))]
    return sorted((row["id"], row["doubled"]) for table in tables for row in table.select(["id", "doubled"]).to_pylist())


def _slow_sink_child(connect_server: ConnectServer, tmp_path: Path, mode: str) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """A Connect client whose pipeline's sink sleeps on the server: returned once the sink has started."""
    out, flag = tmp_path / "sink", tmp_path / "slow"
    out.mkdir()
    flag.write_text("sleep")
    args = {"mode": mode, "url": connect_server.url, "sink_out": str(out), "slow_flag": str(flag),
            "pipelines_dir": str(tmp_path / "pipelines")}
    child = subprocess.Popen([sys.executable, str(CHILD), json.dumps(args)], env=connect_server.env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 300
    while not (out / "started").exists():  # the sink runs on the server's Python worker
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            raise AssertionError(child.communicate()[1][-4000:])
        time.sleep(0.1)
    return child, args


@pytest.mark.slow  # waits out a slow sink on the server (about 15 s) to prove it was stopped
def test_ctrl_c_interrupts_the_steps_connect_operations_and_the_package_resumes(
    connect_server: ConnectServer, tmp_path: Path
) -> None:
    child, args = _slow_sink_child(connect_server, tmp_path, "interrupt")
    try:
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=300)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, stderr[-4000:]
    result = json.loads(stdout.strip().splitlines()[-1])
    assert result["interrupted"] is True
    # the step's tagged operations were interrupted on the server (by interruptTag, or already by pyspark's release
    # of the abandoned execution, whichever the server handled first): the sleeping task never finished
    assert any(message.startswith("Interrupted ") and "tagged lakeload-" in message for message in result["messages"])
    assert result["finished"] is False, result
    # the same server then ran `pipeline.load()`, which delivered the package once, completely
    assert result["resumed_packages"] == 1 and result["pending"] == []
    assert result["rows"] == {"items": 12}


@pytest.mark.slow  # two client processes and a slow sink waited out on the server
def test_kill_9_of_the_connect_client_mid_load_then_next_run_completes_the_package_once(
    connect_server: ConnectServer, tmp_path: Path
) -> None:
    child, args = _slow_sink_child(connect_server, tmp_path, "kill")
    child.kill()  # SIGKILL of the client only: the server and its Python worker live on
    child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL
    Path(args["slow_flag"]).unlink()
    done = subprocess.run([sys.executable, str(CHILD), json.dumps({**args, "mode": "resume"})], env=connect_server.env(),
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["resumed_packages"] == 1 and result["pending"] == [], (result, done.stderr[-3000:])
    # the next run stopped the dead client's operation on the server before redoing the load: it never finished
    assert any(message.startswith("Stopped 1 Spark operation") for message in result["messages"]), result
    assert result["finished"] is False, result
    assert result["rows"] == {"items": 12}  # every row delivered exactly once

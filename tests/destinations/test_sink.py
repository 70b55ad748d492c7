"""Custom sink destinations: batches of normalized rows, called in the script's process (or on executors with
`run_on="executors"`), resumable after failure."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.errors import ConfigurationError, PipelineStepFailed

pytestmark = pytest.mark.usefixtures("spark")

USERS = [{"id": i, "Full Name": f"user {i}", "pets": [{"name": f"p{i}"}] * (i % 3)} for i in range(7)]


def recorder(out: Path, fail_marker: Path | None = None, fail_on_batch: int = -1) -> Any:
    """A sink that appends each batch (with the writing process id) to a file per table."""

    def record(items: list[dict[str, Any]], table: dict[str, Any]) -> None:
        calls = out / f"{table['name']}.calls"
        count = len(calls.read_text().splitlines()) if calls.exists() else 0
        if fail_marker is not None and count == fail_on_batch and not fail_marker.exists():
            fail_marker.write_text("failed once")
            raise RuntimeError("API answered 503")
        with calls.open("a") as f:
            f.write(json.dumps({"pid": os.getpid(), "items": items, "columns": list(table["columns"])}) + "\n")

    return record


def batches(out: Path, table: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / f"{table}.calls").read_text().splitlines()]


def test_sink_gets_batches_with_table_schema_on_executors(tmp_path: Path, pipelines_dir: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    my_sink = lakeload.destination(recorder(out), batch_size=3, name="api_sink", run_on="executors")
    p = lakeload.pipeline("to_api", destination=my_sink, pipelines_dir=str(pipelines_dir))
    info = p.run(USERS, table_name="users")
    calls = batches(out, "users")
    assert [len(c["items"]) for c in calls] == [3, 3, 1]
    rows = [r for c in calls for r in c["items"]]
    assert sorted(r["id"] for r in rows) == list(range(7))
    # direct naming and max_table_nesting=0 by default: keys kept, nested lists stay in the row, no _dlt columns
    assert set(rows[0]) == {"id", "Full Name", "pets"} and any(r["pets"] for r in rows)
    assert calls[0]["columns"][:3] == ["id", "Full Name", "pets"]
    assert all(c["pid"] != os.getpid() for c in calls)  # the sink ran in executor (Python worker) processes
    # dlt's type of a sink: a class named after the function (`recorder.<locals>.record`), in its module
    assert info.destination_name == "api_sink" and info.destination_type.endswith("test_sink.RecorderRecordDestination")
    assert not (tmp_path / "bucket").exists()


def test_failed_sink_resumes_without_resending_completed_batches(tmp_path: Path, pipelines_dir: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()

    @lakeload.destination(batch_size=2, skip_dlt_columns_and_tables=False)
    def flaky(items: list[dict[str, Any]], table: dict[str, Any]) -> None:
        recorder(out, tmp_path / "failed", fail_on_batch=2)(items, table)

    p = lakeload.pipeline("flaky", destination=flaky, pipelines_dir=str(pipelines_dir))
    with pytest.raises(PipelineStepFailed, match="API answered 503.*resume"):
        p.run(USERS, table_name="users")
    assert len(batches(out, "users")) == 2
    info = p.load()
    calls = batches(out, "users")
    assert [len(c["items"]) for c in calls] == [2, 2, 2, 1]
    ids = [r["id"] for c in calls for r in c["items"]]
    assert sorted(ids) == list(range(7))  # each row exactly once
    assert "_dlt_id" in calls[0]["items"][0]
    assert len(info.load_ids) == 1 and p.run().load_ids == []


def test_sink_with_nesting_gets_child_tables(tmp_path: Path, pipelines_dir: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    nested_sink = lakeload.destination(recorder(out), batch_size=100, max_table_nesting=1, naming_convention="snake_case")
    lakeload.pipeline("nested", destination=nested_sink, pipelines_dir=str(pipelines_dir)).run(USERS, table_name="users")
    assert sorted(p.name for p in out.iterdir()) == ["users.calls", "users__pets.calls"]
    assert "full_name" in batches(out, "users")[0]["items"][0]


def test_sink_closing_over_a_list_gets_every_item_once_in_this_process(pipelines_dir: Path) -> None:
    calls: list[tuple[str, list[dict[str, Any]], int]] = []  # dlt's docs: the sink appends to the script's list

    @lakeload.destination(batch_size=10)
    def sink(items: list[dict[str, Any]], table: dict[str, Any]) -> None:
        calls.append((table["name"], items, os.getpid()))

    rows = [{"id": i, "tags": ["a", "b"]} for i in range(25)]
    lakeload.pipeline("to_list", destination=sink, pipelines_dir=str(pipelines_dir)).run(rows, table_name="items")
    assert [(name, len(items)) for name, items, _ in calls] == [("items", 10), ("items", 10), ("items", 5)]
    assert sorted(r["id"] for _, items, _ in calls for r in items) == list(range(25))
    assert calls[0][1][0]["tags"] == ["a", "b"] and {pid for *_, pid in calls} == {os.getpid()}


@pytest.mark.parametrize("loader_file_format", ["jsonl", "parquet"])
def test_sink_writing_through_an_open_sqlite_connection_resumes_without_duplicates(
    tmp_path: Path, pipelines_dir: Path, loader_file_format: str
) -> None:
    connection = sqlite3.connect(tmp_path / "sink.db")  # opened by the script, held open across the runs
    connection.execute("CREATE TABLE users (id INTEGER, name TEXT)")
    failed = []

    @lakeload.destination(batch_size=2, loader_file_format=loader_file_format)
    def to_sqlite(items: list[dict[str, Any]], table: dict[str, Any]) -> None:
        if connection.execute("SELECT count(*) FROM users").fetchone()[0] == 4 and not failed:
            failed.append(True)
            raise RuntimeError("database is locked")
        connection.executemany("INSERT INTO users VALUES (?, ?)", [(r["id"], r["Full Name"]) for r in items])
        connection.commit()

    p = lakeload.pipeline("to_sqlite", destination=to_sqlite, pipelines_dir=str(pipelines_dir))
    with pytest.raises(PipelineStepFailed, match="database is locked.*resume"):
        p.run(USERS, table_name="users")
    p.load()
    ids = [row[0] for row in connection.execute("SELECT id FROM users ORDER BY id")]
    assert ids == list(range(7)) and failed == [True]  # each row exactly once, after one failure
    connection.close()


def test_sink_arguments_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="must take \\(items, table\\)"):
        lakeload.destination(lambda items: None)
    with pytest.raises(ConfigurationError, match="Unknown sink destination options"):
        lakeload.destination(batch_sise=3)
    with pytest.raises(ConfigurationError, match="run_on must be 'driver'.*'executors'"):
        lakeload.destination(lambda items, table: None, run_on="cluster")

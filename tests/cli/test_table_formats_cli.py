"""The command line and the dashboard's data layer on Delta and Iceberg tables: `info`, `trace`, `schema` and the
dashboard's views
and SQL read them (each at the version its last completed load recorded), `drop` removes a resource's tables from
the bucket (and, for Iceberg, from its catalog), and the next run creates them afresh."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import lakeload
from lakeload.dashboard.data import PipelineView

pytestmark = [pytest.mark.usefixtures("spark"), pytest.mark.slow]

ROWS = [{"id": 1, "name": "a", "pets": [{"kind": "cat"}, {"kind": "dog"}]}, {"id": 2, "name": "b", "pets": []}]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lakeload.cli", *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))


@pytest.mark.parametrize("fmt", ["delta", "iceberg"])
def test_info_the_dashboard_and_drop_read_and_remove_table_format_tables(fmt: str, tmp_path: Path) -> None:
    pipelines, bucket = str(tmp_path / "pipelines"), tmp_path / "bucket"

    def pipeline() -> lakeload.Pipeline:
        return lakeload.pipeline("formats_cli", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                                 pipelines_dir=pipelines)

    def users(rows: list[dict[str, object]]) -> object:
        return lakeload.resource(rows, name="users", primary_key="id", write_disposition="merge", table_format=fmt)

    p = pipeline()
    p.run(users(ROWS))
    p.run(users([{"id": 2, "name": "b2", "pets": [{"kind": "fish"}]}]))
    for command in ("info", "trace", "schema"):
        shown = cli("pipeline", "formats_cli", command, "--pipelines-dir", pipelines)
        assert shown.returncode == 0, shown.stderr
    assert "users__pets" in shown.stdout and f"table_format: {fmt}" in shown.stdout

    view = PipelineView.open("formats_cli", pipelines)
    assert view.query("SELECT id, name FROM users ORDER BY id") == (["id", "name"], [(1, "a"), (2, "b2")])
    assert view.query("SELECT count(*) FROM users__pets")[1] == [(3,)]
    assert sorted((r["table"], r["rows"]) for r in view.rows_per_load()) == [("users", 1), ("users", 1)]  # root tables: one row kept from each load
    assert {"users", "users__pets"} <= set(view.data_tables())
    assert {c["column"] for c in view.schema_columns() if c["table"] == "users"} >= {"id", "name", "_dlt_id"}

    dropped = cli("pipeline", "formats_cli", "drop", "users", "--yes", "--pipelines-dir", pipelines)
    assert dropped.returncode == 0, dropped.stderr
    assert not (bucket / "ds" / "users").exists() and not (bucket / "ds" / "users__pets").exists()
    again = pipeline()
    assert again.default_schema.data_table_names() == []
    again.run(users([{"id": 3, "name": "c", "pets": [{"kind": "owl"}]}]))
    with again.sql_client() as client:
        assert client.execute_sql("SELECT id FROM users") == [(3,)]
        assert client.execute_sql("SELECT count(*) FROM users__pets") == [(1,)]

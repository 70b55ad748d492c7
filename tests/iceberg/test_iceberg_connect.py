"""Iceberg loads through Spark Connect (a real local server; the client starts no JVM) build the same tables as in
process: append, upsert with a hard delete, scd2, cdc with a source filter and insert-only, nested rows included."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from iceberg_connect_child import run_all
from servers.spark_connect import ConnectServer

pytestmark = [pytest.mark.slow]
pytest.importorskip("pyiceberg")
CHILD = Path(__file__).with_name("iceberg_connect_child.py")


def test_iceberg_merges_through_connect_match_in_process(connect_server: ConnectServer, spark: Any, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(CHILD), str(tmp_path / "remote"), str(tmp_path / "remote_pipes")],
                          env=connect_server.env(), capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    remote = json.loads(done.stdout.strip().splitlines()[-1])
    local = run_all(str(tmp_path / "local"), str(tmp_path / "local_pipes"))
    assert remote["connect"] is True and local["connect"] is False
    assert remote["tables"] == local["tables"]
    assert [1, "n1.v0"] not in remote["tables"]["upserted"]  # the hard delete
    assert [6, "n6.v1"] in remote["tables"]["upserted"] and [6, "n6.v1"] not in remote["tables"]["captured"]  # filtered out
    assert len(remote["tables"]["versioned"]) == 10  # five first versions, five second (three of them retire firsts)

"""The fixture `iceberg_rest_catalog`: an Iceberg REST catalog server on 127.0.0.1 (`iceberg_rest_server.py`, a process
of its own with a fresh SQLite file behind it) for one test, stopped after it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVER = Path(__file__).with_name("iceberg_rest_server.py")


@dataclass(frozen=True)
class RestCatalogServer:
    """A running REST catalog: its URL, the bearer token it asks for, its SQLite file (the backing catalog)."""

    url: str
    token: str
    database: str

    def config(self) -> dict[str, str]:
        """The pyiceberg properties of a REST catalog client of it (dlt's `iceberg_catalog_config`)."""
        return {"type": "rest", "uri": self.url, "token": self.token}


@pytest.fixture
def iceberg_rest_catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestCatalogServer]:
    folder = tmp_path_factory.mktemp("rest-catalog")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    database, token = str(folder / "catalog.db"), "rest-token-" + os.urandom(8).hex()
    log = folder / "server.log"
    with open(log, "w") as errors:
        process = subprocess.Popen([sys.executable, str(SERVER), str(port), database, f"file://{folder}/warehouse", token],
                                   stdout=subprocess.PIPE, stderr=errors, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"the REST catalog server did not start: {line}{log.read_text()[-4000:]}")
        yield RestCatalogServer(f"http://127.0.0.1:{port}", token, database)
    finally:
        process.kill()  # (SIGTERM may be ignored: a test worker's children can inherit that disposition)
        process.wait(timeout=30)

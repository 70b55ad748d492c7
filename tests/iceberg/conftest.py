"""A real PostgreSQL 15 server on 127.0.0.1 for the shared Iceberg catalog tests: `initdb` and `pg_ctl` (from the
machine image) on a temporary folder, a free port, stopped at the end of the session. As root, the server runs
as `nobody` (PostgreSQL refuses to run as root)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class PostgresServer:
    port: int
    user: str = "lake"

    def url(self, database: str = "postgres", password: str | None = None) -> str:
        auth = f"{self.user}:{password}" if password else self.user
        return f"postgresql+psycopg2://{auth}@127.0.0.1:{self.port}/{database}"


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *command]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    if not shutil.which("initdb") or not shutil.which("pg_ctl"):
        pytest.skip("PostgreSQL's initdb and pg_ctl are not installed")
    root = tempfile.mkdtemp(prefix="lakeload-pg-")
    os.chmod(root, 0o777)
    data, port = os.path.join(root, "data"), _free_port()
    server = PostgresServer(port)
    subprocess.run(_as_server_user(["initdb", "-D", data, "-U", server.user, "--auth=trust", "-E", "UTF8"]),
                   check=True, capture_output=True)
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k {root} -c fsync=off"
    subprocess.run(_as_server_user(["pg_ctl", "-D", data, "-l", os.path.join(root, "log"), "-o", options, "-w", "start"]),
                   check=True, capture_output=True)
    try:
        yield server
    finally:
        subprocess.run(_as_server_user(["pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"]), capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def catalog_database(postgres_server: PostgresServer, request: pytest.FixtureRequest) -> str:
    """A fresh database of the server for one test: its SQLAlchemy URL."""
    import sqlalchemy

    name = f"cat_{abs(hash(request.node.nodeid)) % 10**8}"
    engine = sqlalchemy.create_engine(postgres_server.url(), isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(sqlalchemy.text(f"DROP DATABASE IF EXISTS {name}"))
        connection.execute(sqlalchemy.text(f"CREATE DATABASE {name}"))
    engine.dispose()
    return postgres_server.url(name)

"""A user's own full destination, written outside the package against `lakeload.destinations`' public interface
(`Destination`, `JobClientBase`, `LoadPackage`): a pipeline loads nested data into a SQLite file through it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import lakeload as dlt
from lakeload.destinations import (
    Destination,
    DestinationCapabilities,
    JobClient,
    JobClientBase,
    LoadContext,
    LoadPackage,
    LoadResult,
)
from lakeload.errors import ConfigurationError

pytestmark = pytest.mark.usefixtures("spark")
SQLITE_TYPES = {"bigint": "INTEGER", "bool": "INTEGER", "double": "REAL"}


class SqliteDestination(Destination):
    """Tables of the dataset as SQLite tables; each package in one transaction."""

    destination_type = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.schemas: list[str] = []  # what update_stored_schema was given

    @property
    def name(self) -> str:
        return "my_sqlite"

    def capabilities(self) -> DestinationCapabilities:
        return DestinationCapabilities(supported_table_formats=(), supported_merge_strategies=())

    def location(self, pipeline_name: str | None = None) -> str:
        return str(self.path)

    def client(self, context: LoadContext) -> JobClient:
        return SqliteClient(self, context)


class SqliteClient(JobClientBase):
    def __init__(self, destination: SqliteDestination, context: LoadContext) -> None:
        self.destination, self.context = destination, context

    def update_stored_schema(self, schema: Any) -> None:
        self.destination.schemas.append(schema.name)

    def load_package(self, package: LoadPackage) -> LoadResult:
        with sqlite3.connect(self.destination.path) as db:  # one transaction: all of the package or nothing
            for job in package.jobs:
                columns = package.tables[job.table_name]["columns"]
                names = list(columns)
                kinds = ", ".join(f'"{n}" {SQLITE_TYPES.get(columns[n].get("data_type", ""), "TEXT")}' for n in names)
                db.execute(f'CREATE TABLE IF NOT EXISTS "{job.table_name}" ({kinds})')
                marks = ", ".join("?" for _ in names)
                rows = ([_value(row.get(n)) for n in names] for row in package.rows(job))
                db.executemany(f'INSERT INTO "{job.table_name}" VALUES ({marks})', rows)
        return package.result()


def _value(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, (dict, list)) else value


def _rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute(sql).fetchall()


def test_a_pipeline_loads_nested_data_into_a_users_own_destination(tmp_path: Path) -> None:
    destination = SqliteDestination(tmp_path / "db.sqlite")
    pipeline = dlt.pipeline("to_sqlite", destination=destination, dataset_name="crm", pipelines_dir=str(tmp_path / "p"))
    users = [{"id": 1, "name": "Ada", "pets": [{"kind": "cat"}, {"kind": "owl"}]}, {"id": 2, "name": "Bo", "pets": []}]
    info = pipeline.run(users, table_name="users")

    assert info.destination_name == "my_sqlite" and info.destination_type == "sqlite"
    assert info.bucket_url == str(tmp_path / "db.sqlite")
    assert _rows(destination.path, 'SELECT id, name FROM users ORDER BY id') == [(1, "Ada"), (2, "Bo")]
    pets = _rows(destination.path, 'SELECT p.kind FROM users__pets p JOIN users u ON p._dlt_parent_id = u._dlt_id '
                                   'ORDER BY p._dlt_list_idx')
    assert pets == [("cat",), ("owl",)]
    assert pipeline.last_trace.last_normalize_info.row_counts == {"users": 2, "users__pets": 2}
    assert [p.state for p in info.load_packages] == ["loaded"]

    pipeline.run([{"id": 3, "name": "Cy", "pets": []}], table_name="users")  # the next package appends
    assert _rows(destination.path, "SELECT count(*) FROM users") == [(3,)]
    pipeline.sync_schema()
    assert destination.schemas == ["to_sqlite"]


def test_a_failing_load_keeps_the_package_for_the_next_load(tmp_path: Path) -> None:
    class Failing(SqliteClient):
        def load_package(self, package: LoadPackage) -> LoadResult:
            raise RuntimeError("database is locked")

    class FailingDestination(SqliteDestination):
        def client(self, context: LoadContext) -> JobClient:
            return Failing(self, context)

    path = tmp_path / "db.sqlite"
    pipeline = dlt.pipeline("to_sqlite_fail", destination=FailingDestination(path), dataset_name="crm",
                            pipelines_dir=str(tmp_path / "p"))
    with pytest.raises(dlt.PipelineStepFailed, match="database is locked"):
        pipeline.run([{"id": 1}], table_name="users")
    assert pipeline.list_normalized_load_packages() != []
    info = pipeline.load(destination=SqliteDestination(path))  # the same package, loaded once it works
    assert _rows(path, "SELECT id FROM users") == [(1,)] and len(info.load_packages) == 1
    assert pipeline.list_normalized_load_packages() == []


def test_a_destination_without_a_job_client_is_a_clear_error(tmp_path: Path) -> None:
    class NoClient(Destination):
        destination_type = "nothing"

        @property
        def name(self) -> str:
            return "nothing"

        def capabilities(self) -> DestinationCapabilities:
            return DestinationCapabilities()

    pipeline = dlt.pipeline("no_client", destination=NoClient(), dataset_name="d", pipelines_dir=str(tmp_path / "p"))
    with pytest.raises(ConfigurationError, match="has no job client: implement client"):
        pipeline.run([{"id": 1}], table_name="users")

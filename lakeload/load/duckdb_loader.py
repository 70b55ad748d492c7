"""The DuckDB destination's job client: each normalized package loaded from its Parquet or jsonl files with DuckDB's
own readers (`file_sources`), in one transaction per package (no row passes through Python).

In that transaction, in order: the dataset schema and dlt's system tables are created when missing; a package's
`refresh` drops or empties its tables; each table is created, or gains its new columns (`ALTER TABLE ... ADD
COLUMN`); the trees that load through the staging dataset are put there (`lakeload.load.duckdb_staging`); each root
table's tree is written as its write disposition says (`lakeload.load.duckdb_writes`); the
schema version goes into `_dlt_version` (when not there yet), a changed state into `_dlt_pipeline_state`, and the
load into `_dlt_loads`. A crash before the commit leaves the database as it was; the next run loads the package
again. A package whose load id `_dlt_loads` already holds is not loaded twice ("did this load commit?").

The dataset and its staging dataset are DuckDB schemas named as dlt names them (`duckdb.schema_names`); a database
that cannot be opened or written is a `DatabaseUnavailableError` naming the file and the fix
(`lakeload.destinations.impl.duckdb.connect`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import duckdb
import pendulum

from lakeload.destinations.impl.duckdb.connect import connect, database_errors
from lakeload.destinations.impl.duckdb.factory import MEMORY
from lakeload.destinations.impl.duckdb.factory import duckdb as DuckDbDestination
from lakeload.destinations.impl.duckdb.sql import complete_columns, create_table, ident
from lakeload.destinations.impl.duckdb.wide_decimals import wide_decimal_errors
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.state_files import decode_state, encode_state
from lakeload.destinations.reference import (
    Destination,
    JobClientBase,
    LoadContext,
    LoadJob,
    LoadPackage,
    LoadResult,
    register_job_client,
)
from lakeload.errors import DestinationError, LakeloadError
from lakeload.kernel.normalize.row_ids import random_row_id
from lakeload.load.duckdb_child import DuckDbJob, DuckDbLoadSpec, load_in_child
from lakeload.load.duckdb_conflicts import named_type_conflicts
from lakeload.load.duckdb_staging import StagingDataset, ensure_table, existing_columns, store_version
from lakeload.load.duckdb_writes import TreeWrite, has_table
from lakeload.schema.schema import Schema

if TYPE_CHECKING:
    from lakeload.destinations.state_types import PipelineState
    from lakeload.schema.typing import TTable

logger = logging.getLogger("lakeload.load")
CHILD_BYTES = 8 * 1024 * 1024  # packages bigger than this are loaded by a child process (`duckdb_child`)
LOADS, VERSION, STATE = "_dlt_loads", "_dlt_version", "_dlt_pipeline_state"


class DuckDbJobClient(JobClientBase):
    """Loads packages into one dataset (a schema) of a DuckDB database."""

    def __init__(self, destination: Destination, context: LoadContext) -> None:
        self.destination = cast(DuckDbDestination, destination)
        self.context = context
        name = context.pipeline_name
        self.dataset, self.staging_dataset = self.destination.schema_names(context.dataset_name, context.naming, name)
        self.path = self.destination.location(name)
        self.replace_strategy = self.destination.replace_strategy(name)
        self.truncate_staging = self.destination.truncate_staging_dataset(name)

    @contextlib.contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """The given connection, or the database file opened for this work and closed after it."""
        given = self.destination.connection()
        if given is not None:
            yield given
            return
        connection = connect(self.path, read_only, (self.dataset, self.staging_dataset))
        try:
            with database_errors(self.path):
                yield connection
        finally:
            connection.close()

    def prepare(self) -> None:
        """Nothing to check before a run: the database is created by the first load (as dlt does)."""

    def restore(self) -> tuple[PipelineState | None, list[Schema]]:
        """The newest pipeline state of this pipeline and the newest version of each schema, when the database has
        them (dlt's state sync); a database not made yet has none."""
        if self.path != MEMORY and self.destination.connection() is None and not os.path.exists(self.path):
            return None, []
        with self.connect(read_only=True) as connection:  # (a read-only file's state can be read)
            if not has_table(connection, self.dataset, STATE):
                return None, []
            row = connection.execute(
                f"SELECT state FROM {self._table(STATE)} WHERE pipeline_name = ? ORDER BY created_at DESC LIMIT 1",
                [self.context.pipeline_name],
            ).fetchone()
            if row is None:
                return None, []
            state = decode_state(str(row[0]), f"{self.path}: {self.dataset}.{STATE}")
            schemas = []
            for name in state.get("schema_names", []) or []:
                found = connection.execute(
                    f"SELECT schema FROM {self._table(VERSION)} WHERE schema_name = ? ORDER BY inserted_at DESC LIMIT 1", [name]
                ).fetchone()
                if found is not None:
                    schemas.append(Schema.from_json(str(found[0])))
            return state, schemas

    def update_stored_schema(self, schema: Schema) -> None:
        """The schema's version in `_dlt_version` (dlt's `sync_schema()`)."""
        with self.connect() as connection:
            connection.begin()
            self._ensure_system_tables(connection, schema)
            store_version(connection, self.dataset, schema)
            connection.commit()

    def load_package(self, package: LoadPackage) -> LoadResult:
        if package.stored_schema is None:
            raise DestinationError(f"Load package {package.load_id} has no schema; the DuckDB destination cannot load it.")
        schema = Schema.from_dict(package.stored_schema)
        if any(root.get("write_disposition") == "replace" for root in self._roots(schema, package)):
            self.destination.check_replace_strategy(self.replace_strategy)
        package = self._staged(package) if self.context.staging is not None else package
        if self._in_child(package):
            connect(self.path).close()  # (a database that cannot be opened: the named error here, not the child's)
            load_in_child(self._child_spec(package))
            return package.result()
        with self.connect() as connection:
            if self.context.staging is not None:
                self._register_staging(connection)
            self.load_in(connection, package)
        return package.result()

    def load_in(self, connection: duckdb.DuckDBPyConnection, package: LoadPackage) -> None:
        """The package's transaction (see the module docstring) on an open connection."""
        assert package.stored_schema is not None
        schema = Schema.from_dict(package.stored_schema)
        connection.begin()
        try:
            self._ensure_system_tables(connection, schema)
            if connection.execute(f"SELECT 1 FROM {self._table(LOADS)} WHERE load_id = ?", [package.load_id]).fetchone():
                logger.info("DuckDB %s already holds load %s; not loading it again", self.path, package.load_id)
                connection.rollback()
                return
            staging = StagingDataset(connection, self.staging_dataset, schema, self.replace_strategy)
            self._refresh(connection, package, staging)
            self._ensure_tables(connection, schema, package)
            roots = self._roots(schema, package)
            files = {name: [j.path for j in package.jobs if j.table_name == name] for name in schema.tables}
            with wide_decimal_errors():
                self._write_trees(connection, schema, package, roots, staging.fill(roots, files))
            if self.truncate_staging:
                staging.truncate()
            store_version(connection, self.dataset, schema)
            if package.state:
                self._store_state(connection, package.state, package.load_id)
            connection.execute(
                f"INSERT INTO {self._table(LOADS)} VALUES (?, ?, 0, ?, ?)",
                [package.load_id, schema.name, pendulum.now("UTC"), schema.version_hash],
            )
            connection.commit()
        except BaseException:
            connection.rollback()
            raise

    def _write_trees(self, connection: duckdb.DuckDBPyConnection, schema: Schema, package: LoadPackage,
                     roots: list[TTable], staged: list[str]) -> None:
        """Each root table's tree written by its disposition (`TreeWrite`), from the staging dataset for `staged`."""
        for root in roots:
            tree = [t["name"] for t in schema.nested_tables_of(root["name"])]
            with named_type_conflicts(connection, self.dataset, schema, tree):
                TreeWrite(connection, self.dataset, schema, root, package, self.staging_dataset if root["name"] in staged else None).run()

    def _in_child(self, package: LoadPackage) -> bool:
        """Whether a big package is loaded by a child process, so that DuckDB's buffers stay out of the driver: a
        database file (not a given connection), files on local disk, more than `CHILD_BYTES` of them."""
        if self.destination.connection() is not None or self.path == MEMORY:
            return False
        if not all(os.path.exists(job.path) for job in package.jobs):
            return False
        return sum(os.path.getsize(job.path) for job in package.jobs) > CHILD_BYTES

    def _child_spec(self, package: LoadPackage) -> DuckDbLoadSpec:
        return DuckDbLoadSpec(
            database=self.path, dataset=self.dataset, pipeline_name=self.context.pipeline_name, load_id=package.load_id,
            staging_dataset=self.staging_dataset, replace_strategy=self.replace_strategy, truncate_staging=self.truncate_staging,
            schema_name=package.schema_name, stored_schema=package.stored_schema or {},  # type: ignore[typeddict-item]
            tables=dict(package.tables), row_counts=dict(package.row_counts), state=package.state, refresh=package.refresh,
            root_tables=list(package.root_tables), created_at=package.created_at,
            jobs=[DuckDbJob(table_name=j.table_name, path=j.path, file_format=j.file_format, rows=j.rows) for j in package.jobs],
        )

    # -- staging -----------------------------------------------------------------------------------
    def _staging_client(self) -> FilesystemClient:
        assert self.context.staging is not None
        return FilesystemClient(self.context.staging.configuration(self.context.pipeline_name), self.dataset)

    def _staged(self, package: LoadPackage) -> LoadPackage:
        """The package with its files copied into the staging bucket (dlt's staging layout:
        `<dataset>/<table>/<load_id>.<file_id>.<format>`, `.gz` kept) and its jobs reading them there."""
        client = self._staging_client()
        jobs = []
        for number, job in enumerate(package.jobs):
            suffix = ".gz" if job.path.endswith(".gz") else ""  # (the readers tell a gzipped file by its name)
            relative = f"{job.table_name}/{package.load_id}.{number}.{job.file_format}{suffix}"
            target = client.path(relative)
            client.fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
            client.fs.put_file(job.path, target)
            url = target if client.config.is_local else str(client.fs.unstrip_protocol(target))
            jobs.append(replace(job, path=url))
        logger.info("Staged %d files of load %s in %s", len(jobs), package.load_id, client.dataset_path)
        return replace(package, jobs=jobs)

    def _register_staging(self, connection: duckdb.DuckDBPyConnection) -> None:
        """DuckDB reads a remote staging bucket through lakeload's fsspec filesystem of it (its credentials never in SQL)."""
        client = self._staging_client()
        if client.config.is_local:
            return
        protocol = client.fs.protocol if isinstance(client.fs.protocol, str) else client.fs.protocol[0]
        if not connection.filesystem_is_registered(protocol):
            connection.register_filesystem(client.fs)

    # -- parts -------------------------------------------------------------------------------------
    def _table(self, name: str) -> str:
        return f"{ident(self.dataset)}.{ident(name)}"

    def _ensure_system_tables(self, connection: duckdb.DuckDBPyConnection, schema: Schema) -> None:
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {ident(self.dataset)}")
        for name in (LOADS, VERSION, STATE):
            connection.execute(create_table(self.dataset, schema.tables[name]))

    def _ensure_tables(self, connection: duckdb.DuckDBPyConnection, schema: Schema, package: LoadPackage) -> None:
        """Every table of the package's trees exists with every column of the schema (new columns added)."""
        for name in self._package_tables(schema, package):
            ensure_table(connection, self.dataset, schema.tables[name])

    def _package_tables(self, schema: Schema, package: LoadPackage) -> list[str]:
        """The tables with files in the package, and every table of a tree the package replaces (emptied)."""
        names = dict.fromkeys(job.table_name for job in package.jobs)
        for root in self._roots(schema, package):
            names.update(dict.fromkeys(t["name"] for t in (root, *schema.nested_tables_of(root["name"])) if complete_columns(t)))
        return [n for n in names if n in schema.tables and not n.startswith("_dlt_")]

    def _roots(self, schema: Schema, package: LoadPackage) -> list[Any]:
        roots = dict.fromkeys(schema.root_table_of(job.table_name)["name"] for job in package.jobs if job.table_name in schema.tables)
        roots.update(dict.fromkeys(name for name in package.root_tables  # a replace without rows empties its tables
                                   if name in schema.tables and schema.tables[name].get("write_disposition") == "replace"))
        return [schema.tables[n] for n in roots if not n.startswith("_dlt_")]

    def _refresh(self, connection: duckdb.DuckDBPyConnection, package: LoadPackage, staging: StagingDataset) -> None:
        plan = package.refresh
        if not plan:
            return
        for table in plan.get("dropped_tables", []):
            connection.execute(f"DROP TABLE IF EXISTS {self._table(table['name'])}")
        staging.drop([table["name"] for table in plan.get("dropped_tables", [])])
        for table in plan.get("truncated_tables", []):
            if existing_columns(connection, self.dataset, table["name"]) is not None:
                connection.execute(f"DELETE FROM {self._table(table['name'])}")

    def _store_state(self, connection: duckdb.DuckDBPyConnection, state: PipelineState, load_id: str) -> None:
        stored = cast("PipelineState", {k: v for k, v in state.items() if k != "_local"})
        connection.execute(
            f"INSERT INTO {self._table(STATE)} VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [int(stored.get("_state_version", 1)), int(stored.get("_state_engine_version", 4)), self.context.pipeline_name,
             encode_state(stored), pendulum.now("UTC"), str(stored.get("_version_hash", "")), load_id, random_row_id()],
        )


register_job_client("duckdb", DuckDbJobClient)


def _load_spec(spec: DuckDbLoadSpec) -> None:
    jobs = [LoadJob(j["table_name"], j["path"], j["file_format"], j["rows"]) for j in spec["jobs"]]
    package = LoadPackage(spec["load_id"], spec["schema_name"], spec["tables"], jobs, spec["row_counts"],
                          read_rows=lambda job: iter(()), stored_schema=spec["stored_schema"],  # type: ignore[arg-type]
                          state=spec["state"], refresh=spec["refresh"], root_tables=spec["root_tables"],
                          created_at=spec.get("created_at"))
    context = LoadContext(spec["pipeline_name"], spec["dataset"], spark=lambda: None, storage=None)
    client = DuckDbJobClient(DuckDbDestination(spec["database"], enable_dataset_name_normalization=False), context)
    client.staging_dataset, client.replace_strategy = spec["staging_dataset"], spec["replace_strategy"]
    client.truncate_staging = spec["truncate_staging"]  # (as the parent resolved them)
    with client.connect() as connection:
        client.load_in(connection, package)


def main(argv: list[str]) -> int:
    """The child of `lakeload.load.duckdb_child.load_in_child`: load the package its spec file describes."""
    with open(argv[0]) as handle:
        spec: DuckDbLoadSpec = json.load(handle)
    try:
        _load_spec(spec)
    except LakeloadError as exc:
        print(json.dumps({"error": type(exc).__name__, "message": str(exc)}))
        return 1
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises it as a DestinationError
        print(json.dumps({"error": type(exc).__name__, "message": f"{type(exc).__name__}: {exc}"}))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""What a destination is to lakeload: the `Destination` interface, its job client and what they exchange.

A destination has a name, capabilities (`DestinationCapabilities`: file formats, naming, merge strategies, ...),
its resolved configuration, and a job client (`JobClient`) that the pipeline asks, in order:

1. `prepare()`: before any work of a run (a bucket checks that it can be written, its layout that it is valid);
2. `restore()`: the pipeline state and schemas the destination holds for this pipeline, when its working
   folder has none (dlt's state sync); a destination that stores none returns `(None, [])`;
3. `update_stored_schema(schema)`: store a schema version (`pipeline.sync_schema()`);
4. `load_package(package)`: load one normalized package's jobs (its files, one per table and split) and
   complete the load at the destination; the pipeline then marks the package loaded in its working folder.

lakeload's own destinations (`lakeload.destinations.filesystem`, `@lakeload.destination` sinks) implement it;
so can a user's own destination: subclass `Destination`, return a `JobClientBase` subclass from `client()`,
and read each job's rows with `package.rows(job)`::

    class SqliteDestination(Destination):
        def __init__(self, path: str) -> None:
            self.path = path

        @property
        def name(self) -> str:
            return "sqlite"

        def capabilities(self) -> DestinationCapabilities:
            return DestinationCapabilities(supported_table_formats=(), supported_merge_strategies=())

        def client(self, context: LoadContext) -> JobClient:
            return SqliteClient(self.path)


    class SqliteClient(JobClientBase):
        def __init__(self, path: str) -> None:
            self.path = path

        def load_package(self, package: LoadPackage) -> LoadResult:
            with sqlite3.connect(self.path) as db:
                for job in package.jobs:
                    ...  # create job.table_name from package.tables[job.table_name]; insert package.rows(job)
            return package.result()

    pipeline = lakeload.pipeline("to_sqlite", destination=SqliteDestination("/tmp/db.sqlite"))

Its `destination_type` is dlt's: the class's module path and name ("my_module.SqliteDestination"), as dlt says
for a destination class of one's own; lakeload's built-in destinations say dlt's names ("dlt.destinations.filesystem",
"dlt.destinations.duckdb", "dlt.destinations.destination" for a sink). lakeload keeps a short `type_name`
("filesystem", "duckdb", "sink"; a user's own: the last part of its `destination_type`) for its own records.

lakeload's built-in job clients live with the loaders (`lakeload.load`) and are found by `type_name`
in `JOB_CLIENTS` (registered when their module is imported; `DEFAULT_JOB_CLIENTS` names the module to import
first, as fsspec's registry does), so this layer imports none of them.
"""

from __future__ import annotations

import importlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any, Protocol, TypedDict

from lakeload.destinations.package_types import RefreshPlan
from lakeload.destinations.state_types import PipelineState
from lakeload.errors import ConfigurationError
from lakeload.kernel.contracts import TLoadedFile, TRow, TSinkResult
from lakeload.schema.typing import TStoredSchema, TTableSchema


@dataclass(frozen=True)
class DestinationCapabilities:
    """What the destination can do; printable, and overridable through factory arguments."""

    preferred_loader_file_format: str = "jsonl"
    supported_loader_file_formats: tuple[str, ...] = ("jsonl", "parquet", "csv")
    supported_table_formats: tuple[str, ...] = ("delta", "iceberg")
    naming_convention: str = "snake_case"
    max_identifier_length: int = 65536
    max_column_identifier_length: int = 65536
    recommended_file_size: int | None = None
    supported_merge_strategies: tuple[str, ...] = ("upsert",)
    merge_falls_back_to_append: bool = True  # a plain table's merge it cannot do is appended (dlt's filesystem); else refused
    merges_in_place: bool = False  # a database that merges rows itself: its merge tables get dlt's row ids and root keys
    supported_replace_strategies: tuple[str, ...] = ("truncate-and-insert", "insert-from-staging")
    has_case_sensitive_identifiers: bool = True
    supports_nested_types: bool = True
    timestamp_precision: int = 6
    sqlglot_dialect: str = "duckdb"

    def __iter__(self) -> Any:
        return iter((f.name, getattr(self, f.name)) for f in fields(self))


class TLoadedJob(TypedDict):
    """A job a job client loaded (`LoadPackage.result`): its table, its file in the package, rows and format."""

    table: str
    path: str
    rows: int
    file_format: str


class TDeliveredFile(TSinkResult):
    """A package file a sink delivered (`lakeload.load.sink_loader`): the sink task's result and the file."""

    path: str
    rows: int


TLoadResultFile = TLoadedFile | TDeliveredFile | TLoadedJob
"""An entry of `LoadResult.files`: a file the filesystem destination wrote (`TLoadedFile`: plain and Delta
tables), a file a sink delivered, or a job a job client loaded; all name their table, path and rows."""


@dataclass
class LoadResult:
    """What loading one package did: the files (or jobs) loaded, rows per table, tables replaced."""

    load_id: str
    schema_name: str
    files: list[TLoadResultFile] = field(default_factory=list)
    row_counts: dict[str, int] = field(default_factory=dict)
    replaced_tables: list[str] = field(default_factory=list)
    deleted_files: int = 0
    elapsed: float = 0.0


@dataclass(frozen=True)
class LoadJob:
    """One normalized file of a package: a table's rows from one split."""

    table_name: str
    path: str  # the file in the package (`LoadPackage.rows` reads it)
    file_format: str  # "jsonl" | "parquet" | "csv"
    rows: int


@dataclass
class LoadPackage:
    """A normalized package as a job client sees it: its jobs, the tables' schemas (dlt's dicts), its rows."""

    load_id: str
    schema_name: str
    tables: dict[str, TTableSchema]
    jobs: list[LoadJob]
    row_counts: dict[str, int]
    read_rows: Callable[[LoadJob], Iterator[TRow]] = field(repr=False)
    stored_schema: TStoredSchema | None = field(default=None, repr=False)  # the package's whole schema (dlt's dict)
    refresh: RefreshPlan | None = field(default=None, repr=False)  # what `refresh=` drops or empties first
    state: PipelineState | None = field(default=None, repr=False)  # the pipeline state it carries, when it changed
    root_tables: list[str] = field(default_factory=list)  # the root tables its resources make (a replace without rows empties its)
    created_at: str | None = None  # when extract made it (ISO 8601, UTC): scd2's default boundary, as dlt's

    def rows(self, job: LoadJob) -> Iterator[TRow]:
        """The job's rows, one dict each, streamed from its file."""
        return self.read_rows(job)

    def result(self) -> LoadResult:
        """A `LoadResult` that says every job was loaded."""
        files: list[TLoadResultFile] = [
            TLoadedJob(table=j.table_name, path=j.path, rows=j.rows, file_format=j.file_format) for j in self.jobs
        ]
        return LoadResult(self.load_id, self.schema_name, files=files, row_counts=dict(self.row_counts))


@dataclass
class LoadContext:
    """The pipeline a job client works for. `spark()` starts (or returns) the pipeline's session: call it only
    when the work needs Spark. `storage` is the pipeline's package storage (`lakeload.storage.PipelineStorage`);
    `staging` the pipeline's staging bucket, if any; `naming` the naming convention of the pipeline's new schemas."""

    pipeline_name: str
    dataset_name: str
    spark: Callable[[], Any]
    storage: Any
    staging: Destination | None = None  # the filesystem bucket a database destination loads from (`staging=`)
    naming: str = "snake_case"


class JobClient(Protocol):
    """What the pipeline asks of a destination's client (see the module docstring)."""

    def prepare(self) -> None: ...

    def restore(self) -> tuple[PipelineState | None, list[Any]]: ...

    def update_stored_schema(self, schema: Any) -> None: ...

    def load_package(self, package: LoadPackage) -> LoadResult: ...


class JobClientBase:
    """A job client for a destination that needs no preparation and stores no state or schemas of its own:
    implement `load_package`."""

    def prepare(self) -> None:
        """Nothing to check before a run."""

    def restore(self) -> tuple[PipelineState | None, list[Any]]:
        """No pipeline state or schemas kept at the destination."""
        return None, []

    def update_stored_schema(self, schema: Any) -> None:
        """No schema stored at the destination."""

    def load_package(self, package: LoadPackage) -> LoadResult:
        raise NotImplementedError(f"{type(self).__name__} must implement load_package(package)")


def credentials_refused(destination: Destination | None) -> ConfigurationError:
    """The error of `credentials=` given with a destination that takes none (or with no destination)."""
    what = f", not {destination!r}" if destination is not None else ""
    return ConfigurationError(
        f"credentials= needs a filesystem destination{what}: pass destination='filesystem' "
        "(or lakeload.destinations.filesystem(...)) together with credentials=."
    )


JobClientFactory = Callable[["Destination", LoadContext], JobClient]
JOB_CLIENTS: dict[str, JobClientFactory] = {}
DEFAULT_JOB_CLIENTS = {"filesystem": "lakeload.load.loader", "sink": "lakeload.load.sink_loader",
                       "duckdb": "lakeload.load.duckdb_loader"}


def register_job_client(type_name: str, factory: JobClientFactory) -> None:
    """Make `factory(destination, context)` the job client of destinations of `type_name` ("filesystem", ...)."""
    JOB_CLIENTS[type_name] = factory


_BUILT_IN_MODULES = "lakeload.destinations.impl."
_DLT_TYPE_NAMES = {"sink": "destination"}  # dlt's factory of `@dlt.destination` sinks is `destination`


def dlt_destination_type(type_name: str) -> str:
    """dlt's `destination_type` of a built-in destination of lakeload's `type_name`.

    >>> dlt_destination_type("filesystem"), dlt_destination_type("sink")
    ('dlt.destinations.filesystem', 'dlt.destinations.destination')
    """
    return f"dlt.destinations.{_DLT_TYPE_NAMES.get(type_name, type_name)}"


def class_destination_type(cls: type) -> str:
    """dlt's `destination_type` of a destination class: `module.Class`, a dlt-style `.destinations.impl.<x>.` part
    shortened to `.destinations.` as dlt does; a built-in lakeload destination says dlt's name of it."""
    if cls.__module__.startswith(_BUILT_IN_MODULES):
        return dlt_destination_type(str(cls.__dict__.get("type_name", cls.__name__)))
    return normalized_type(f"{cls.__module__}.{cls.__qualname__}")


def normalized_type(path: str) -> str:
    """A destination type path as dlt writes it: a `.destinations.impl.<x>.` part shortened to `.destinations.`.

    >>> normalized_type("my_package.destinations.impl.sqlite.factory.sqlite")
    'my_package.destinations.sqlite'
    """
    return re.sub(r"\.destinations\.impl\.[a-zA-Z_][.a-zA-Z0-9_]*\.", ".destinations.", path)


class Destination(ABC):
    """A destination lakeload loads into (see the module docstring for a user's own)."""

    max_table_nesting: int | None = None  # the nesting this destination wants; None: the schema's own

    @property
    def destination_type(self) -> str:
        """dlt's name of the destination's type: "dlt.destinations.filesystem", "dlt.destinations.duckdb",
        "dlt.destinations.destination" (a sink); for a class of one's own `module.Class` (see the module docstring)."""
        return class_destination_type(type(self))

    @property
    def type_name(self) -> str:
        """lakeload's short name of the type ("filesystem", "duckdb", "sink"): its key in `JOB_CLIENTS` and what
        package records, traces and the CLI say; a class of one's own: the last part of its `destination_type`."""
        return self.destination_type.rsplit(".", 1)[-1]

    @property
    @abstractmethod
    def name(self) -> str:
        """The destination's name (its configuration section, `[destination.<name>]`)."""

    @abstractmethod
    def capabilities(self) -> DestinationCapabilities:
        """What it can do (`DestinationCapabilities`)."""

    def configuration(self, pipeline_name: str | None = None) -> Any:
        """Its settings, resolved from arguments, environment and TOML files; None when it has none."""
        return None

    def location(self, pipeline_name: str | None = None) -> str:
        """Where it loads (a bucket URL, masked), for the record each package keeps of its destination."""
        return ""

    def with_credentials(self, credentials: Any) -> Destination:
        """A copy that uses `credentials` (`run(credentials=...)`); refused by destinations without credentials."""
        raise credentials_refused(self)

    def client(self, context: LoadContext) -> JobClient:
        """The job client that loads into this destination for the pipeline of `context`."""
        factory = JOB_CLIENTS.get(self.type_name)
        if factory is None and self.type_name in DEFAULT_JOB_CLIENTS:
            importlib.import_module(DEFAULT_JOB_CLIENTS[self.type_name])  # registers it
            factory = JOB_CLIENTS.get(self.type_name)
        if factory is None:
            raise ConfigurationError(
                f"Destination {self.name!r} ({type(self).__name__}) has no job client: implement "
                "client(context) returning a lakeload.destinations.JobClientBase subclass."
            )
        return factory(self, context)

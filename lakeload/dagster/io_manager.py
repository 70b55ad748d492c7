"""The Delta Lake I/O manager: Dagster assets stored as Delta tables at `<root_uri>/<schema>/<table>`.

>>> import pyarrow as pa
>>> from dagster import Definitions, asset
>>> from lakeload.dagster import DeltaLakeIOManager, S3Config
>>> @asset
... def iris_dataset() -> pa.Table:
...     return pa.table({"sepal_length": [5.1, 4.9], "species": ["setosa", "setosa"]})
>>> defs = Definitions(assets=[iris_dataset], resources={"io_manager": DeltaLakeIOManager(
...     root_uri="s3://lake/warehouse", storage_options=S3Config(region="eu-west-1"), schema="iris")})
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from dagster import ConfigurableIOManagerFactory, InputContext, IOManager, OutputContext
from pydantic import Field

from lakeload.dagster.config import ClientConfig, SchemaMode, StorageConfig, WriteMode, storage_field
from lakeload.dagster.connection import DeltaConnection, WriteSettings
from lakeload.dagster.handlers import (
    DeltaLakePandasTypeHandler,
    DeltaLakePolarsTypeHandler,
    DeltaLakePyArrowTypeHandler,
    DeltaLakeSparkTypeHandler,
    DeltaTypeHandler,
    available_handlers,
)
from lakeload.dagster.location import DeltaLocation, resolve_location
from lakeload.dagster.slices import table_slice
from lakeload.errors import ConfigurationError


class DeltaIOManager(IOManager):
    """Stores outputs and loads inputs with the handler of their type."""

    def __init__(self, location: DeltaLocation, handlers: Sequence[DeltaTypeHandler[Any]], default_load_type: type | None,
                 schema: str | None, settings: WriteSettings) -> None:
        self.location = location
        self.handlers = list(handlers)
        self.default_load_type = default_load_type
        self.schema = schema
        self.settings = settings

    def _handler(self, obj_type: Any, what: str) -> DeltaTypeHandler[Any]:
        if isinstance(obj_type, type):
            for handler in self.handlers:
                if issubclass(obj_type, tuple(handler.supported_types)):
                    return handler
        known = ", ".join(f"{t.__module__}.{t.__qualname__}" for h in self.handlers for t in h.supported_types)
        raise ConfigurationError(
            f"The Delta Lake I/O manager has no type handler for {what} of type {obj_type!r}; it handles {known}. "
            "Annotate the asset with one of these types, or use an I/O manager whose type_handlers() include one "
            "for it."
        )

    def handle_output(self, context: OutputContext, obj: object) -> None:
        if obj is None:
            raise ConfigurationError(
                "The asset returned None: the Delta Lake I/O manager stores data frames. Return a table, or annotate "
                "the asset with `-> None` if it stores nothing."
            )
        handler = self._handler(type(obj), "the output")
        connection = DeltaConnection(self.location, table_slice(context, context, self.schema), self.settings)
        context.add_output_metadata(dict(handler.handle_output(context, obj, connection)))

    def load_input(self, context: InputContext) -> object:
        load_type = context.dagster_type.typing_type
        if (load_type is Any or load_type is object) and self.default_load_type is not None:
            load_type = self.default_load_type
        handler = self._handler(load_type, "the input")
        upstream = context.upstream_output
        if upstream is None:
            raise ConfigurationError("The Delta Lake I/O manager loads asset inputs and op outputs, not root inputs.")
        connection = DeltaConnection(self.location, table_slice(context, upstream, self.schema), self.settings)
        return handler.load_input(context, connection)


class DeltaLakeIOManager(ConfigurableIOManagerFactory):
    """Stores PyArrow Tables, pandas and Polars DataFrames and Spark DataFrames as Delta tables.

    Inputs are loaded as the type they are annotated with (PyArrow Tables when not annotated).
    Subclasses narrow `type_handlers()` and `default_load_type()`.
    """

    root_uri: str | None = Field(
        default=None,
        description="Where the tables live (local path, s3://, az://, abfss://, gs://); lakeload's "
                    "[destination.filesystem] bucket_url when not set.")
    mode: WriteMode = Field(default=WriteMode.overwrite, description="What a write does with rows already in its slice.")
    schema_mode: SchemaMode = Field(
        default=SchemaMode.merge,
        description="merge: new columns are added; overwrite: a whole-table overwrite replaces the schema.")
    storage_options: StorageConfig = storage_field()
    client_options: ClientConfig | None = Field(default=None, description="HTTP client options of delta-rs.")
    table_config: dict[str, str] | None = Field(
        default=None, description="Delta table properties of tables the I/O manager creates.")
    schema_: str | None = Field(
        default=None, alias="schema",
        description="Schema of every table; without it, the asset key prefix (or 'public') is the schema.")
    destination_name: str = Field(
        default="filesystem",
        description="Which [destination.<name>] section of lakeload's configuration gives defaults.")
    pipeline_name: str | None = Field(
        default=None,
        description="Also read the pipeline-scoped sections of lakeload's configuration "
                    "([<pipeline_name>.destination.<name>], <PIPELINE_NAME>__DESTINATION__...), which win.")

    @staticmethod
    def type_handlers() -> Sequence[DeltaTypeHandler[Any]]:
        return available_handlers()

    @staticmethod
    def default_load_type() -> type | None:
        return pa.Table

    def create_io_manager(self, context: Any) -> DeltaIOManager:
        location = resolve_location(self.root_uri, self.storage_options, self.client_options, self.destination_name,
                                    self.pipeline_name)
        settings = WriteSettings(WriteMode(self.mode).value, SchemaMode(self.schema_mode).value, self.table_config)
        return DeltaIOManager(location, self.type_handlers(), self.default_load_type(), self.schema_, settings)


class DeltaLakePyArrowIOManager(DeltaLakeIOManager):
    """PyArrow Tables only."""

    @staticmethod
    def type_handlers() -> Sequence[DeltaTypeHandler[Any]]:
        return [DeltaLakePyArrowTypeHandler()]


class DeltaLakePandasIOManager(DeltaLakeIOManager):
    """pandas DataFrames only."""

    @staticmethod
    def type_handlers() -> Sequence[DeltaTypeHandler[Any]]:
        return [DeltaLakePandasTypeHandler()]

    @staticmethod
    def default_load_type() -> type | None:
        import pandas as pd

        return pd.DataFrame


class DeltaLakePolarsIOManager(DeltaLakeIOManager):
    """Polars DataFrames and LazyFrames only."""

    @staticmethod
    def type_handlers() -> Sequence[DeltaTypeHandler[Any]]:
        return [DeltaLakePolarsTypeHandler()]

    @staticmethod
    def default_load_type() -> type | None:
        import polars as pl

        return pl.DataFrame


class DeltaLakeSparkIOManager(DeltaLakeIOManager):
    """Spark DataFrames only: written by the executors, loaded as DataFrames over the snapshot."""

    @staticmethod
    def type_handlers() -> Sequence[DeltaTypeHandler[Any]]:
        return [DeltaLakeSparkTypeHandler()]

    @staticmethod
    def default_load_type() -> type | None:
        from pyspark.sql import DataFrame

        return DataFrame


DeltaLakePyarrowIOManager = DeltaLakePyArrowIOManager  # dagster-deltalake's spelling

"""Type handlers: each converts one kind of data frame to and from a data plane of `DeltaConnection`.

PyArrow, pandas and Polars go through Arrow in this process; Spark DataFrames stay on the executors.
A handler holds no Delta code: adding one means a class like these and listing it in an I/O manager's
`type_handlers()`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import pyarrow as pa

from lakeload.dagster.delta_arrow import read_arrow, write_arrow

if TYPE_CHECKING:
    from dagster import InputContext, OutputContext

    from lakeload.dagster.connection import DeltaConnection

T = TypeVar("T")


class DeltaTypeHandler(ABC, Generic[T]):
    """Stores objects of `supported_types` in a table slice and loads them back."""

    @property
    @abstractmethod
    def supported_types(self) -> Sequence[type]:
        """The Python types this handler stores, and loads for inputs annotated with them."""

    @abstractmethod
    def handle_output(self, context: OutputContext, obj: T, connection: DeltaConnection) -> Mapping[str, Any]:
        """Write `obj` into the connection's slice; returns the materialization metadata."""

    @abstractmethod
    def load_input(self, context: InputContext, connection: DeltaConnection) -> T:
        """The connection's slice as a `T`."""


class ArrowTypeHandler(DeltaTypeHandler[T]):
    """A handler whose type converts to and from a `pyarrow.Table`."""

    @abstractmethod
    def to_arrow(self, obj: T) -> pa.Table: ...

    @abstractmethod
    def from_arrow(self, table: pa.Table, load_type: type) -> T: ...

    def handle_output(self, context: OutputContext, obj: T, connection: DeltaConnection) -> Mapping[str, Any]:
        return write_arrow(connection, self.to_arrow(obj))

    def load_input(self, context: InputContext, connection: DeltaConnection) -> T:
        load_type = context.dagster_type.typing_type
        return self.from_arrow(read_arrow(connection), load_type if isinstance(load_type, type) else object)


class DeltaLakePyArrowTypeHandler(ArrowTypeHandler[Any]):
    """`pyarrow.Table` (and `RecordBatchReader` outputs, read whole)."""

    @property
    def supported_types(self) -> Sequence[type]:
        return (pa.Table, pa.RecordBatchReader)

    def to_arrow(self, obj: Any) -> pa.Table:
        return obj.read_all() if isinstance(obj, pa.RecordBatchReader) else obj

    def from_arrow(self, table: pa.Table, load_type: type) -> Any:
        if isinstance(load_type, type) and issubclass(load_type, pa.RecordBatchReader):
            return pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
        return table


class DeltaLakePandasTypeHandler(ArrowTypeHandler[Any]):
    """`pandas.DataFrame` (the index is not stored)."""

    @property
    def supported_types(self) -> Sequence[type]:
        import pandas as pd

        return (pd.DataFrame,)

    def to_arrow(self, obj: Any) -> pa.Table:
        return pa.Table.from_pandas(obj, preserve_index=False)

    def from_arrow(self, table: pa.Table, load_type: type) -> Any:
        return table.to_pandas()


class DeltaLakePolarsTypeHandler(ArrowTypeHandler[Any]):
    """`polars.DataFrame`, and `polars.LazyFrame` (collected on write, a lazy frame over the rows on load)."""

    @property
    def supported_types(self) -> Sequence[type]:
        import polars as pl

        return (pl.DataFrame, pl.LazyFrame)

    def to_arrow(self, obj: Any) -> pa.Table:
        import polars as pl

        frame = obj.collect() if isinstance(obj, pl.LazyFrame) else obj
        return frame.to_arrow()

    def from_arrow(self, table: pa.Table, load_type: type) -> Any:
        import polars as pl

        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)
        return frame.lazy() if isinstance(load_type, type) and issubclass(load_type, pl.LazyFrame) else frame


class DeltaLakeSparkTypeHandler(DeltaTypeHandler[Any]):
    """`pyspark.sql.DataFrame`: written by the executors, loaded as a DataFrame over the current snapshot."""

    @property
    def supported_types(self) -> Sequence[type]:
        from pyspark.sql import DataFrame

        return (DataFrame,)

    def handle_output(self, context: OutputContext, obj: Any, connection: DeltaConnection) -> Mapping[str, Any]:
        from lakeload.dagster.delta_spark import write_spark  # Spark users only: Arrow users never import it

        return write_spark(connection, obj)

    def load_input(self, context: InputContext, connection: DeltaConnection) -> Any:
        from lakeload.dagster.delta_spark import read_spark

        return read_spark(connection)


def available_handlers() -> list[DeltaTypeHandler[Any]]:
    """Every handler whose library is installed (Polars is optional)."""
    handlers: list[DeltaTypeHandler[Any]] = [DeltaLakePyArrowTypeHandler(), DeltaLakePandasTypeHandler()]
    try:
        import polars  # noqa: F401
    except ImportError:
        pass
    else:
        handlers.append(DeltaLakePolarsTypeHandler())
    handlers.append(DeltaLakeSparkTypeHandler())
    return handlers

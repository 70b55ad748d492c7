"""Dagster I/O manager keeping assets as Delta tables in lakeload buckets (`pip install "lakeload[dagster]"`).

>>> import pandas as pd
>>> from dagster import Definitions, asset
>>> from lakeload.dagster import DeltaLakePandasIOManager, LocalConfig
>>> @asset
... def iris_dataset() -> pd.DataFrame:
...     return pd.DataFrame({"sepal_length": [5.1, 4.9], "species": ["setosa", "setosa"]})
>>> defs = Definitions(assets=[iris_dataset], resources={"io_manager": DeltaLakePandasIOManager(
...     root_uri="path/to/deltalake", storage_options=LocalConfig(), schema="iris")})

Tables live at `<root_uri>/<schema>/<table>`; credentials come from the storage config and, for what it
leaves unset, from lakeload's own configuration. See docs/dagster.md.
"""

from __future__ import annotations

try:
    import dagster  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    from lakeload.errors import MissingDependencyError

    raise MissingDependencyError('The Dagster I/O manager needs Dagster: pip install "lakeload[dagster]"') from exc

from lakeload.dagster.config import (
    AzureConfig,
    ClientConfig,
    GcsConfig,
    LakeloadConfig,
    LocalConfig,
    S3Config,
    SchemaMode,
    WriteMode,
)
from lakeload.dagster.connection import DeltaConnection, SliceNotEmptyError
from lakeload.dagster.handlers import (
    ArrowTypeHandler,
    DeltaLakePandasTypeHandler,
    DeltaLakePolarsTypeHandler,
    DeltaLakePyArrowTypeHandler,
    DeltaLakeSparkTypeHandler,
    DeltaTypeHandler,
)
from lakeload.dagster.io_manager import (
    DeltaIOManager,
    DeltaLakeIOManager,
    DeltaLakePandasIOManager,
    DeltaLakePolarsIOManager,
    DeltaLakePyArrowIOManager,
    DeltaLakePyarrowIOManager,
    DeltaLakeSparkIOManager,
)

__all__ = [
    "ArrowTypeHandler", "AzureConfig", "ClientConfig", "DeltaConnection", "DeltaIOManager", "DeltaLakeIOManager",
    "DeltaLakePandasIOManager", "DeltaLakePandasTypeHandler", "DeltaLakePolarsIOManager", "DeltaLakePolarsTypeHandler",
    "DeltaLakePyArrowIOManager", "DeltaLakePyArrowTypeHandler", "DeltaLakePyarrowIOManager", "DeltaLakeSparkIOManager",
    "DeltaLakeSparkTypeHandler", "DeltaTypeHandler", "GcsConfig", "LakeloadConfig", "LocalConfig", "S3Config",
    "SchemaMode", "SliceNotEmptyError", "WriteMode",
]

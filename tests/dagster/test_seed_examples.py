"""The dagster-deltalake reference's examples (seeds/002), rewritten for lakeload and run as tests:
column selection, static / time / multi partitions, schemas, mixing I/O managers, PyArrow and Polars,
and the storage backend configurations (S3 unsafe rename, DynamoDB locking, R2 copy-if-not-exists,
custom endpoint, the Azurite emulator). The iris data is inline: no network."""

# no `from __future__ import annotations`: Dagster reads the assets' type annotations at definition time

import datetime as dt
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from dagster import (
    AssetExecutionContext,
    AssetIn,
    DailyPartitionsDefinition,
    Definitions,
    FilesystemIOManager,
    MultiPartitionKey,
    MultiPartitionsDefinition,
    StaticPartitionsDefinition,
    asset,
    materialize,
)
from deltalake import DeltaTable
from servers.fixtures import fresh_prefix

from lakeload.dagster import (
    AzureConfig,
    ClientConfig,
    DeltaLakePandasIOManager,
    DeltaLakePolarsIOManager,
    DeltaLakePyarrowIOManager,
    LocalConfig,
    S3Config,
)
from lakeload.dagster.connection import DeltaConnection
from lakeload.dagster.delta_arrow import read_arrow, write_arrow
from lakeload.dagster.location import resolve_location
from lakeload.dagster.slices import TableSlice

SPECIES = ["Iris-setosa", "Iris-virginica", "Iris-versicolor"]


def iris_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "sepal_length_cm": [5.1, 7.0, 6.3, 4.9, 5.1], "sepal_width_cm": [3.5, 3.2, 3.3, 3.0, 3.5],
        "petal_length_cm": [1.4, 4.7, 6.0, 1.4, 1.4], "petal_width_cm": [0.2, 1.4, 2.5, 0.2, 0.2],
        "species": ["Iris-setosa", "Iris-versicolor", "Iris-virginica", "Iris-setosa", "Iris-setosa"],  # last: a duplicate
    })


def _io(root: Path, **kwargs: Any) -> DeltaLakePandasIOManager:
    return DeltaLakePandasIOManager(root_uri=str(root), storage_options=LocalConfig(), schema="iris", **kwargs)


def test_selecting_columns_in_a_downstream_asset(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    @asset
    def iris_dataset() -> pd.DataFrame:
        return iris_frame()

    @asset(ins={"iris_sepal": AssetIn(key="iris_dataset", metadata={"columns": ["sepal_length_cm", "sepal_width_cm"]})})
    def sepal_data(iris_sepal: pd.DataFrame) -> pd.DataFrame:
        iris_sepal["sepal_area_cm2"] = iris_sepal["sepal_length_cm"] * iris_sepal["sepal_width_cm"]
        seen["columns"] = list(iris_sepal.columns)
        return iris_sepal

    assert materialize([iris_dataset, sepal_data], resources={"io_manager": _io(tmp_path)}).success
    assert seen["columns"] == ["sepal_length_cm", "sepal_width_cm", "sepal_area_cm2"]


def test_static_partitioned_assets(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    @asset(partitions_def=StaticPartitionsDefinition(SPECIES), metadata={"partition_expr": "species"})
    def iris_dataset_partitioned(context: AssetExecutionContext) -> pd.DataFrame:
        frame = iris_frame()
        return frame[frame["species"] == context.partition_key]

    @asset(partitions_def=StaticPartitionsDefinition(SPECIES), metadata={"partition_expr": "species"})
    def iris_cleaned(iris_dataset_partitioned: pd.DataFrame) -> pd.DataFrame:
        seen.setdefault("species", set()).update(iris_dataset_partitioned["species"])
        return iris_dataset_partitioned.dropna().drop_duplicates()

    for key in ["Iris-setosa", "Iris-virginica"]:
        assert materialize([iris_dataset_partitioned, iris_cleaned], partition_key=key,
                           resources={"io_manager": _io(tmp_path)}).success
    assert seen["species"] == {"Iris-setosa", "Iris-virginica"}
    cleaned = DeltaTable(str(tmp_path / "iris" / "iris_cleaned")).to_pandas()
    assert sorted(cleaned["species"]) == ["Iris-setosa", "Iris-setosa", "Iris-virginica"]  # the duplicate dropped
    assert DeltaTable(str(tmp_path / "iris" / "iris_cleaned")).history(1)[0]["operationParameters"]["predicate"] == \
        "species = 'Iris-virginica'"


def test_time_partitioned_assets(tmp_path: Path) -> None:
    daily = DailyPartitionsDefinition(start_date="2023-01-01")

    @asset(partitions_def=daily, metadata={"partition_expr": "time"})
    def iris_data_per_day(context: AssetExecutionContext) -> pd.DataFrame:
        frame = iris_frame()
        frame["time"] = pd.Timestamp(context.partition_time_window.start)
        return frame

    @asset(partitions_def=daily, metadata={"partition_expr": "time"})
    def iris_cleaned(iris_data_per_day: pd.DataFrame) -> pd.DataFrame:
        return iris_data_per_day.dropna().drop_duplicates()

    for key in ["2023-01-01", "2023-01-02"]:
        assert materialize([iris_data_per_day, iris_cleaned], partition_key=key,
                           resources={"io_manager": _io(tmp_path)}).success
    cleaned = DeltaTable(str(tmp_path / "iris" / "iris_cleaned")).to_pandas()
    assert sorted(cleaned["time"].dt.strftime("%Y-%m-%d").unique()) == ["2023-01-01", "2023-01-02"]
    assert len(cleaned) == 8  # 4 distinct rows per day


def test_multi_partitioned_assets(tmp_path: Path) -> None:
    multi = MultiPartitionsDefinition({"date": DailyPartitionsDefinition(start_date="2023-01-01"),
                                       "species": StaticPartitionsDefinition(SPECIES)})

    @asset(partitions_def=multi, metadata={"partition_expr": {"date": "time", "species": "species"}})
    def iris_dataset_partitioned(context: AssetExecutionContext) -> pd.DataFrame:
        keys = context.partition_key.keys_by_dimension  # type: ignore[attr-defined]
        frame = iris_frame()
        frame = frame[frame["species"] == keys["species"]].copy()
        frame["time"] = pd.Timestamp(dt.datetime.fromisoformat(keys["date"]), tz="UTC")
        return frame

    @asset(partitions_def=multi, metadata={"partition_expr": {"date": "time", "species": "species"}})
    def iris_cleaned(iris_dataset_partitioned: pd.DataFrame) -> pd.DataFrame:
        return iris_dataset_partitioned.dropna().drop_duplicates()

    key = MultiPartitionKey({"date": "2023-01-02", "species": "Iris-setosa"})
    assert materialize([iris_dataset_partitioned, iris_cleaned], partition_key=key,
                       resources={"io_manager": _io(tmp_path)}).success
    cleaned = DeltaTable(str(tmp_path / "iris" / "iris_cleaned"))
    assert cleaned.to_pandas()["species"].tolist() == ["Iris-setosa"] * 2
    assert cleaned.metadata().partition_columns == ["time", "species"]


def test_storing_tables_in_multiple_schemas(tmp_path: Path) -> None:
    @asset(key_prefix=["iris"])
    def iris_dataset() -> pd.DataFrame:
        return iris_frame()

    @asset(key_prefix=["daffodil"])
    def daffodil_dataset() -> pd.DataFrame:
        return pd.DataFrame({"sepal_length_cm": [1.0], "species": ["Narcissus"]})

    io = DeltaLakePandasIOManager(root_uri=str(tmp_path), storage_options=LocalConfig())
    assert materialize([iris_dataset, daffodil_dataset], resources={"io_manager": io}).success
    assert (tmp_path / "iris" / "iris_dataset" / "_delta_log").is_dir()
    assert (tmp_path / "daffodil" / "daffodil_dataset" / "_delta_log").is_dir()


def test_using_the_io_manager_with_other_io_managers(tmp_path: Path) -> None:
    @asset(io_manager_key="warehouse_io_manager")
    def iris_dataset() -> pd.DataFrame:
        return iris_frame()

    @asset(io_manager_key="blob_io_manager")
    def iris_plots(iris_dataset: pd.DataFrame) -> dict[str, list[float]]:
        return {"sepal_length_cm": iris_dataset["sepal_length_cm"].tolist()}

    defs = Definitions(assets=[iris_dataset, iris_plots], resources={
        "warehouse_io_manager": _io(tmp_path / "lake"),
        "blob_io_manager": FilesystemIOManager(base_dir=str(tmp_path / "blob")),
    })
    assert defs.resolve_implicit_global_asset_job_def().execute_in_process().success
    assert (tmp_path / "lake" / "iris" / "iris_dataset" / "_delta_log").is_dir()
    assert (tmp_path / "blob" / "iris_plots").is_file()


@pytest.mark.parametrize("kind", ["pyarrow", "polars"])
def test_storing_pyarrow_tables_and_polars_dataframes(tmp_path: Path, kind: str) -> None:
    seen: dict[str, Any] = {}
    if kind == "pyarrow":
        io: Any = DeltaLakePyarrowIOManager(root_uri=str(tmp_path), storage_options=LocalConfig(), schema="iris")
        frame_type: Any = pa.Table
        make = lambda: pa.Table.from_pandas(iris_frame())  # noqa: E731
    else:
        io = DeltaLakePolarsIOManager(root_uri=str(tmp_path), storage_options=LocalConfig(), schema="iris")
        frame_type = pl.DataFrame
        make = lambda: pl.from_pandas(iris_frame())  # noqa: E731

    @asset
    def iris_dataset() -> frame_type:  # type: ignore[valid-type]
        return make()

    @asset
    def iris_rows(iris_dataset: frame_type) -> None:  # type: ignore[valid-type]
        seen["type"], seen["rows"] = type(iris_dataset), iris_dataset.shape[0] if kind == "polars" else iris_dataset.num_rows

    assert materialize([iris_dataset, iris_rows], resources={"io_manager": io}).success
    assert seen == {"type": frame_type, "rows": 5}


def _s3(s3_server: Any, **kwargs: Any) -> S3Config:
    return S3Config(access_key_id=s3_server.access_key, secret_access_key=s3_server.secret_key,
                    region=s3_server.region, **kwargs)


@pytest.mark.parametrize("extra", [
    {"allow_unsafe_rename": True},  # a single writer
    {"locking_provider": "dynamodb"},  # delta-rs 1.x: conditional puts instead of a lock table
    {"copy_if_not_exists": "header: cf-copy-destination-if-none-match: *"},  # Cloudflare R2
])
def test_s3_compatible_storage_configurations(s3_server: Any, extra: dict[str, Any]) -> None:
    config = _s3(s3_server, endpoint=s3_server.endpoint_url, **extra)  # the non-AWS endpoint, as in the seed
    root = s3_server.url(fresh_prefix("seed-s3"))
    with pytest.warns(UserWarning) if "locking_provider" in extra else _no_warning():
        location = resolve_location(root, config, ClientConfig(allow_http=True))
    for version, rows in enumerate([[1, 2], [3]]):
        write_arrow(DeltaConnection(location, TableSlice("iris", "t")), pa.table({"a": rows}))
        assert DeltaTable(f"{root}/iris/t", storage_options=dict(location.storage_options)).version() == version
    assert read_arrow(DeltaConnection(location, TableSlice("iris", "t"))).to_pydict() == {"a": [3]}


def _no_warning() -> Any:
    import contextlib

    return contextlib.nullcontext()


def test_locally_running_storage_emulator(azure_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURITE_BLOB_STORAGE_URL", azure_server.blob_endpoint.rsplit("/", 1)[0])
    config = AzureConfig(use_emulator=True, client=ClientConfig(allow_http=True))
    root = azure_server.url(fresh_prefix("seed-az"))
    location = resolve_location(root, config)
    assert location.storage_options["ALLOW_HTTP"] == "true"
    write_arrow(DeltaConnection(location, TableSlice("iris", "iris_dataset")), pa.Table.from_pandas(iris_frame()))
    loaded = read_arrow(DeltaConnection(location, TableSlice("iris", "iris_dataset", columns=("species",))))
    assert loaded.column_names == ["species"] and loaded.num_rows == 5

"""The Delta Lake I/O manager end to end with Dagster's `materialize`: every type handler, column selection,
write modes, metadata, schemas, and other I/O managers beside it (local tables, real delta-rs and Spark)."""

# no `from __future__ import annotations`: Dagster reads the assets' type annotations at definition time

from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from dagster import AssetIn, AssetKey, Definitions, FilesystemIOManager, asset, materialize
from deltalake import DeltaTable

from lakeload.dagster import (
    DeltaLakeIOManager,
    DeltaLakePandasIOManager,
    DeltaLakePolarsIOManager,
    DeltaLakePyArrowIOManager,
    DeltaLakeSparkIOManager,
    LocalConfig,
    SliceNotEmptyError,
)
from lakeload.dagster.delta_arrow import read_arrow, write_arrow
from lakeload.dagster.delta_spark import read_spark, write_spark
from lakeload.errors import ConfigurationError

ROWS = {"sepal_length_cm": [5.1, 4.9, 6.3], "sepal_width_cm": [3.5, 3.0, 3.3], "species": ["setosa", "setosa", "virginica"]}


def _table(root: Path, schema: str, name: str) -> DeltaTable:
    return DeltaTable(str(root / schema / name))


def _rows(root: Path, schema: str, name: str) -> list[dict[str, Any]]:
    return sorted(_table(root, schema, name).to_pyarrow_table().to_pylist(), key=lambda r: str(sorted(r.items())))


def _metadata(result: Any, key: str) -> dict[str, Any]:
    events = [e for e in result.get_asset_materialization_events() if e.asset_key == AssetKey(key.split("/"))]
    return {k: v.value for k, v in events[-1].materialization.metadata.items()}


def _roundtrip(io_manager: Any, make: Any, check: Any, load_type: Any) -> Any:
    seen: dict[str, Any] = {}

    @asset(key_prefix="iris")
    def iris_dataset() -> Any:
        return make()

    @asset(key_prefix="iris")
    def copy(iris_dataset: load_type) -> None:  # type: ignore[valid-type]
        seen["value"] = iris_dataset

    result = materialize([iris_dataset, copy], resources={"io_manager": io_manager})
    assert result.success
    check(seen["value"])
    return result


def test_pyarrow_roundtrip_records_table_metadata(tmp_path: Path) -> None:
    io = DeltaLakePyArrowIOManager(root_uri=str(tmp_path), storage_options=LocalConfig())
    result = _roundtrip(io, lambda: pa.table(ROWS), lambda t: (isinstance(t, pa.Table) and t.to_pydict() == ROWS) or pytest.fail(str(t)), pa.Table)
    meta = _metadata(result, "iris/iris_dataset")
    assert meta["dagster/row_count"] == 3 and meta["written_rows"] == 3
    assert meta["delta_version"] == 0
    assert meta["dagster/uri"] == str(tmp_path / "iris" / "iris_dataset")
    assert meta["dagster/table_name"] == "deltalake.iris.iris_dataset"  # dagster-deltalake's keys beside lakeload's
    assert meta["table_uri"] == str(tmp_path / "iris" / "iris_dataset") and meta["Query"] == "SELECT * FROM iris.iris_dataset"
    assert meta["num_rows"] == 3 and [c.name for c in meta["table_columns"].columns] == list(ROWS)
    assert [c.name for c in meta["dagster/column_schema"].columns] == list(ROWS)


def test_pandas_roundtrip(tmp_path: Path) -> None:
    io = DeltaLakePandasIOManager(root_uri=str(tmp_path), storage_options=LocalConfig())

    def check(frame: Any) -> None:
        assert isinstance(frame, pd.DataFrame)
        pd.testing.assert_frame_equal(frame, pd.DataFrame(ROWS), check_dtype=False)

    frame = pd.DataFrame(ROWS, index=[10, 11, 12])  # the index is not stored
    _roundtrip(io, lambda: frame, check, pd.DataFrame)
    assert _table(tmp_path, "iris", "iris_dataset").schema().to_arrow().names == list(ROWS)  # type: ignore[attr-defined]


def test_polars_roundtrip_dataframe_and_lazyframe(tmp_path: Path) -> None:
    io = DeltaLakePolarsIOManager(root_uri=str(tmp_path), storage_options=LocalConfig())
    _roundtrip(io, lambda: pl.DataFrame(ROWS), lambda f: f.to_dict(as_series=False) == ROWS or pytest.fail(str(f)), pl.DataFrame)

    def lazy(frame: Any) -> None:
        assert isinstance(frame, pl.LazyFrame)
        assert frame.collect().to_dict(as_series=False) == ROWS

    _roundtrip(io, lambda: pl.DataFrame(ROWS).lazy(), lazy, pl.LazyFrame)


def test_spark_roundtrip_written_by_executors(tmp_path: Path, spark: Any) -> None:
    from pyspark.sql import DataFrame

    io = DeltaLakeSparkIOManager(root_uri=str(tmp_path), storage_options=LocalConfig())
    frame = spark.createDataFrame(pd.DataFrame(ROWS)).repartition(3)

    def check(loaded: Any) -> None:
        assert isinstance(loaded, DataFrame)
        assert sorted(tuple(r) for r in loaded.collect()) == sorted(zip(*ROWS.values(), strict=True))

    result = _roundtrip(io, lambda: frame, check, DataFrame)
    assert _metadata(result, "iris/iris_dataset")["dagster/row_count"] == 3
    assert len(_table(tmp_path, "iris", "iris_dataset").file_uris()) >= 2  # one file per non-empty Spark task
    history = _table(tmp_path, "iris", "iris_dataset").history()
    assert len(history) == 1  # created in one commit


def test_one_io_manager_reads_what_another_type_wrote(tmp_path: Path, spark: Any) -> None:
    from pyspark.sql import DataFrame

    seen: dict[str, Any] = {}

    @asset
    def raw() -> pd.DataFrame:
        return pd.DataFrame(ROWS)

    @asset
    def as_arrow(raw: pa.Table) -> pl.DataFrame:
        seen["arrow"] = raw
        return pl.from_arrow(raw)  # type: ignore[return-value]

    @asset
    def as_spark(as_arrow: DataFrame) -> DataFrame:
        seen["spark"] = as_arrow.count()
        return as_arrow

    @asset
    def back(as_spark: pd.DataFrame) -> None:
        seen["pandas"] = as_spark

    io = DeltaLakeIOManager(root_uri=str(tmp_path), storage_options=LocalConfig(), schema="mixed")
    assert materialize([raw, as_arrow, as_spark, back], resources={"io_manager": io}).success
    assert seen["arrow"].to_pydict() == ROWS and seen["spark"] == 3
    pd.testing.assert_frame_equal(seen["pandas"].sort_values("sepal_length_cm").reset_index(drop=True),
                                  pd.DataFrame(ROWS).sort_values("sepal_length_cm").reset_index(drop=True), check_dtype=False)


def _columns_example(tmp_path: Path, load_type: Any, read: Any) -> list[str]:
    seen: dict[str, Any] = {}

    @asset(key_prefix=["iris"])
    def iris_dataset() -> pd.DataFrame:
        return pd.DataFrame({**ROWS, "petal_length_cm": [1.4, 1.4, 6.0]})

    @asset(key_prefix=["iris"], ins={"iris_dataset": AssetIn(key_prefix=["iris"], metadata={"columns": ["sepal_length_cm", "sepal_width_cm"]})})
    def sepal_data(iris_dataset: load_type) -> None:  # type: ignore[valid-type]
        seen["columns"] = read(iris_dataset)

    io = DeltaLakeIOManager(root_uri=str(tmp_path), storage_options=LocalConfig())
    assert materialize([iris_dataset, sepal_data], resources={"io_manager": io}).success
    return seen["columns"]


@pytest.mark.parametrize("kind", ["arrow", "pandas", "polars", "spark"])
def test_columns_metadata_loads_only_those_columns(tmp_path: Path, kind: str, request: pytest.FixtureRequest) -> None:
    from pyspark.sql import DataFrame

    if kind == "spark":
        request.getfixturevalue("spark")
    load_type, read = {
        "arrow": (pa.Table, lambda t: t.column_names), "pandas": (pd.DataFrame, lambda f: list(f.columns)),
        "polars": (pl.DataFrame, lambda f: f.columns), "spark": (DataFrame, lambda f: f.columns),
    }[kind]
    assert _columns_example(tmp_path, load_type, read) == ["sepal_length_cm", "sepal_width_cm"]


def _wreck_column(path: str, column: str) -> None:
    """Overwrite every byte of `column`'s chunks in a Parquet file (footer kept): reading it fails from now on."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    index = meta.schema.names.index(column)
    with open(path, "r+b") as handle:
        for group in range(meta.num_row_groups):
            chunk = meta.row_group(group).column(index)
            start = min(o for o in (chunk.dictionary_page_offset, chunk.data_page_offset) if o is not None)
            handle.seek(start)
            handle.write(b"\xff" * chunk.total_compressed_size)


@pytest.mark.parametrize("plane", ["arrow", "spark"])
def test_column_selection_reads_only_the_column_bytes(tmp_path: Path, plane: str, request: pytest.FixtureRequest) -> None:
    """With the other column's bytes destroyed in the data file, reading the selected column still works:
    its bytes are never read. Reading the whole table fails, so the file really is broken."""
    from lakeload.dagster.connection import DeltaConnection
    from lakeload.dagster.location import resolve_location
    from lakeload.dagster.slices import TableSlice

    location = resolve_location(str(tmp_path), LocalConfig())
    wide = pa.table({"small": list(range(1000)), "big": [f"value-{i}" * 50 for i in range(1000)]})
    write_arrow(DeltaConnection(location, TableSlice("s", "wide")), wide)
    for uri in _table(tmp_path, "s", "wide").file_uris():
        _wreck_column(uri, "big")
    selected = DeltaConnection(location, TableSlice("s", "wide", columns=("small",)))
    if plane == "arrow":
        assert read_arrow(selected).to_pydict() == {"small": list(range(1000))}
        with pytest.raises(Exception):  # noqa: B017 - any decoding error proves the bytes are unreadable
            read_arrow(DeltaConnection(location, TableSlice("s", "wide")))
    else:
        spark = request.getfixturevalue("spark")
        frame = read_spark(selected, spark)
        assert frame.columns == ["small"] and sorted(r[0] for r in frame.collect()) == list(range(1000))
        with pytest.raises(Exception):  # noqa: B017
            read_spark(DeltaConnection(location, TableSlice("s", "wide")), spark).collect()


def test_unknown_column_in_metadata_is_a_clear_error(tmp_path: Path) -> None:
    from lakeload.dagster.connection import DeltaConnection
    from lakeload.dagster.location import resolve_location
    from lakeload.dagster.slices import TableSlice

    location = resolve_location(str(tmp_path), LocalConfig())
    write_arrow(DeltaConnection(location, TableSlice("s", "t")), pa.table(ROWS))
    with pytest.raises(ConfigurationError, match="sepal_volume.*columns: sepal_length_cm"):
        read_arrow(DeltaConnection(location, TableSlice("s", "t", columns=("sepal_volume",))))


def _write(location: Any, plane: str, table: pa.Table, request: pytest.FixtureRequest, **settings: Any) -> dict[str, Any]:
    from lakeload.dagster.connection import DeltaConnection, WriteSettings
    from lakeload.dagster.slices import TableSlice

    connection = DeltaConnection(location, TableSlice("s", "t"), WriteSettings(**settings))
    if plane == "arrow":
        return write_arrow(connection, table)
    return write_spark(connection, request.getfixturevalue("spark").createDataFrame(table.to_pandas()))


@pytest.mark.parametrize("plane", ["arrow", "spark"])
@pytest.mark.parametrize("mode, rows_after", [("overwrite", 3), ("append", 6), ("ignore", 3)])
def test_write_modes(tmp_path: Path, mode: str, rows_after: int, plane: str, request: pytest.FixtureRequest) -> None:
    from lakeload.dagster.location import resolve_location

    location = resolve_location(str(tmp_path), LocalConfig())
    for _ in range(2):
        meta = _write(location, plane, pa.table(ROWS), request, mode=mode)
    assert len(_rows(tmp_path, "s", "t")) == rows_after
    assert meta["written_rows"] == (0 if mode == "ignore" else 3) and meta["dagster/row_count"] == rows_after
    assert _table(tmp_path, "s", "t").version() == (0 if mode == "ignore" else 1)  # one commit per write


def test_mode_error_refuses_a_table_with_rows(tmp_path: Path) -> None:
    @asset
    def iris() -> pa.Table:
        return pa.table(ROWS)

    io = DeltaLakePyArrowIOManager(root_uri=str(tmp_path), storage_options=LocalConfig(), mode="error")
    assert materialize([iris], resources={"io_manager": io}).success
    with pytest.raises(SliceNotEmptyError, match="mode='overwrite'"):
        materialize([iris], resources={"io_manager": io})
    assert len(_rows(tmp_path, "public", "iris")) == 3


@pytest.mark.parametrize("plane", ["arrow", "spark"])
def test_schema_modes(tmp_path: Path, plane: str, request: pytest.FixtureRequest) -> None:
    """merge (the default) adds new columns and keeps the old ones; overwrite replaces the schema."""
    from lakeload.dagster.location import resolve_location

    location = resolve_location(str(tmp_path), LocalConfig())
    _write(location, plane, pa.table({"a": [1], "old": ["o"]}), request)
    _write(location, plane, pa.table({"a": [2], "b": ["x"]}), request)
    assert _table(tmp_path, "s", "t").to_pyarrow_table().to_pylist() == [{"a": 2, "old": None, "b": "x"}]
    _write(location, plane, pa.table({"c": [3.5]}), request, schema_mode="overwrite")
    table = _table(tmp_path, "s", "t")
    assert table.to_pyarrow_table().to_pylist() == [{"c": 3.5}]
    assert table.version() == 2  # each overwrite is one commit, its schema change included


def test_schema_from_config_key_prefix_and_default(tmp_path: Path) -> None:
    @asset(key_prefix=["IRIS"])
    def iris_dataset() -> pa.Table:
        return pa.table(ROWS)

    @asset(key_prefix=["DAFFODIL"])
    def daffodil_dataset() -> pa.Table:
        return pa.table(ROWS)

    @asset
    def plain() -> pa.Table:
        return pa.table(ROWS)

    by_prefix = DeltaLakePyArrowIOManager(root_uri=str(tmp_path / "a"), storage_options=LocalConfig())
    assert materialize([iris_dataset, daffodil_dataset, plain], resources={"io_manager": by_prefix}).success
    assert {p.name for p in (tmp_path / "a").iterdir()} == {"IRIS", "DAFFODIL", "public"}
    assert (tmp_path / "a" / "IRIS" / "iris_dataset" / "_delta_log").is_dir()
    assert (tmp_path / "a" / "public" / "plain" / "_delta_log").is_dir()

    configured = DeltaLakePyArrowIOManager(root_uri=str(tmp_path / "b"), storage_options=LocalConfig(), schema="iris")
    assert materialize([plain], resources={"io_manager": configured}).success
    assert (tmp_path / "b" / "iris" / "plain" / "_delta_log").is_dir()
    with pytest.raises(ConfigurationError, match=r"'iris'.*'IRIS'"):
        materialize([iris_dataset], resources={"io_manager": configured})
    assert not (tmp_path / "b" / "IRIS").exists()


def test_beside_another_io_manager_in_one_definitions(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    @asset(io_manager_key="warehouse_io_manager")
    def iris_dataset() -> pd.DataFrame:
        return pd.DataFrame(ROWS)

    @asset(io_manager_key="blob_io_manager")
    def iris_plots(iris_dataset: pd.DataFrame) -> dict[str, int]:
        seen["rows"] = len(iris_dataset)
        return {"points": len(iris_dataset)}

    defs = Definitions(
        assets=[iris_dataset, iris_plots],
        resources={
            "warehouse_io_manager": DeltaLakePandasIOManager(root_uri=str(tmp_path / "lake"), storage_options=LocalConfig(), schema="iris"),
            "blob_io_manager": FilesystemIOManager(base_dir=str(tmp_path / "blobs")),
        },
    )
    job = defs.resolve_implicit_global_asset_job_def()
    assert job.execute_in_process().success
    assert seen["rows"] == 3
    assert (tmp_path / "lake" / "iris" / "iris_dataset" / "_delta_log").is_dir()
    assert (tmp_path / "blobs" / "iris_plots").is_file() and not (tmp_path / "lake" / "iris" / "iris_plots").exists()


def test_unsupported_type_names_the_handled_types(tmp_path: Path) -> None:
    @asset
    def text() -> str:
        return "not a table"

    io = DeltaLakePyArrowIOManager(root_uri=str(tmp_path), storage_options=LocalConfig())
    with pytest.raises(ConfigurationError, match="pyarrow.*Table"):
        materialize([text], resources={"io_manager": io})


def test_missing_upstream_table_is_a_clear_error(tmp_path: Path) -> None:
    @asset
    def upstream() -> pa.Table:
        return pa.table(ROWS)

    @asset
    def downstream(upstream: pa.Table) -> None:
        pass

    io = DeltaLakePyArrowIOManager(root_uri=str(tmp_path), storage_options=LocalConfig())
    with pytest.raises(Exception, match="materialize the upstream asset first"):
        materialize([upstream.to_source_assets()[0], downstream], resources={"io_manager": io})  # type: ignore[attr-defined]

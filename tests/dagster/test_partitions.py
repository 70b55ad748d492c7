"""Partitioned assets on the Delta Lake I/O manager, through the Arrow (pandas) and Spark planes: static,
time-window, multi and dynamic partitions. Each case materializes two partitions, re-materializes one,
and checks the other is untouched, the rewrite was one commit, and loading reads only the partition's files."""

# no `from __future__ import annotations`: Dagster reads the assets' type annotations at definition time

import datetime as dt
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from dagster import (
    AssetExecutionContext,
    DagsterInstance,
    DailyPartitionsDefinition,
    DynamicPartitionsDefinition,
    MultiPartitionKey,
    MultiPartitionsDefinition,
    StaticPartitionsDefinition,
    asset,
    materialize,
)
from deltalake import DeltaTable

from lakeload.dagster import DeltaLakeIOManager, LocalConfig
from lakeload.errors import ConfigurationError

UTC = dt.timezone.utc
INJECTION = "x' OR '1'='1"


def _frame(plane: str, rows: list[dict[str, Any]], spark: Any) -> Any:
    frame = pd.DataFrame(rows)
    return frame if plane == "arrow" else spark.createDataFrame(frame)


def _spark(plane: str, request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue("spark") if plane == "spark" else None


def _io(root: Path) -> DeltaLakeIOManager:
    return DeltaLakeIOManager(root_uri=str(root), storage_options=LocalConfig(), schema="lake")


def _stored(root: Path, table: str) -> list[tuple[Any, ...]]:
    rows = DeltaTable(str(root / "lake" / table)).to_pyarrow_table().to_pylist()
    return sorted(tuple(r.values()) for r in rows)


def _check_one_commit_and_pruned_reads(root: Path, table: str, load: Any, partition_dirs: list[str], expected: Any) -> None:
    """The re-materialization was one commit, and loading the partition never opens another partition's files."""
    delta = DeltaTable(str(root / "lake" / table))
    last = delta.history(1)[0]
    assert last["version"] == delta.version() and delta.version() == 2  # create, second partition, rewrite
    for uri in delta.file_uris():
        if not any(f"/{d}" in uri for d in partition_dirs):
            Path(uri).write_bytes(b"not parquet")  # any read of another partition's file would fail
    assert load() == expected


def _load(io: DeltaLakeIOManager, upstream: Any, partition_key: Any, plane: str, instance: Any = None) -> Any:
    from pyspark.sql import DataFrame

    seen: dict[str, Any] = {}
    load_type = pd.DataFrame if plane == "arrow" else DataFrame

    @asset(partitions_def=upstream.partitions_def, ins={"data": _asset_in(upstream)})
    def downstream(data: load_type) -> None:  # type: ignore[valid-type]
        rows = data.to_dict("records") if plane == "arrow" else [r.asDict() for r in data.collect()]
        seen["rows"] = sorted(tuple(_plain(v) for v in r.values()) for r in rows)

    result = materialize([upstream.to_source_asset(), downstream], partition_key=partition_key,
                         resources={"io_manager": io}, instance=instance)
    assert result.success
    return seen["rows"]


def _asset_in(upstream: Any) -> Any:
    from dagster import AssetIn

    return AssetIn(key=upstream.key)


def _plain(value: Any) -> Any:
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None) if value.tzinfo is None else value.astimezone(UTC).replace(tzinfo=None)
    return value


@pytest.mark.parametrize("plane", ["arrow", "spark"])
def test_static_partitions(tmp_path: Path, plane: str, request: pytest.FixtureRequest) -> None:
    spark = _spark(plane, request)
    runs = {"n": 0}
    species = StaticPartitionsDefinition(["Iris-setosa", "Iris-virginica", INJECTION])

    @asset(partitions_def=species, metadata={"partition_expr": "species"})
    def iris_by_species(context: AssetExecutionContext) -> Any:
        runs["n"] += 1
        return _frame(plane, [{"species": context.partition_key, "run": runs["n"]}] * 2, spark)

    io = _io(tmp_path)
    for key in ["Iris-setosa", INJECTION, "Iris-setosa"]:
        assert materialize([iris_by_species], partition_key=key, resources={"io_manager": io}).success
    assert _stored(tmp_path, "iris_by_species") == sorted([("Iris-setosa", 3)] * 2 + [(INJECTION, 2)] * 2)
    assert DeltaTable(str(tmp_path / "lake" / "iris_by_species")).metadata().partition_columns == ["species"]
    # the injection partition reads as just its value: no other row comes with it
    _check_one_commit_and_pruned_reads(
        tmp_path, "iris_by_species", lambda: _load(io, iris_by_species, INJECTION, plane),
        ["species=x%27%20OR%20%271%27%3D%271"], [(INJECTION, 2)] * 2,
    )


@pytest.mark.parametrize("plane", ["arrow", "spark"])
def test_time_window_partitions(tmp_path: Path, plane: str, request: pytest.FixtureRequest) -> None:
    spark = _spark(plane, request)
    runs = {"n": 0}
    daily = DailyPartitionsDefinition(start_date="2023-01-01")

    @asset(partitions_def=daily, metadata={"partition_expr": "time"})
    def iris_daily(context: AssetExecutionContext) -> Any:
        runs["n"] += 1
        start = context.partition_time_window.start.astimezone(UTC)
        rows = [{"time": start + dt.timedelta(hours=h), "run": runs["n"]} for h in (0, 23)]
        return _frame(plane, rows, spark)

    io = _io(tmp_path)
    for key in ["2023-01-01", "2023-01-02", "2023-01-01"]:
        assert materialize([iris_daily], partition_key=key, resources={"io_manager": io}).success
    day = dt.datetime(2023, 1, 1)
    expected_first = [(day, 3), (day + dt.timedelta(hours=23), 3)]
    second = [(day + dt.timedelta(days=1), 2), (day + dt.timedelta(days=1, hours=23), 2)]
    assert [(_plain(t), r) for t, r in _stored(tmp_path, "iris_daily")] == sorted(expected_first + second)
    assert DeltaTable(str(tmp_path / "lake" / "iris_daily")).metadata().partition_columns == ["time"]
    _check_one_commit_and_pruned_reads(
        tmp_path, "iris_daily", lambda: _load(io, iris_daily, "2023-01-02", plane), ["time=2023-01-02"], second,
    )


@pytest.mark.parametrize("plane", ["arrow", "spark"])
def test_multi_partitions(tmp_path: Path, plane: str, request: pytest.FixtureRequest) -> None:
    spark = _spark(plane, request)
    runs = {"n": 0}
    multi = MultiPartitionsDefinition({
        "date": DailyPartitionsDefinition(start_date="2023-01-01"),
        "species": StaticPartitionsDefinition(["Iris-setosa", "Iris-virginica"]),
    })

    @asset(partitions_def=multi, metadata={"partition_expr": {"date": "time", "species": "species"}})
    def iris_multi(context: AssetExecutionContext) -> Any:
        runs["n"] += 1
        keys = context.partition_key.keys_by_dimension
        time = dt.datetime.fromisoformat(keys["date"]).replace(tzinfo=UTC)
        return _frame(plane, [{"time": time, "species": keys["species"], "run": runs["n"]}], spark)

    io = _io(tmp_path)
    first = MultiPartitionKey({"date": "2023-01-02", "species": "Iris-setosa"})
    other = MultiPartitionKey({"date": "2023-01-02", "species": "Iris-virginica"})
    for key in [first, other, first]:
        assert materialize([iris_multi], partition_key=key, resources={"io_manager": io}).success
    day = dt.datetime(2023, 1, 2)
    assert [(_plain(t), s, r) for t, s, r in _stored(tmp_path, "iris_multi")] == [
        (day, "Iris-setosa", 3), (day, "Iris-virginica", 2)]
    assert DeltaTable(str(tmp_path / "lake" / "iris_multi")).metadata().partition_columns == ["time", "species"]
    _check_one_commit_and_pruned_reads(
        tmp_path, "iris_multi", lambda: _load(io, iris_multi, other, plane), ["species=Iris-virginica"],
        [(day, "Iris-virginica", 2)],
    )


@pytest.mark.parametrize("plane", ["arrow", "spark"])
def test_dynamic_partitions(tmp_path: Path, plane: str, request: pytest.FixtureRequest) -> None:
    spark = _spark(plane, request)
    runs = {"n": 0}
    fruits = DynamicPartitionsDefinition(name="fruits")
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("fruits", ["apple", "pear"])

    @asset(partitions_def=fruits, metadata={"partition_expr": "fruit"})
    def fruit_stock(context: AssetExecutionContext) -> Any:
        runs["n"] += 1
        return _frame(plane, [{"fruit": context.partition_key, "run": runs["n"]}], spark)

    io = _io(tmp_path)
    for key in ["apple", "pear", "apple"]:
        assert materialize([fruit_stock], partition_key=key, resources={"io_manager": io}, instance=instance).success
    assert _stored(tmp_path, "fruit_stock") == [("apple", 3), ("pear", 2)]
    _check_one_commit_and_pruned_reads(
        tmp_path, "fruit_stock", lambda: _load(io, fruit_stock, "pear", plane, instance), ["fruit=pear"], [("pear", 2)],
    )


@pytest.mark.parametrize("plane", ["arrow", "spark"])
def test_rows_outside_the_partition_are_refused(tmp_path: Path, plane: str, request: pytest.FixtureRequest) -> None:
    spark = _spark(plane, request)
    species = StaticPartitionsDefinition(["a", "b"])

    @asset(partitions_def=species, metadata={"partition_expr": "species"})
    def mixed(context: AssetExecutionContext) -> Any:
        return _frame(plane, [{"species": "a", "v": 1}, {"species": "b", "v": 2}], spark)

    with pytest.raises(ConfigurationError, match="outside the partition"):
        materialize([mixed], partition_key="a", resources={"io_manager": _io(tmp_path)})
    folder = tmp_path / "lake" / "mixed"
    assert not (folder / "_delta_log").exists() or DeltaTable(str(folder)).to_pyarrow_table().num_rows == 0
    assert not list(folder.rglob("*.parquet"))  # the files the executors wrote were removed


def test_partitioned_asset_without_partition_expr_is_a_clear_error(tmp_path: Path) -> None:
    species = StaticPartitionsDefinition(["a"])

    @asset(partitions_def=species)
    def no_expr() -> pd.DataFrame:
        return pd.DataFrame({"species": ["a"]})

    with pytest.raises(ConfigurationError, match="partition_expr"):
        materialize([no_expr], partition_key="a", resources={"io_manager": _io(tmp_path)})


def test_unpartitioned_downstream_reads_every_static_partition(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}
    species = StaticPartitionsDefinition(["a", "b", "c"])

    @asset(partitions_def=species, metadata={"partition_expr": "species"})
    def counts(context: AssetExecutionContext) -> pd.DataFrame:
        return pd.DataFrame({"species": [context.partition_key], "n": [len(context.partition_key)]})

    @asset
    def total(counts: pd.DataFrame) -> None:
        seen["species"] = sorted(counts["species"])

    io = _io(tmp_path)
    for key in ["a", "c"]:
        assert materialize([counts], partition_key=key, resources={"io_manager": io}).success
    assert materialize([counts.to_source_asset(), total], resources={"io_manager": io}).success
    assert seen["species"] == ["a", "c"]

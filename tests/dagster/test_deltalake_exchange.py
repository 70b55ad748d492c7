"""lakeload's Delta Lake I/O manager beside the real dagster-deltalake: each reads the tables and partitions
the other wrote, each overwrites the other's, and a materialization records dagster-deltalake's metadata
keys with the same value types (and the same values, all of its keys being deterministic here).

dagster-deltalake-pandas pins pandas < 3, so it is not a test dependency: its pandas handler is
`pa.Table.from_pandas(frame)` over dagster-deltalake's Arrow handler, which is what the pandas case runs.
"""

# no `from __future__ import annotations`: Dagster reads the assets' type annotations at definition time

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster_deltalake as ddl
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from dagster import (
    DailyPartitionsDefinition,
    MetadataValue,
    StaticPartitionsDefinition,
    asset,
    materialize,
)
from dagster_deltalake_polars import DeltaLakePolarsIOManager as DdlPolarsIOManager
from deltalake import DeltaTable

from lakeload.dagster import DeltaLakeIOManager, LocalConfig

ROWS = [{"id": 1, "name": "a", "size": 1.5}, {"id": 2, "name": "b", "size": None}, {"id": 3, "name": "c", "size": 2.0}]
DDL_KEYS = {"table_columns", "table_uri", "Query", "dagster/table_name"}  # what dagster-deltalake records here
RETURNS: dict[str, Any] = {}  # what the asset being materialized returns


def _lakeload(root: Path) -> DeltaLakeIOManager:
    return DeltaLakeIOManager(root_uri=str(root), storage_options=LocalConfig())


def _ddl(root: Path, kind: str = "pyarrow") -> Any:
    factory = DdlPolarsIOManager if kind == "polars" else ddl.DeltaLakePyarrowIOManager
    return factory(root_uri=str(root), storage_options=ddl.LocalConfig())


def _plain(value: Any) -> Any:
    return None if isinstance(value, float) and value != value else value  # pandas' NaN for a null double


def _rows(obj: Any) -> list[tuple[Any, ...]]:
    """Any loaded frame as sorted row tuples (columns in the table's order)."""
    if isinstance(obj, pa.Table):
        records = obj.to_pylist()
    elif isinstance(obj, pl.DataFrame):
        records = obj.to_dicts()
    elif isinstance(obj, pd.DataFrame):
        records = obj.to_dict("records")
    else:
        records = [r.asDict() for r in obj.collect()]
    return sorted((tuple(_plain(v) for v in r.values()) for r in records), key=repr)


def _write(target: Any, io: Any, value: Any, partition_key: str | None = None) -> dict[str, Any]:
    """Materialize `target` returning `value` with `io`; the materialization's metadata (MetadataValues)."""
    RETURNS["value"] = value
    result = materialize([target], resources={"io_manager": io}, partition_key=partition_key)
    assert result.success
    events = [e for e in result.get_asset_materialization_events() if e.asset_key == target.key]
    return dict(events[-1].materialization.metadata)


def _read(upstream: Any, io: Any, load_type: Any, partition_key: str | None = None) -> list[tuple[Any, ...]]:
    """Load `upstream` (a partition of it) with `io` as `load_type`, as a downstream asset does."""
    from dagster import AssetIn

    seen: dict[str, Any] = {}

    @asset(partitions_def=upstream.partitions_def, ins={"data": AssetIn(key=upstream.key)})
    def downstream(data: load_type) -> None:  # type: ignore[valid-type]
        seen["rows"] = _rows(data)

    result = materialize([upstream.to_source_asset(), downstream], partition_key=partition_key,
                         resources={"io_manager": io})
    assert result.success
    return seen["rows"]


def _check_metadata(ddl_meta: dict[str, Any], lakeload_meta: dict[str, Any], table: DeltaTable,
                    files: Callable[[dict[str, Any]], bool] = lambda a: True) -> None:
    """lakeload records every key dagster-deltalake records, with the same value type and value; its
    `num_rows` and `size_bytes` are those of the written slice's files."""
    assert set(ddl_meta) >= DDL_KEYS, sorted(ddl_meta)
    for key, value in ddl_meta.items():
        assert type(lakeload_meta[key]) is type(value), (key, lakeload_meta[key], value)
        assert lakeload_meta[key].value == value.value, (key, lakeload_meta[key], value)
    actions = [a for a in pa.table(table.get_add_actions(flatten=True)).to_pylist() if files(a)]
    assert lakeload_meta["num_rows"] == MetadataValue.int(sum(a["num_records"] for a in actions))
    assert lakeload_meta["size_bytes"] == MetadataValue.int(sum(a["size_bytes"] for a in actions))
    assert lakeload_meta["dagster/table_name"].value.startswith("deltalake.")


def _pandas_case() -> tuple[Any, Any, Any, Any, str]:
    frame = pd.DataFrame(ROWS)
    return pa.Table.from_pandas(frame), pa.Table, frame, pd.DataFrame, "pyarrow"


CASES: dict[str, Callable[[], tuple[Any, Any, Any, Any, str]]] = {
    # (dagster-deltalake's value, its load type, lakeload's value, its load type, dagster-deltalake's I/O manager)
    "pyarrow": lambda: (pa.Table.from_pylist(ROWS), pa.Table, pa.Table.from_pylist(ROWS), pa.Table, "pyarrow"),
    "pandas": _pandas_case,
    "polars": lambda: (pl.DataFrame(ROWS), pl.DataFrame, pl.DataFrame(ROWS), pl.DataFrame, "polars"),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_unpartitioned_tables_exchange_and_metadata_keys_match(tmp_path: Path, kind: str) -> None:
    ddl_value, ddl_type, lakeload_value, lakeload_type, ddl_kind = CASES[kind]()
    expected = _rows(pa.Table.from_pylist(ROWS))

    @asset(key_prefix="iris")
    def iris_dataset() -> Any:
        return RETURNS["value"]

    ddl_io, lakeload_io = _ddl(tmp_path, ddl_kind), _lakeload(tmp_path)
    ddl_meta = _write(iris_dataset, ddl_io, ddl_value)
    assert _read(iris_dataset, lakeload_io, lakeload_type) == expected  # lakeload reads dagster-deltalake's table
    lakeload_meta = _write(iris_dataset, lakeload_io, lakeload_value)  # and overwrites it
    assert _read(iris_dataset, ddl_io, ddl_type) == expected  # dagster-deltalake reads lakeload's table
    table = DeltaTable(str(tmp_path / "iris" / "iris_dataset"))
    assert table.version() == 1
    _check_metadata(ddl_meta, lakeload_meta, table)
    assert lakeload_meta["table_uri"] == MetadataValue.text(str(tmp_path / "iris" / "iris_dataset"))
    assert lakeload_meta["dagster/table_name"] == MetadataValue.text("deltalake.iris.iris_dataset")
    assert lakeload_meta["num_rows"] == MetadataValue.int(3)
    assert [c.name for c in lakeload_meta["table_columns"].value.columns] == ["id", "name", "size"]
    ddl_meta = _write(iris_dataset, ddl_io, ddl_value)  # dagster-deltalake overwrites lakeload's table
    assert _read(iris_dataset, lakeload_io, lakeload_type) == expected


def _partitioned(kind: str) -> tuple[Any, list[str], Callable[[str], list[dict[str, Any]]], str]:
    """(the asset, its two partition keys, the rows of a partition, its Hive folder prefix)."""
    if kind == "static":
        partitions: Any = StaticPartitionsDefinition(["setosa", "virginica"])
        column = "species"

        def rows(key: str) -> list[dict[str, Any]]:
            return [{"species": key, "n": i} for i in range(3)]
    else:
        # a date column: dagster-deltalake's reads of a time window compare a naive datetime with the column,
        # which pyarrow refuses for a timestamp with time zone (and Delta's timestamp_ntz it does not handle)
        partitions = DailyPartitionsDefinition(start_date="2023-01-01")
        column = "day"

        def rows(key: str) -> list[dict[str, Any]]:
            return [{"day": dt.date.fromisoformat(key), "n": i} for i in range(3)]

    @asset(key_prefix="lake", partitions_def=partitions, metadata={"partition_expr": column})
    def iris_parts() -> Any:
        return RETURNS["value"]

    keys = ["setosa", "virginica"] if kind == "static" else ["2023-01-01", "2023-01-02"]
    return iris_parts, keys, rows, column


@pytest.mark.parametrize(("kind", "plane", "first"), [
    ("static", "arrow", "dagster-deltalake"), ("daily", "arrow", "lakeload"),
    ("static", "spark", "lakeload"), ("daily", "spark", "dagster-deltalake"),
])
def test_partitions_exchange_and_metadata_keys_match(tmp_path: Path, kind: str, plane: str, first: str,
                                                     request: pytest.FixtureRequest) -> None:
    """`first` creates the table with one partition, the other tool adds the second; each reads both, then
    each overwrites a partition the other wrote."""
    from pyspark.sql import DataFrame

    spark = request.getfixturevalue("spark") if plane == "spark" else None
    target, (one, two), rows, column = _partitioned(kind)
    ddl_io, lakeload_io = _ddl(tmp_path), _lakeload(tmp_path)
    load_type = pa.Table if spark is None else DataFrame
    second = "lakeload" if first == "dagster-deltalake" else "dagster-deltalake"

    def data(key: str, writer: str) -> pa.Table:  # each writer writes other values, to tell whose rows are read
        return pa.Table.from_pylist([{**r, "n": r["n"] + (10 if writer == "lakeload" else 0)} for r in rows(key)])

    def write(key: str, writer: str) -> dict[str, Any]:
        value: Any = data(key, writer)
        if writer == "lakeload" and spark is not None:
            value = spark.createDataFrame(value.to_pandas())
        return _write(target, lakeload_io if writer == "lakeload" else ddl_io, value, key)

    write(one, first)  # creates the table, partitioned by the partition column
    write(two, second)
    for key, writer in [(one, first), (two, second)]:
        assert _read(target, lakeload_io, load_type, key) == _rows(data(key, writer))
        assert _read(target, ddl_io, pa.Table, key) == _rows(data(key, writer))
    # each overwrites a partition the other wrote; the same partition written by each records the same metadata
    ddl_meta = write(one, "dagster-deltalake")
    lakeload_meta = write(one, "lakeload")
    write(two, first)
    table = DeltaTable(str(tmp_path / "lake" / "iris_parts"))
    assert table.metadata().partition_columns == [column]
    assert _rows(table.to_pyarrow_table()) == sorted(_rows(data(one, "lakeload")) + _rows(data(two, first)), key=repr)
    assert _read(target, ddl_io, pa.Table, one) == _rows(data(one, "lakeload"))
    assert _read(target, lakeload_io, load_type, two) == _rows(data(two, first))
    _check_metadata(ddl_meta, lakeload_meta, table, lambda a: str(a[f"partition.{column}"]).startswith(one))
    assert lakeload_meta["num_rows"] == MetadataValue.int(3)
    assert lakeload_meta["dagster/table_name"] == MetadataValue.text("deltalake.lake.iris_parts")

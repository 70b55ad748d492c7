"""`table_slice`: which table and which rows a Dagster output or input stands for, from contexts built with
Dagster's own `build_output_context` / `build_input_context` (no Spark, no I/O)."""

from __future__ import annotations

import datetime as dt

import pytest
from dagster import (
    AssetKey,
    DailyPartitionsDefinition,
    MultiPartitionKey,
    MultiPartitionsDefinition,
    PartitionKeyRange,
    StaticPartitionsDefinition,
    build_input_context,
    build_output_context,
)

from lakeload.dagster.slices import PartitionSlice, TableSlice, table_slice
from lakeload.errors import ConfigurationError

UTC = dt.timezone.utc
DAILY = DailyPartitionsDefinition(start_date="2023-01-01")
SPECIES = StaticPartitionsDefinition(["a", "b", "c"])
MULTI = MultiPartitionsDefinition({"date": DAILY, "species": SPECIES})


@pytest.mark.parametrize(("key", "configured", "expected"), [
    (["iris", "iris_dataset"], None, ("iris", "iris_dataset")),
    (["lake", "iris", "iris_dataset"], None, ("iris", "iris_dataset")),
    (["iris_dataset"], None, ("public", "iris_dataset")),
    (["iris_dataset"], "warehouse", ("warehouse", "iris_dataset")),
])
def test_schema_and_table_from_asset_key(key: list[str], configured: str | None, expected: tuple[str, str]) -> None:
    context = build_output_context(asset_key=key)
    result = table_slice(context, context, configured)
    assert (result.schema, result.table) == expected
    assert result == TableSlice(*expected) and result.name == ".".join(expected)


def test_schema_given_twice() -> None:
    context = build_output_context(asset_key=["iris", "iris_dataset"])
    with pytest.raises(ConfigurationError) as info:
        table_slice(context, context, "warehouse")
    assert "'warehouse'" in str(info.value) and "'iris'" in str(info.value)


def test_input_columns() -> None:
    upstream = build_output_context(asset_key=["iris", "iris_dataset"])
    context = build_input_context(asset_key=AssetKey(["iris", "iris_dataset"]), upstream_output=upstream,
                                  definition_metadata={"columns": ["sepal_length", "species"]})
    assert table_slice(context, upstream, None) == TableSlice("iris", "iris_dataset", ("sepal_length", "species"))


@pytest.mark.parametrize("columns", ["species", [1, 2], ["a", None]])
def test_columns_must_be_a_list_of_names(columns: object) -> None:
    upstream = build_output_context(asset_key=["iris", "iris_dataset"])
    context = build_input_context(asset_key=AssetKey(["iris", "iris_dataset"]), upstream_output=upstream,
                                  definition_metadata={"columns": columns})
    with pytest.raises(ConfigurationError, match="columns"):
        table_slice(context, upstream, None)


# Some failures are reported with pytest.fail(..., pytrace=False): pytest renders a long traceback by parsing
# library sources, which on this CPython 3.11.7 can leave the parser's recursion counter off and make a later
# import fail with "SystemError: AST constructor recursion depth mismatch".
def test_columns_number_is_a_configuration_error() -> None:
    upstream = build_output_context(asset_key=["iris", "iris_dataset"])
    context = build_input_context(asset_key=AssetKey(["iris", "iris_dataset"]), upstream_output=upstream,
                                  definition_metadata={"columns": 5})
    try:
        table_slice(context, upstream, None)
    except ConfigurationError as exc:
        assert "columns" in str(exc)
    except TypeError as exc:
        pytest.fail(f"TypeError: {exc}", pytrace=False)
    else:
        pytest.fail("no error", pytrace=False)


def test_op_output_without_asset_key() -> None:
    context = build_output_context(name="result")
    assert table_slice(context, context, None) == TableSlice("public", "result")
    assert table_slice(context, context, "warehouse") == TableSlice("warehouse", "result")
    named = build_output_context(name="result", definition_metadata={"table": "scores"})
    assert table_slice(named, named, None) == TableSlice("public", "scores")


def test_static_partition() -> None:
    context = build_output_context(asset_key=["iris", "iris_dataset"], partition_key="b", asset_partitions_def=SPECIES,
                                   definition_metadata={"partition_expr": "species"})
    result = table_slice(context, context, None)
    assert result.partitions == (PartitionSlice("species", keys=("b",)),)
    assert not result.partitions[0].is_window and result.partition_columns == ["species"]


def test_daily_partition_window() -> None:
    context = build_output_context(asset_key=["events"], partition_key="2023-01-02", asset_partitions_def=DAILY,
                                   definition_metadata={"partition_expr": "ts"})
    (part,) = table_slice(context, context, None).partitions
    assert part.is_window and part.column == "ts"
    assert (part.start, part.end) == (dt.datetime(2023, 1, 2, tzinfo=UTC), dt.datetime(2023, 1, 3, tzinfo=UTC))
    assert part.start is not None and part.start.utcoffset() == dt.timedelta(0)


def test_input_over_a_range_of_daily_partitions() -> None:
    upstream = build_output_context(asset_key=["events"], definition_metadata={"partition_expr": "ts"})
    context = build_input_context(asset_key=AssetKey(["events"]), upstream_output=upstream, asset_partitions_def=DAILY,
                                  asset_partition_key_range=PartitionKeyRange("2023-01-02", "2023-01-04"))
    (part,) = table_slice(context, upstream, None).partitions
    assert (part.start, part.end) == (dt.datetime(2023, 1, 2, tzinfo=UTC), dt.datetime(2023, 1, 5, tzinfo=UTC))


def test_input_over_a_range_of_static_partitions() -> None:
    upstream = build_output_context(asset_key=["iris"], definition_metadata={"partition_expr": "species"})
    context = build_input_context(asset_key=AssetKey(["iris"]), upstream_output=upstream, asset_partitions_def=SPECIES,
                                  asset_partition_key_range=PartitionKeyRange("a", "c"))
    try:
        result = table_slice(context, upstream, None)
    except TypeError as exc:
        pytest.fail(f"TypeError: {exc}", pytrace=False)
    assert result.partitions == (PartitionSlice("species", keys=("a", "b", "c")),)


def test_multi_partitions() -> None:
    context = build_output_context(
        asset_key=["iris", "iris_dataset"], asset_partitions_def=MULTI,
        partition_key=MultiPartitionKey({"date": "2023-01-02", "species": "a"}),
        definition_metadata={"partition_expr": {"date": "ts", "species": "species"}})
    window, species = table_slice(context, context, None).partitions
    assert window == PartitionSlice("ts", start=dt.datetime(2023, 1, 2, tzinfo=UTC),
                                    end=dt.datetime(2023, 1, 3, tzinfo=UTC), fmt="%Y-%m-%d")
    assert species == PartitionSlice("species", keys=("a",))


@pytest.mark.parametrize(("definition", "key", "metadata", "match"), [
    (SPECIES, "a", {}, "partition_expr"),
    (SPECIES, "a", {"partition_expr": ["species"]}, "must name a column"),
    (MULTI, MultiPartitionKey({"date": "2023-01-02", "species": "a"}), {"partition_expr": "ts"}, "dict"),
    (MULTI, MultiPartitionKey({"date": "2023-01-02", "species": "a"}), {"partition_expr": {"date": "ts"}},
     "'species'"),
], ids=["missing", "not-a-name", "multi-string", "multi-missing-dimension"])
def test_partition_expr_errors(definition: object, key: object, metadata: dict[str, object], match: str) -> None:
    context = build_output_context(asset_key=["iris"], asset_partitions_def=definition, partition_key=key,
                                   definition_metadata=metadata)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=match):
        table_slice(context, context, None)

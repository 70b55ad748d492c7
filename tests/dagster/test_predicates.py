"""Table slices as delta-rs SQL predicates, pyarrow filters and checks of partition values, including a key
crafted as SQL injection; checked against pyarrow datasets and real delta-rs tables (no Spark)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from lakeload.dagster.predicates import arrow_filter, contains, quote_identifier, quote_literal, sql_predicate
from lakeload.dagster.slices import PartitionSlice, TableSlice
from lakeload.errors import ConfigurationError

UTC = dt.timezone.utc
NEW_YORK = ZoneInfo("America/New_York")
INJECTION = "x' OR '1'='1"
DAY = PartitionSlice("ts", start=dt.datetime(2023, 1, 2, tzinfo=UTC), end=dt.datetime(2023, 1, 3, tzinfo=UTC))
NY_DAY = PartitionSlice("ts", start=dt.datetime(2023, 1, 2, tzinfo=NEW_YORK), end=dt.datetime(2023, 1, 3, tzinfo=NEW_YORK))


def sliced(*parts: PartitionSlice) -> TableSlice:
    return TableSlice("s", "t", partitions=parts)


def keys(column: str, *values: str) -> PartitionSlice:
    return PartitionSlice(column, keys=values)


def schema(column: str, arrow_type: pa.DataType) -> pa.Schema:
    return pa.schema([(column, arrow_type)])


def test_quoting() -> None:
    assert quote_identifier("species") == '"species"'
    assert quote_identifier('odd"name') == '"odd""name"'
    assert quote_literal("it's") == "'it''s'"
    assert quote_literal(INJECTION) == "'x'' OR ''1''=''1'"


@pytest.mark.parametrize(("arrow_type", "values", "expected"), [
    (pa.string(), ("a", "b"), "\"species\" IN ('a', 'b')"),
    (pa.large_string(), (INJECTION,), "\"species\" IN ('x'' OR ''1''=''1')"),
    (pa.int64(), ("1", "20"), '"species" IN (1, 20)'),
    (pa.int32(), ("-3",), '"species" IN (-3)'),
    (pa.bool_(), ("true", "False"), '"species" IN (true, false)'),
    (pa.date32(), ("2023-01-02",), "\"species\" IN ('2023-01-02')"),
    (pa.timestamp("us", "UTC"), ("2023-01-02",), "\"species\" IN ('2023-01-02T00:00:00+00:00')"),
    (pa.timestamp("us"), ("2023-01-02 05:00:00",), "\"species\" IN ('2023-01-02T05:00:00')"),
])
def test_sql_for_static_keys(arrow_type: pa.DataType, values: tuple[str, ...], expected: str) -> None:
    assert sql_predicate(sliced(keys("species", *values)), schema("species", arrow_type)) == expected


def test_no_partitions_is_the_whole_table() -> None:
    assert sql_predicate(TableSlice("s", "t"), schema("a", pa.int64())) is None
    assert arrow_filter(TableSlice("s", "t"), schema("a", pa.int64())) is None


@pytest.mark.parametrize(("part", "arrow_type", "expected"), [
    (DAY, pa.timestamp("us", "UTC"), "'2023-01-02T00:00:00+00:00' AND \"ts\" < '2023-01-03T00:00:00+00:00'"),
    (NY_DAY, pa.timestamp("us", "America/New_York"),
     "'2023-01-02T05:00:00+00:00' AND \"ts\" < '2023-01-03T05:00:00+00:00'"),  # UTC instants
    (NY_DAY, pa.timestamp("us"), "'2023-01-02T00:00:00' AND \"ts\" < '2023-01-03T00:00:00'"),  # wall clock
    (DAY, pa.date32(), "'2023-01-02' AND \"ts\" < '2023-01-03'"),
    (PartitionSlice("ts", start=dt.datetime(2023, 1, 2, 5, tzinfo=UTC), end=dt.datetime(2023, 1, 2, 6, tzinfo=UTC)),
     pa.date32(), "'2023-01-02' AND \"ts\" < '2023-01-03'"),  # an hour: its whole day
    (PartitionSlice("ts", start=dt.datetime(2023, 1, 2, tzinfo=UTC), end=dt.datetime(2023, 1, 4, 12, tzinfo=UTC)),
     pa.date32(), "'2023-01-02' AND \"ts\" < '2023-01-05'"),
    (DAY, pa.string(), "'2023-01-02 00:00:00' AND \"ts\" < '2023-01-03 00:00:00'"),
], ids=["timestamp-utc", "timestamp-tz", "timestamp-naive", "date-midnight", "date-hour", "date-days", "string"])
def test_sql_for_time_windows(part: PartitionSlice, arrow_type: pa.DataType, expected: str) -> None:
    assert sql_predicate(sliced(part), schema("ts", arrow_type)) == '"ts" >= ' + expected


def test_sql_for_two_dimensions() -> None:
    table_schema = pa.schema([("ts", pa.date32()), ("species", pa.string())])
    assert sql_predicate(sliced(DAY, keys("species", "a")), table_schema) == (
        "(\"ts\" >= '2023-01-02' AND \"ts\" < '2023-01-03') AND (\"species\" IN ('a'))")


@pytest.mark.parametrize(("arrow_type", "key"), [
    (pa.int64(), "abc"), (pa.int64(), "1.5"), (pa.bool_(), "maybe"), (pa.date32(), "2023-13-01"),
    (pa.timestamp("us"), "yesterday"), (pa.float64(), "x"),
])
def test_key_not_of_the_column_type(arrow_type: pa.DataType, key: str) -> None:
    for build in (sql_predicate, arrow_filter):
        with pytest.raises(ConfigurationError, match=f"{key!r} is not a value of column 'c'"):
            build(sliced(keys("c", key)), schema("c", arrow_type))


def test_unknown_column_lists_the_columns() -> None:
    table_schema = pa.schema([("species", pa.string()), ("n", pa.int64())])
    for build in (sql_predicate, arrow_filter):
        with pytest.raises(ConfigurationError, match="'kind'.*columns: species, n"):
            build(sliced(keys("kind", "a")), table_schema)


def test_window_on_an_integer_column() -> None:
    with pytest.raises(ConfigurationError, match="'ts' is int64"):
        sql_predicate(sliced(DAY), schema("ts", pa.int64()))


# -- pyarrow filters ----------------------------------------------------------------------------------


TABLE = pa.table({
    "species": ["a", "b", INJECTION, "x"],
    "n": pa.array([1, 2, 3, 4], pa.int64()),
    "ts": pa.array([dt.datetime(2023, 1, 2, 4, 59, tzinfo=UTC), dt.datetime(2023, 1, 2, 5, tzinfo=UTC),
                    dt.datetime(2023, 1, 3, 4, 59, tzinfo=UTC), dt.datetime(2023, 1, 3, 5, tzinfo=UTC)],
                   pa.timestamp("us", "UTC")),
})


def rows(table_slice: TableSlice) -> list[int]:
    return sorted(ds.dataset(TABLE).to_table(filter=arrow_filter(table_slice, TABLE.schema)).column("n").to_pylist())


def test_arrow_filter() -> None:
    assert rows(sliced(keys("species", INJECTION))) == [3]
    assert rows(sliced(keys("species", "a", "b"))) == [1, 2]
    assert rows(sliced(keys("n", "1", "4"))) == [1, 4]
    assert rows(sliced(keys("species"))) == []
    assert rows(sliced(NY_DAY)) == [2, 3]  # 05:00 UTC to 05:00 UTC the next day
    assert rows(sliced(DAY)) == [1, 2]
    assert rows(sliced(NY_DAY, keys("species", "b", "x"))) == [2]


# -- partition values of data files -------------------------------------------------------------------


@pytest.mark.parametrize(("part", "arrow_type", "inside", "outside"), [
    (DAY, pa.timestamp("us", "UTC"), ["2023-01-02 00:00:00.000000", "2023-01-02 23:59:59.999999"],
     ["2023-01-03 00:00:00.000000", "2023-01-01 23:59:59.000000"]),
    (NY_DAY, pa.timestamp("us", "UTC"), ["2023-01-02 05:00:00.000000"], ["2023-01-02 04:59:59.000000"]),
    (NY_DAY, pa.timestamp("us"), ["2023-01-02 00:00:00.000000"], ["2023-01-03 00:00:00.000000"]),
    (DAY, pa.date32(), ["2023-01-02"], ["2023-01-03", "2023-01-01"]),
    (keys("c", "1", "2"), pa.int64(), ["1", "2"], ["3", "10"]),
    (keys("c", INJECTION), pa.string(), [INJECTION], ["x", "1"]),
    (keys("c", "true"), pa.bool_(), ["true"], ["false"]),
])
def test_contains(part: PartitionSlice, arrow_type: pa.DataType, inside: list[str], outside: list[str]) -> None:
    table_slice = sliced(part)
    table_schema = schema(part.column, arrow_type)
    assert all(contains(table_slice, table_schema, {part.column: value}) for value in inside)
    assert not any(contains(table_slice, table_schema, {part.column: value}) for value in outside)
    assert not contains(table_slice, table_schema, {part.column: None})
    assert not contains(table_slice, table_schema, {})


def test_contains_two_dimensions() -> None:
    table_slice = sliced(DAY, keys("species", "a"))
    table_schema = pa.schema([("ts", pa.date32()), ("species", pa.string())])
    assert contains(table_slice, table_schema, {"ts": "2023-01-02", "species": "a"})
    assert not contains(table_slice, table_schema, {"ts": "2023-01-02", "species": "b"})
    assert not contains(table_slice, table_schema, {"ts": "2023-01-03", "species": "a"})
    assert contains(TableSlice("s", "t"), table_schema, {})


# -- real delta-rs ------------------------------------------------------------------------------------


def test_delta_rs_prunes_and_overwrites_the_partition_of_an_injection_key(tmp_path: Path) -> None:
    from deltalake import DeltaTable, write_deltalake

    uri = str(tmp_path / "t")
    data = pa.table({"species": ["a", "b", INJECTION, "a"], "n": pa.array([1, 2, 3, 4], pa.int64())})
    write_deltalake(uri, data, partition_by=["species"])
    predicate = sql_predicate(sliced(keys("species", INJECTION)), data.schema)
    assert predicate is not None

    files = DeltaTable(uri).file_uris(file_pruning_predicate=predicate)
    assert len(files) == 1 and len(DeltaTable(uri).file_uris()) == 3
    assert pq.read_table(files[0]).column("n").to_pylist() == [3]  # the file of that partition only

    write_deltalake(uri, pa.table({"species": [INJECTION], "n": pa.array([99], pa.int64())}), mode="overwrite",
                    predicate=predicate)
    after = DeltaTable(uri).to_pyarrow_table()
    assert sorted(zip(after.column("species").to_pylist(), after.column("n").to_pylist(), strict=True)) == [
        ("a", 1), ("a", 4), ("b", 2), (INJECTION, 99)]


def test_delta_rs_prunes_a_window_of_a_timestamp_partition(tmp_path: Path) -> None:
    from deltalake import DeltaTable, write_deltalake

    uri = str(tmp_path / "t")
    data = TABLE.select(["ts", "n"])
    write_deltalake(uri, data, partition_by=["ts"])
    files = DeltaTable(uri).file_uris(file_pruning_predicate=sql_predicate(sliced(NY_DAY), data.schema))
    assert sorted(pq.read_table(f, columns=["n"]).column("n")[0].as_py() for f in files) == [2, 3]


def test_window_on_a_text_column_uses_the_partition_key_format() -> None:
    """Daily keys stored as text ("2023-01-02") fall inside their own day's window."""
    day = PartitionSlice("day", start=dt.datetime(2023, 1, 2, tzinfo=dt.timezone.utc),
                         end=dt.datetime(2023, 1, 3, tzinfo=dt.timezone.utc), fmt="%Y-%m-%d")
    table = pa.table({"day": ["2023-01-01", "2023-01-02", "2023-01-03"]})
    selected = ds.dataset(table).to_table(filter=arrow_filter(TableSlice("s", "t", partitions=(day,)), table.schema))
    assert selected.column("day").to_pylist() == ["2023-01-02"]
    assert sql_predicate(TableSlice("s", "t", partitions=(day,)), table.schema) == \
        "\"day\" >= '2023-01-02' AND \"day\" < '2023-01-03'"

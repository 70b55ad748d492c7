"""Column types on the DuckDB destination beside dlt 1.31's: every dlt data type, with the precision, scale and
timezone hints dlt's DuckDB destination honours, gives the same DuckDB column type (`information_schema.columns`),
the same type in the stored schema and the same values.

One resource holds every case as a column, so one pipeline run per tool covers them all."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pytest
from duckdb_side_by_side import duckdb_column_types, load_side_by_side, read_duckdb, tree_differences

pytestmark = [pytest.mark.usefixtures("spark")]
UTC = dt.timezone.utc
OFFSET = dt.timezone(dt.timedelta(hours=2))

# column name -> (hint, values of the two records, DuckDB type dlt's DuckDB destination gives it)
CASES: dict[str, tuple[dict[str, Any], tuple[Any, Any], str]] = {
    "dec_hint": ({"data_type": "decimal", "precision": 10, "scale": 3},
                 (decimal.Decimal("1234567.891"), decimal.Decimal("-0.5")), "DECIMAL(10,3)"),
    "dec_precision_only": ({"data_type": "decimal", "precision": 20},
                           (decimal.Decimal("12.123456789"), decimal.Decimal("7")), "DECIMAL(20,9)"),
    "dec_default": ({"data_type": "decimal"}, (decimal.Decimal("1.123456789"), decimal.Decimal("-99999.5")),
                    "DECIMAL(38,9)"),
    "dec_inferred": ({}, (decimal.Decimal("3.25"), None), "DECIMAL(38,9)"),
    "wei": ({"data_type": "wei"}, (decimal.Decimal(2**100), decimal.Decimal(10**37)), "DECIMAL(38,0)"),
    "ts": ({"data_type": "timestamp"}, (dt.datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=OFFSET), "2024-05-02T11:30:00Z"),
           "TIMESTAMP WITH TIME ZONE"),
    "ts_inferred": ({}, (dt.datetime(2024, 5, 1, 8, 0, tzinfo=UTC), None), "TIMESTAMP WITH TIME ZONE"),
    "ts_tz_p3": ({"data_type": "timestamp", "precision": 3}, (dt.datetime(2024, 5, 1, 8, 0, 0, 123456, tzinfo=UTC), None),
                 "TIMESTAMP WITH TIME ZONE"),
    "ts_naive": ({"data_type": "timestamp", "timezone": False},
                 (dt.datetime(2024, 5, 1, 10, 0, 0, 123456), dt.datetime(2024, 5, 1, 10, 0, tzinfo=OFFSET)), "TIMESTAMP"),
    **{f"ts_naive_p{p}": ({"data_type": "timestamp", "timezone": False, "precision": p},
                          (dt.datetime(2024, 5, 1, 10, 0, 1, 987654), None), kind)
       for p, kind in ((0, "TIMESTAMP_S"), (3, "TIMESTAMP_MS"), (6, "TIMESTAMP"), (9, "TIMESTAMP_NS"))},
    "day": ({"data_type": "date"}, (dt.date(2024, 2, 29), "2024-03-01"), "DATE"),
    "day_inferred": ({}, (dt.date(2024, 2, 29), None), "DATE"),
    "clock": ({"data_type": "time"}, (dt.time(10, 11, 12, 345678), "23:59:59"), "TIME"),
    "doc": ({"data_type": "json"}, ({"a": 1, "b": [1, 2, {"c": None}]}, [1, "x", {"k": True}]), "JSON"),
    "blob": ({"data_type": "binary"}, (b"\x00\xffabc", b"\x00"), "BLOB"),
    "blob_inferred": ({}, (b"\x01\x02", None), "BLOB"),
    "flag": ({"data_type": "bool"}, (True, False), "BOOLEAN"),
    **{f"int_p{p}": ({"data_type": "bigint", "precision": p}, (2 ** (min(p, 64) - 1) - 1, -(2 ** (min(p, 64) - 1))), kind)
       for p, kind in ((8, "TINYINT"), (16, "SMALLINT"), (32, "INTEGER"), (64, "BIGINT"), (128, "HUGEINT"))},
    "int_p5": ({"data_type": "bigint", "precision": 5}, (15, -16), "TINYINT"),
    "number": ({"data_type": "double"}, (1.5, -2.0e-300), "DOUBLE"),
    "words": ({"data_type": "text", "precision": 10}, ("abc", "ünï"), "VARCHAR"),
}


# lakeload's default file format, Parquet, cannot carry what dlt's default (SQL INSERT text) does for these columns: the
# Parquet types follow dlt's Parquet writer (decimal(p, 0) for a precision without scale, the timestamp unit of the
# precision hint; wei, written as decimal256, is read through Arrow as decimal(38, 0): exact, as dlt's). With `loader_file_format="jsonl"` they are dlt's.
PARQUET_DIFFERENCES = {
    "dec_precision_only": "12.123456789 does not fit decimal(20, 0): normalize refuses the package (dlt's Parquet "
                          "writer too); dlt's INSERT keeps it in DECIMAL(20,9)",
    "ts_tz_p3": "dlt ignores the precision of a timestamp with time zone (microseconds kept); Parquet has milliseconds",
    "ts_naive_p0": "Parquet truncates to the unit (10:00:01); DuckDB's cast of dlt's text rounds (10:00:02)",
    "ts_naive_p3": "truncated to .987 in Parquet, rounded to .988 by DuckDB from dlt's text",
}


def runs(lib: Any, skip: tuple[str, ...] = ()) -> list[Any]:
    cases = {name: case for name, case in CASES.items() if name not in skip}
    hints = {name: hint for name, (hint, _, _) in cases.items() if hint}
    records = [{"id": i, **{name: values[i] for name, (_, values, _) in cases.items()}} for i in range(2)]
    return [lib.resource(records, name="types", columns=hints)]


@pytest.fixture(scope="module")
def jsonl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """dlt's default (INSERT statements) beside lakeload's jsonl files."""
    return load_side_by_side(tmp_path_factory.mktemp("types_jsonl"), "types", lambda lib: [runs(lib)], "jsonl")


@pytest.fixture(scope="module")
def parquet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """dlt's default beside lakeload's default (Parquet), without the column Parquet cannot take."""
    work = tmp_path_factory.mktemp("types_parquet")
    return load_side_by_side(work, "types", lambda lib: [runs(lib, skip=("dec_precision_only",))])


def without_values(columns: tuple[str, ...]) -> Any:
    def drop(dataset: Any) -> None:
        for row in dataset.tables["types"].rows:
            for column in columns:
                row.pop(column, None)
    return drop


def test_types_and_values_are_dlts_with_jsonl(jsonl: tuple[Path, Path]) -> None:
    differences = tree_differences(*jsonl, "types")
    assert not differences, "\n".join(differences)


def test_types_and_values_are_dlts_with_parquet(parquet: tuple[Path, Path]) -> None:
    """The same types, and the same values but those `PARQUET_DIFFERENCES` names."""
    differences = tree_differences(*parquet, "types", without_values(tuple(PARQUET_DIFFERENCES)))
    assert not differences, "\n".join(differences)


def test_parquet_values_are_those_of_dlts_parquet(tmp_path: Path) -> None:
    """Beside dlt loading Parquet files too, the timestamp values are dlt's: those differences come with the file
    format, in both tools; `wei` too (lakeload's decimal256 files are read exactly as DuckDB's DECIMAL(38,0))."""
    work = tmp_path / "both_parquet"
    dbs = load_side_by_side(work, "types", lambda lib: [runs(lib, skip=("dec_precision_only",))], dlt_format="parquet")
    differences = tree_differences(*dbs, "types")
    assert not differences, "\n".join(differences)


@pytest.mark.parametrize("column", [c for c in PARQUET_DIFFERENCES if c != "dec_precision_only"])
def test_parquet_values_differ_as_named(column: str, parquet: tuple[Path, Path]) -> None:
    """Each named difference is still there (when one goes, move its column back to the compared ones)."""
    values = [sorted((r["id"], r.get(column)) for r in read_duckdb(db).tables["types"].rows) for db in parquet]
    assert values[0] != values[1], PARQUET_DIFFERENCES[column]


@pytest.mark.parametrize("column", list(CASES))
def test_duckdb_type_of_each_case(column: str, jsonl: tuple[Path, Path]) -> None:
    """Each case's DuckDB type, as dlt's DuckDB destination gives it (so a change in dlt's mapping shows here)."""
    expected = CASES[column][2]
    for db in jsonl:
        found = {name: kind for name, kind, _ in duckdb_column_types(db)["types"]}
        assert found[column] == expected, db.name


def test_parquet_refuses_a_decimal_its_scale_would_cut(tmp_path: Path) -> None:
    """`PARQUET_DIFFERENCES["dec_precision_only"]`: the package is refused, naming the table, column and fix."""
    import lakeload
    from lakeload.errors import DecimalOutOfRangeError

    p = lakeload.pipeline("cut", destination=lakeload.destinations.duckdb(str(tmp_path / "cut.duckdb")),
                          dataset_name="ds", pipelines_dir=str(tmp_path / "p"))
    with pytest.raises(DecimalOutOfRangeError, match=r"`types`, column `dec_precision_only`.*Fix: .*\"scale\""):
        p.run(lakeload.resource([{"id": 0, "dec_precision_only": CASES["dec_precision_only"][1][0]}], name="types",
                                columns={"dec_precision_only": CASES["dec_precision_only"][0]}))


def test_every_hint_combination_maps_as_dlts_type_mapper() -> None:
    """`column_type` beside dlt's own DuckDB type mapper over every data type and a grid of precision, scale and
    timezone hints: the same DuckDB type, or both refuse (e.g. a naive timestamp of precision 10)."""
    from dlt.destinations.impl.duckdb.factory import DuckDbTypeMapper
    from dlt.destinations.impl.duckdb.factory import duckdb as dlt_duckdb

    from lakeload.destinations.impl.duckdb.sql import column_type

    mapper = DuckDbTypeMapper(dlt_duckdb().capabilities())
    mismatches = []
    for data_type in ("text", "double", "bool", "date", "time", "binary", "json", "wei", "decimal", "bigint", "timestamp"):
        for precision in (None, 0, 3, 5, 6, 8, 9, 10, 16, 20, 32, 38, 64, 128, 129):
            for scale in (None, 0, 3):
                for timezone in (None, True, False):
                    column: Any = {"name": "x", "data_type": data_type, "precision": precision, "scale": scale,
                                   "timezone": timezone}
                    column = {k: v for k, v in column.items() if v is not None}
                    found = []
                    for mapping in (lambda c: mapper.to_destination_type(c, {"name": "t"}), column_type):
                        try:
                            found.append(mapping(column))
                        except Exception:  # noqa: BLE001 - either tool refusing is a result to compare
                            found.append("refused")
                    if found[0] != found[1]:
                        mismatches.append((column, *found))
    assert mismatches == []


def test_wei_over_38_digits_is_refused_by_name(tmp_path: Path) -> None:
    """A wei value DuckDB's DECIMAL(38, 0) cannot hold (dlt's Parquet writer stops on it too) fails the load naming
    the table and column, never a DOUBLE with lost digits; the package stays pending."""
    import duckdb

    import lakeload
    from lakeload.errors import DecimalOutOfRangeError

    path = tmp_path / "wide.duckdb"
    p = lakeload.pipeline("wide", destination=lakeload.destinations.duckdb(str(path)), dataset_name="ds",
                          pipelines_dir=str(tmp_path / "p"))
    p.run([{"id": 1, "w": decimal.Decimal(10**37)}], table_name="big", columns={"w": {"data_type": "wei"}})
    with duckdb.connect(str(path), read_only=True) as db:
        assert db.execute("SELECT w FROM ds.big").fetchall() == [(decimal.Decimal(10**37),)]
    with pytest.raises(DecimalOutOfRangeError, match=r"`big`, column `w`"):
        p.run([{"id": 2, "w": decimal.Decimal(10**40)}], table_name="big", columns={"w": {"data_type": "wei"}})
    assert p.list_normalized_load_packages()

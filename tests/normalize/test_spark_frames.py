"""Spark DataFrames are normalized by Spark: the same tables as the same records given as JSON, Spark types kept."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import hashlib
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from harness import canonicalize, diff, read_bucket  # noqa: E402

import lakeload  # noqa: E402

pytestmark = pytest.mark.usefixtures("spark")

RECORDS = [
    {
        "id": 1, "name": "Alice", "score": 1.5, "active": True,
        "address": {"city": "Berlin", "geo": {"lat": 52.5, "lon": 13.4}, "zip": "10115"},
        "pets": [{"name": "Fluffy", "tags": ["cute", "old"], "vet": {"name": "Dr. A"}}, {"name": "Rex", "tags": [], "vet": {"name": "Dr. B"}}],
        "labels": ["a", "b", "c"],
        "matrix": [[1, 2], [3]],
        "+1": 5,
    },
    {
        "id": 2, "name": "Bob", "score": 2.25, "active": False,
        "address": {"city": "Paris", "geo": {"lat": 48.8, "lon": 2.3}, "zip": "75001"},
        "pets": [{"name": "Tweety", "tags": ["bird"], "vet": {"name": "Dr. C"}}],
        "labels": ["x"],
        "matrix": [[4]],
        "+1": 7,
    },
]
DDL = (
    "id long, name string, score double, active boolean, "
    "address struct<city: string, geo: struct<lat: double, lon: double>, zip: string>, "
    "pets array<struct<name: string, tags: array<string>, vet: struct<name: string>>>, "
    "labels array<string>, matrix array<array<long>>, `+1` long"
)


def _frame(spark: Any, records: list[dict[str, Any]], ddl: str) -> Any:
    lines = spark.sparkContext.parallelize([json.dumps(r) for r in records], 2)
    return spark.read.schema(ddl).json(lines)


def _pipeline(tmp_path: Path, name: str, **kwargs: Any) -> lakeload.Pipeline:
    return lakeload.pipeline(
        "frames", destination=lakeload.destinations.filesystem(str(tmp_path / name / "bucket")), dataset_name="ds",
        pipelines_dir=str(tmp_path / name / "pipes"), **kwargs,
    )


def _canonical(tmp_path: Path, name: str) -> dict[str, Any]:
    return canonicalize(read_bucket(tmp_path / name / "bucket", "ds"))


@pytest.mark.parametrize("file_format", ["parquet", "jsonl", "csv"])
def test_frame_builds_the_same_tables_as_json_records(spark: Any, tmp_path: Path, file_format: str) -> None:
    json_info = _pipeline(tmp_path, "from_json").run(RECORDS, table_name="people", loader_file_format=file_format)
    frame_info = _pipeline(tmp_path, "from_frame").run(_frame(spark, RECORDS, DDL), table_name="people", loader_file_format=file_format)
    assert frame_info.row_counts == json_info.row_counts
    assert frame_info.row_counts["people__pets__tags"] == 3 and frame_info.row_counts["people__matrix__list"] == 4
    assert diff(_canonical(tmp_path, "from_json"), _canonical(tmp_path, "from_frame")) == []


def _spark_native_id(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()[:10]).decode().rstrip("=")


def test_frame_ids_of_non_upserted_tables_are_spark_native_hashes(spark: Any, tmp_path: Path) -> None:
    """dlt's ids are random here: Spark hashes (parent id, table, position) natively, no Python UDF."""
    p = _pipeline(tmp_path, "ids")
    p.run(_frame(spark, RECORDS, DDL), table_name="people", loader_file_format="parquet")
    ds = p.dataset()
    people = ds.people.arrow().to_pylist()
    pets = ds("SELECT * FROM people__pets ORDER BY _dlt_list_idx").arrow().to_pylist()
    by_id = {r["_dlt_id"]: r for r in people}
    assert len(by_id) == 2 and all(len(i) == 14 for i in by_id)
    for pet in pets:
        assert pet["_dlt_id"] == _spark_native_id(f"{pet['_dlt_parent_id']}_people__pets_{pet['_dlt_list_idx']}")
        assert pet["_dlt_parent_id"] in by_id


def test_frame_keeps_spark_types(spark: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from pyspark.sql import functions as F

    base = spark.range(3).select(
        F.col("id").cast("int").alias("small"),
        F.col("id").cast("short").alias("tiny"),
        (F.col("id") / 4).cast("decimal(10,2)").alias("price"),
        F.lit(dt.datetime(2026, 1, 2, 3, 4, 5)).cast("timestamp_ntz").alias("local_ts"),
        F.lit(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)).alias("ts"),
        F.lit(dt.date(2026, 1, 2)).alias("day"),
        F.lit(b"\x00\x01").alias("raw"),
        F.create_map(F.lit("k"), F.col("id")).alias("props"),
        F.lit(None).alias("nothing"),
    )
    p = _pipeline(tmp_path, "types")
    with caplog.at_level(logging.WARNING, logger="lakeload.normalize"):
        info = p.run(base, table_name="typed", loader_file_format="parquet")
    assert info.row_counts == {"typed": 3}
    columns = p.default_schema.tables["typed"]["columns"]
    assert columns["small"]["data_type"] == "bigint" and columns["small"]["precision"] == 32
    assert columns["tiny"]["precision"] == 16
    assert (columns["price"]["data_type"], columns["price"]["precision"], columns["price"]["scale"]) == ("decimal", 10, 2)
    assert columns["local_ts"]["data_type"] == "timestamp" and columns["local_ts"]["timezone"] is False
    assert columns["ts"]["data_type"] == "timestamp" and "timezone" not in columns["ts"]
    assert [columns[c]["data_type"] for c in ("day", "raw", "props")] == ["date", "binary", "json"]
    assert "nothing" not in columns and "nothing" in caplog.text
    files = list((tmp_path / "types" / "bucket" / "ds" / "typed").glob("*.parquet"))
    table = pq.read_table(files[0]) if len(files) == 1 else None
    schema = pq.read_schema(files[0])
    assert str(schema.field("small").type) == "int32" and str(schema.field("price").type) == "decimal128(10, 2)"
    assert str(schema.field("local_ts").type) == "timestamp[us]" and str(schema.field("ts").type) == "timestamp[us, tz=UTC]"
    rows = p.dataset()("SELECT small, price, local_ts, props FROM typed ORDER BY small").arrow().to_pylist()
    assert rows[1]["price"] == decimal.Decimal("0.25") and json.loads(rows[1]["props"]) == {"k": 1}
    assert rows[0]["local_ts"] == dt.datetime(2026, 1, 2, 3, 4, 5)
    del table


def test_frame_meets_existing_columns_of_other_types(spark: Any, tmp_path: Path) -> None:
    p = _pipeline(tmp_path, "variants")
    p.run([{"id": 1, "code": 5, "amount": 1.5, "note": "x"}], table_name="t")
    frame = spark.range(2).selectExpr("id", "concat('c', id) as code", "id as amount", "id * 10 as note")
    info = p.run(frame, table_name="t", loader_file_format="parquet")
    assert info.row_counts == {"t": 2}
    columns = p.default_schema.tables["t"]["columns"]
    assert columns["code__v_text"]["variant"] is True  # bigint column, text values: a variant, as dlt does
    assert "amount__v_bigint" not in columns and "note__v_bigint" not in columns  # coerced like dlt coerces
    rows = p.dataset()("SELECT id, code, code__v_text, amount, note FROM t ORDER BY id, code NULLS FIRST").arrow().to_pylist()
    assert rows == [
        {"id": 0, "code": None, "code__v_text": "c0", "amount": 0.0, "note": "0"},
        {"id": 1, "code": None, "code__v_text": "c1", "amount": 1.0, "note": "10"},
        {"id": 1, "code": 5, "code__v_text": None, "amount": 1.5, "note": "x"},
    ]


def test_frames_and_records_in_one_run_fold_in_order(spark: Any, tmp_path: Path) -> None:
    @lakeload.resource(name="mixed")
    def mixed() -> Any:
        yield {"id": 100, "extra": "first"}
        yield spark.range(3).selectExpr("id", "cast(id as string) as label")
        yield spark.range(2).selectExpr("id + 10 as id", "array(id, id) as nums")

    p = _pipeline(tmp_path, "mixed")
    info = p.run(mixed(), loader_file_format="parquet")
    assert info.row_counts == {"mixed": 6, "mixed__nums": 4}
    assert list(p.default_schema.tables["mixed"]["columns"])[:4] == ["id", "extra", "_dlt_load_id", "_dlt_id"]
    assert "label" in p.default_schema.tables["mixed"]["columns"]


def test_frame_nesting_limit_and_json_hints(spark: Any, tmp_path: Path) -> None:
    frame = _frame(spark, RECORDS, DDL)
    p = _pipeline(tmp_path, "nesting")
    p.run(lakeload.resource(frame, name="people", max_table_nesting=1, columns={"address": {"data_type": "json"}}),
          loader_file_format="parquet")
    tables = p.default_schema.tables
    assert tables["people"]["columns"]["address"]["data_type"] == "json"
    assert tables["people__pets"]["columns"]["tags"]["data_type"] == "json"  # level 2: kept whole
    assert "people__pets__tags" not in tables


def test_frame_upsert_into_delta_replaces_nested_rows(spark: Any, tmp_path: Path) -> None:
    pytest.importorskip("deltalake")
    p = _pipeline(tmp_path, "delta_frames")
    hints = dict(table_name="people", write_disposition="merge", primary_key="id", table_format="delta")
    p.run(_frame(spark, RECORDS, DDL), **hints)
    changed = [dict(RECORDS[0], name="Alicia", pets=[{"name": "Solo", "tags": ["one"], "vet": {"name": "Dr. Z"}}])]
    p.run(_frame(spark, changed, DDL), **hints)
    counts = dict(p.dataset().row_counts())
    assert counts["people"] == 2 and counts["people__pets"] == 2 and counts["people__pets__tags"] == 2
    names = sorted(r["name"] for r in p.dataset().people.arrow().to_pylist())
    assert names == ["Alicia", "Bob"]

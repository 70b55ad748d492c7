# ruff: noqa: B008  (an incremental default argument is the API, as in dlt)
"""Incremental loading of Spark DataFrames: filtered by Spark, the cursor from Spark aggregates, no row collected."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from compat.compat_dataset import read_dataset, table_values

import lakeload

pytestmark = pytest.mark.usefixtures("spark")
COLLECTING = ("collect", "toPandas", "toLocalIterator", "toArrow", "take", "head", "first", "tail")


@pytest.fixture
def no_rows_to_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every DataFrame method that brings rows to the driver raises while the test runs."""
    from pyspark.sql import DataFrame

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a DataFrame was collected to the driver")

    for method in COLLECTING:
        monkeypatch.setattr(DataFrame, method, refuse)


def _pipeline(tmp_path: Path) -> Any:
    return lakeload.pipeline("spark_incr", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                             dataset_name="ds", pipelines_dir=str(tmp_path / "pipelines"))


def _state(pipeline: Any, resource: str, cursor: str) -> dict[str, Any]:
    return pipeline.state["sources"]["spark_incr"]["resources"][resource]["incremental"][cursor]  # type: ignore[no-any-return]


@pytest.mark.slow  # ~55 s on 2 cores: the million rows go through normalize and load too
def test_a_million_row_frame_loads_only_new_rows_without_collecting(spark: Any, no_rows_to_driver: None, tmp_path: Path) -> None:
    from pyspark.sql import functions as F  # noqa: N812

    size = {"rows": 1_000_000}

    @lakeload.resource(primary_key="id")
    def big(cursor: Any = lakeload.sources.incremental("id")) -> Any:
        yield spark.range(0, size["rows"]).withColumn("ts", F.timestamp_micros(F.col("id") * 1000))

    pipeline = _pipeline(tmp_path)
    assert pipeline.run(big()).row_counts == {"big": 1_000_000}
    first = dict(_state(pipeline, "big", "id"))
    assert first["last_value"] == 999_999 and len(first["unique_hashes"]) == 1
    size["rows"] = 1_000_010
    assert pipeline.run(big()).row_counts == {"big": 10}
    assert _state(pipeline, "big", "id")["last_value"] == 1_000_009
    assert pipeline.run(big()).row_counts == {}  # the boundary row was loaded: de-duplicated
    assert _state(pipeline, "big", "id")["start_value"] == 999_999  # no rows passed: start_value stays, as dlt


def test_frame_cursor_on_timestamps_matches_arrow(spark: Any, no_rows_to_driver: None, tmp_path: Path) -> None:
    """A Spark DataFrame and the same rows as an Arrow table leave the same rows and state (dlt's Arrow behaviour)."""
    import pyarrow as pa

    start = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    rows = [(i, start + dt.timedelta(hours=i // 2)) for i in range(8)]
    pages = {"upto": 6}

    def make(kind: str) -> Any:
        @lakeload.resource(name=f"events_{kind}", primary_key="id")
        def events(at: Any = lakeload.sources.incremental("at", initial_value=start + dt.timedelta(hours=1))) -> Any:
            part = rows[: pages["upto"]]
            if kind == "arrow":
                yield pa.table({"id": [r[0] for r in part], "at": pa.array([r[1] for r in part], pa.timestamp("us", tz="UTC"))})
            else:
                yield spark.createDataFrame(part, "id long, at timestamp")

        return events()

    pipeline = _pipeline(tmp_path)
    for upto in (6, 8):
        pages["upto"] = upto
        pipeline.run([make("arrow"), make("frame")], loader_file_format="parquet")
    arrow_state, frame_state = _state(pipeline, "events_arrow", "at"), _state(pipeline, "events_frame", "at")
    assert frame_state == arrow_state and arrow_state["last_value"] == start + dt.timedelta(hours=3)
    dataset = read_dataset(tmp_path / "bucket")
    assert dataset is not None and dataset["problems"] == []
    frame, arrow = table_values(dataset, "events_frame"), table_values(dataset, "events_arrow")
    assert frame == arrow and sum(arrow.values()) == 6  # typed values, load ranks included

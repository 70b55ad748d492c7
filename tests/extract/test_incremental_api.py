# ruff: noqa: B008  (an incremental default argument is the API, as in dlt)
"""Incremental loading (issue 14, group 1): the API, errors, state commit and dlt's hashes and lag."""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
from pathlib import Path
from typing import Any, Optional

import pendulum
import pytest
from compat.compat_dataset import comparable_state, read_dataset
from compat.compat_harness import run_one, runs_of
from harness import diff

import lakeload
from lakeload.errors import IncrementalCursorPathHasValueNone, IncrementalCursorPathMissing, IncrementalError
from lakeload.extract.incremental import Incremental
from lakeload.extract.incremental.cursor import parse_cursor_path
from lakeload.extract.incremental.lag import apply_lag
from lakeload.kernel.spark.incremental import digest_dedup_value

pytestmark = pytest.mark.usefixtures("spark")
UTC = dt.timezone.utc


def _pipeline(tmp_path: Path, name: str = "incr") -> Any:
    return lakeload.pipeline(name, destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                             dataset_name="ds", pipelines_dir=str(tmp_path / "pipelines"))


def _cursor_state(pipeline: Any, resource: str, cursor: str) -> dict[str, Any]:
    return pipeline.state["sources"][pipeline.pipeline_name]["resources"][resource]["incremental"][cursor]  # type: ignore[no-any-return]


HASHED = [5, "x", {"id": 5}, [1, "a"], None, 1.5, dt.datetime(2024, 1, 1), pendulum.datetime(2024, 3, 1, tz="Europe/Berlin"),
          {"at": dt.datetime(2024, 1, 1, tzinfo=UTC), "d": dt.date(2024, 1, 2), "c": decimal.Decimal("1.5"),
           "t": dt.time(1, 2), "b": b"ab", "nested": {"z": 1, "a": [1, 2]}}]


@pytest.mark.parametrize("legacy", [False, True])
def test_dedup_hashes_are_dlts(legacy: bool) -> None:
    from dlt.extract.utils import digest_dedup_value as dlt_digest

    assert [digest_dedup_value(v, legacy) for v in HASHED] == [dlt_digest(v, legacy) for v in HASHED]


def test_lag_is_dlts() -> None:
    from dlt.extract.incremental.lag import apply_lag as dlt_apply_lag

    values = [10, 10.5, "2024-05-01T10:00:00Z", "2024-05-01T10:00:00+02:00", "2024-05-01T10:00:00.123Z", "2024-05-01",
              "20240501", "2024-05-01T10:00", dt.datetime(2024, 5, 1, 10, tzinfo=UTC), dt.datetime(2024, 5, 1, 10),
              dt.date(2024, 5, 1)]
    for value, func, cursor_type, lag in itertools.product(values, [max, min], [None, dt.date, dt.datetime], [1, 3600, 2.5]):
        assert apply_lag(lag, None, value, func, cursor_type) == dlt_apply_lag(lag, None, value, func, cursor_type), value
    assert apply_lag(5, 8, 10, max) == 8  # never before the initial value


def test_cursor_paths() -> None:
    row = {"id": 3, "a": {"b": [{"c": 1}, {"c": 2}]}, "x.y": 5}
    assert parse_cursor_path("id").find(row) == (True, 3)
    assert parse_cursor_path("$.id").find(row) == (True, 3)
    assert parse_cursor_path("a.b[1].c").find(row) == (True, 2)
    assert parse_cursor_path("a.b[*].c").find(row) == (True, 1)
    assert parse_cursor_path('"x.y"').find(row) == (True, 5)
    assert parse_cursor_path("a.z").find(row) == (False, None)
    assert parse_cursor_path("id").column == "id" and parse_cursor_path("$.id").column is None
    for bad in ("", "a..b", "$a", "a."):
        with pytest.raises(IncrementalError, match="simple JSON path|non-empty"):
            parse_cursor_path(bad)


def test_api_names_and_settings_checks() -> None:
    from lakeload.sources import incremental

    assert incremental is lakeload.sources.incremental is Incremental
    cursor: Incremental[int] = lakeload.sources.incremental[int]("id", initial_value=1)
    assert cursor.cursor_value_type() is int and cursor.last_value == 1
    assert Incremental("id", last_value_func="min").last_value_func is min
    with pytest.raises(IncrementalError, match="on_cursor_value_missing='skip' is not one of"):
        Incremental("id", on_cursor_value_missing="skip")  # type: ignore[arg-type]
    with pytest.raises(IncrementalError, match="range_start"):
        Incremental("id", range_start="half")  # type: ignore[arg-type]


def test_live_argument_reflects_the_state_and_resource_property(tmp_path: Path) -> None:
    seen: list[tuple[Any, ...]] = []

    @lakeload.resource(primary_key="id")
    def numbers(cursor: Incremental[int] = lakeload.sources.incremental("id", initial_value=2)) -> Any:
        seen.append((type(cursor).__name__, cursor.initial_value, cursor.start_value, cursor.last_value, cursor.end_value))
        yield [{"id": i} for i in range(6)]
        seen.append(("after", cursor.last_value))

    assert numbers().incremental is not None and numbers().incremental.cursor_path == "id"  # type: ignore[union-attr]
    pipeline = _pipeline(tmp_path)
    assert pipeline.run(numbers()).row_counts == {"numbers": 4}
    assert pipeline.run(numbers()).row_counts == {}
    assert seen == [("Incremental", 2, 2, 2, None), ("after", 5), ("Incremental", 2, 5, 5, None), ("after", 5)]
    res = numbers()
    res.incremental = lakeload.sources.incremental("id", initial_value=4)
    assert res.incremental.initial_value == 4  # type: ignore[union-attr]


def test_missing_cursor_raises_naming_resource_path_and_item(tmp_path: Path) -> None:
    @lakeload.resource
    def rows(cursor: Any = lakeload.sources.incremental("meta.at")) -> Any:
        yield [{"id": 1, "meta": {"at": 1}}, {"id": 2, "meta": {}}]

    @lakeload.resource
    def nones(cursor: Any = lakeload.sources.incremental("at")) -> Any:
        yield {"id": 3, "at": None}

    pipeline = _pipeline(tmp_path)
    with pytest.raises(lakeload.PipelineStepFailed) as failed:
        pipeline.run(rows())
    cause = failed.value.__cause__ or failed.value
    assert isinstance(cause, IncrementalCursorPathMissing)
    assert "'rows'" in str(cause) and "'meta.at'" in str(cause) and "'id': 2" in str(cause)
    assert "on_cursor_value_missing" in str(cause)
    with pytest.raises(lakeload.PipelineStepFailed) as failed:
        pipeline.run(nones())
    assert isinstance(failed.value.__cause__ or failed.value, IncrementalCursorPathHasValueNone)


def test_a_failed_extract_leaves_the_cursor_unchanged(tmp_path: Path) -> None:
    plan = {"top": 5, "fail": False}

    @lakeload.resource(primary_key="id")
    def numbers(cursor: Any = lakeload.sources.incremental("id")) -> Any:
        yield [{"id": i} for i in range(plan["top"])]
        if plan["fail"]:
            raise RuntimeError("source broke")

    pipeline = _pipeline(tmp_path)
    pipeline.run(numbers())
    before = _cursor_state(pipeline, "numbers", "id")
    plan.update(top=9, fail=True)
    with pytest.raises(lakeload.PipelineStepFailed, match="source broke"):
        pipeline.run(numbers())
    assert _cursor_state(pipeline, "numbers", "id") == before and before["last_value"] == 4
    assert _pipeline(tmp_path).state["sources"]["incr"]["resources"]["numbers"]["incremental"]["id"]["last_value"] == 4
    plan["fail"] = False
    assert pipeline.run(numbers()).row_counts == {"numbers": 4}


def test_none_argument_needs_optional(tmp_path: Path) -> None:
    @lakeload.resource
    def strict(cursor: Incremental[int] = lakeload.sources.incremental("id")) -> Any:
        yield {"id": 1}

    @lakeload.resource
    def relaxed(cursor: Optional[Incremental[int]] = lakeload.sources.incremental("id")) -> Any:  # noqa: UP045
        yield {"id": 1, "got": repr(cursor)}

    pipeline = _pipeline(tmp_path)
    with pytest.raises(lakeload.PipelineStepFailed, match="got None: pass lakeload.sources.incremental"):
        pipeline.run(strict(cursor=None))
    assert pipeline.run(relaxed(cursor=None)).row_counts == {"relaxed": 1}
    assert "incremental" not in str(pipeline.state.get("sources", {}))


def test_end_value_must_follow_initial_value(tmp_path: Path) -> None:
    @lakeload.resource
    def rows(cursor: Any = lakeload.sources.incremental("id", initial_value=5, end_value=2)) -> Any:
        yield {"id": 1}

    with pytest.raises(lakeload.PipelineStepFailed, match="end_value must be higher than initial_value"):
        _pipeline(tmp_path).run(rows())


def _events(lib: Any, run: int) -> Any:
    @lib.resource(primary_key="id")
    def events(updated: Any = lib.sources.incremental("updated", initial_value=dt.datetime(2024, 1, 1, tzinfo=UTC))) -> Any:
        yield [{"id": i, "updated": dt.datetime(2024, 1, 1 + i // 3, tzinfo=UTC)} for i in range(6 + 3 * run)]

    return events()


@pytest.mark.parametrize("first_name,second_name", [("dlt", "lakeload"), ("lakeload", "dlt")])
def test_the_cursor_continues_across_tools(first_name: str, second_name: str, tmp_path: Path) -> None:
    """Run 1 by one tool, run 2 by the other from an empty working folder: state comes from the bucket."""
    import dlt

    libs = {"dlt": dlt, "lakeload": lakeload}
    first, second = libs[first_name], libs[second_name]
    reference = run_one(dlt, runs_of(_events, 2, "cross", loader_file_format="parquet"), tmp_path / "reference")
    for index, lib in enumerate((first, second)):
        pipeline = lib.pipeline("cross", destination=lib.destinations.filesystem(str(tmp_path / "bucket")),
                                dataset_name="ds", pipelines_dir=str(tmp_path / f"pipelines_{index}"))
        pipeline.run(_events(lib, index), loader_file_format="parquet")
    assert comparable_state(pipeline.state["sources"]) == reference.sources_state
    assert reference.dataset is not None
    assert diff(reference.dataset, read_dataset(tmp_path / "bucket")) == []

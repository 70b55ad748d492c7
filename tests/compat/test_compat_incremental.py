# ruff: noqa: B008  (an incremental default argument is the API, as in dlt)
"""Incremental loading (issue 14, group 1) against dlt 1.31: the same scripts, run 2-3 times each on one pipeline,
leave the same tables, rows and incremental state (`state["sources"]`, hashes included) after every run, fail the
same runs with the same error class, and store the same table and column hints (`incremental` cursor columns)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from compat_harness import assert_same, runs_of

pytestmark = pytest.mark.usefixtures("spark")
UTC = dt.timezone.utc


def day(n: int) -> dt.datetime:
    return dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(days=n)


def s_records_int(lib: Any, run: int) -> Any:
    @lib.resource(primary_key="id")
    def numbers(cursor: Any = lib.sources.incremental("id", initial_value=3)) -> Any:
        top = 8 + 4 * run
        yield [{"id": i, "seen_from": cursor.start_value} for i in range(top - 8, top)]

    return numbers()


def s_datetime_pk_boundary(lib: Any, run: int) -> Any:
    @lib.resource(primary_key="id")
    def events(updated: Any = lib.sources.incremental("updated", initial_value=day(0))) -> Any:
        yield [{"id": i, "updated": day(i // 3)} for i in range(6 + 3 * run)]  # three rows share each day

    return events()


def s_row_hash_boundary(lib: Any, run: int) -> Any:
    @lib.resource
    def rows(cursor: Any = lib.sources.incremental("n")) -> Any:
        yield [{"n": i // 2, "tag": f"t{i}"} for i in range(4 + 2 * run)]
        yield {"n": 1 + run, "tag": "again"}

    return rows()


def s_nested_cursor(lib: Any, run: int) -> Any:
    @lib.resource(primary_key="id")
    def nested(cursor: Any = lib.sources.incremental("meta.version", initial_value=1)) -> Any:
        yield [{"id": i, "meta": {"version": i + run}} for i in range(5)]

    @lib.resource(name="nested_jsonpath", primary_key="id")
    def nested_jsonpath(cursor: Any = lib.sources.incremental("$.items[0].at")) -> Any:
        yield [{"id": i, "items": [{"at": i * 10 + run}]} for i in range(4)]

    return [nested(), nested_jsonpath()]


def s_min(lib: Any, run: int) -> Any:
    @lib.resource(primary_key="id")
    def countdown(cursor: Any = lib.sources.incremental("id", initial_value=100, last_value_func=min)) -> Any:
        low = 90 - 5 * run
        yield [{"id": i} for i in range(low + 10, low - 1, -1)]

    return countdown()


def s_custom_func(lib: Any, run: int) -> Any:
    def longest(values: Any) -> Any:
        return max(values, key=len)

    @lib.resource
    def words(cursor: Any = lib.sources.incremental("word", initial_value="ab", last_value_func=longest)) -> Any:
        yield [{"word": "x" * n} for n in range(1, 5 + run)]

    return words()


def s_end_value(lib: Any, run: int) -> Any:
    @lib.resource
    def window(cursor: Any = lib.sources.incremental("id", initial_value=2 + run, end_value=6 + run)) -> Any:
        yield [{"id": i, "run": run} for i in range(12)]

    return window()


def s_ranges(lib: Any, run: int) -> Any:
    @lib.resource
    def opened(cursor: Any = lib.sources.incremental("id", initial_value=3, range_start="open")) -> Any:
        yield [{"id": i} for i in range(8 + run)]

    @lib.resource
    def closed_end(cursor: Any = lib.sources.incremental("id", initial_value=3, end_value=7, range_end="closed")) -> Any:
        yield [{"id": i} for i in range(10)]

    return [opened(), closed_end()]


def s_lag(lib: Any, run: int) -> Any:
    @lib.resource
    def lagged(cursor: Any = lib.sources.incremental("n", lag=2)) -> Any:
        yield [{"n": i, "run": run} for i in range(5 + 2 * run)]

    @lib.resource(primary_key="id")
    def lagged_iso(cursor: Any = lib.sources.incremental("at", lag=3600)) -> Any:
        yield [{"id": i, "at": f"2024-05-01T{10 + i + run:02d}:00:00Z", "run": run} for i in range(3)]

    @lib.resource(primary_key="id")
    def lagged_date(cursor: Any = lib.sources.incremental("d", initial_value=dt.date(2024, 1, 1), lag=1)) -> Any:
        yield [{"id": i, "d": dt.date(2024, 1, 1 + i + run), "run": run} for i in range(3)]

    return [lagged(), lagged_iso(), lagged_date()]


def s_row_order(lib: Any, run: int) -> Any:
    asked: list[int] = []

    @lib.resource
    def ascending(cursor: Any = lib.sources.incremental("id", initial_value=2, end_value=6, row_order="asc")) -> Any:
        for page in range(10):
            asked.append(page)
            yield [{"id": page * 2 + i, "pages_asked": len(asked)} for i in range(2)]

    @lib.resource
    def descending(cursor: Any = lib.sources.incremental("id", initial_value=14 + run, row_order="desc")) -> Any:
        for page in range(10):
            yield [{"id": 20 + run - page * 2 - i, "page": page} for i in range(2)]

    return [ascending(), descending()]


def s_missing_cursor(lib: Any, run: int) -> Any:
    @lib.resource
    def included(cursor: Any = lib.sources.incremental("at", on_cursor_value_missing="include")) -> Any:
        yield [{"id": 1, "at": 1 + run}, {"id": 2}, {"id": 3, "at": None}]

    @lib.resource
    def excluded(cursor: Any = lib.sources.incremental("at", on_cursor_value_missing="exclude")) -> Any:
        yield [{"id": 1, "at": 1 + run}, {"id": 2}, {"id": 3, "at": None}]

    @lib.resource
    def raised(cursor: Any = lib.sources.incremental("at")) -> Any:
        yield [{"id": 1, "at": 1}] if run == 0 else [{"id": 2}]

    return [included(), excluded()] if run < 2 else raised()


def s_arrow(lib: Any, run: int) -> Any:
    import pyarrow as pa

    @lib.resource(primary_key="id")
    def table(cursor: Any = lib.sources.incremental("at", initial_value=day(1))) -> Any:
        ids = list(range(8 + 2 * run))
        yield pa.table({"id": ids, "at": pa.array([day(i // 2) for i in ids], type=pa.timestamp("us", tz="UTC"))})

    @lib.resource
    def table_no_key(cursor: Any = lib.sources.incremental("n")) -> Any:
        yield pa.table({"n": [i // 3 for i in range(6 + run)], "v": [f"v{i}" for i in range(6 + run)]})

    return [table(), table_no_key()]


def s_pandas(lib: Any, run: int) -> Any:
    import pandas as pd

    @lib.resource(primary_key=["id", "kind"])
    def frame(cursor: Any = lib.sources.incremental("n", initial_value=1, last_value_func="max")) -> Any:
        yield pd.DataFrame({"id": list(range(6 + run)), "kind": ["a", "b"] * 3 + ["c"] * run, "n": [i // 2 for i in range(6 + run)]})

    return frame()


def s_hints(lib: Any, run: int) -> Any:
    @lib.resource(primary_key="id", incremental=lib.sources.incremental("id", initial_value=2))
    def decorated() -> Any:
        yield [{"id": i} for i in range(5 + run)]

    @lib.resource(name="applied", primary_key="id")
    def applied() -> Any:
        yield [{"id": i, "v": i * run} for i in range(6 + run)]

    res = applied()
    res.apply_hints(incremental=lib.sources.incremental("id", initial_value=1))
    return [decorated(), res]


def s_explicit_args(lib: Any, run: int) -> Any:
    @lib.resource(primary_key="id")
    def merged(cursor: Any = lib.sources.incremental("id", initial_value=0)) -> Any:
        yield [{"id": i, "start": cursor.start_value} for i in range(6 + run)]

    @lib.resource(name="plain", primary_key="id")
    def plain(cursor: Any = lib.sources.incremental("id", initial_value=0)) -> Any:
        yield [{"id": i} for i in range(6 + run)]

    return [merged(cursor=lib.sources.incremental(initial_value=3)), plain(cursor=4)]


Build = Callable[[Any, int], Any]  # (lib, run index) -> what pipeline.run gets
SCRIPTS: dict[str, tuple[Build, int]] = {
    f.__name__[2:]: (f, runs) for f, runs in (
        (s_records_int, 3), (s_datetime_pk_boundary, 3), (s_row_hash_boundary, 3), (s_nested_cursor, 2), (s_min, 3),
        (s_custom_func, 2), (s_end_value, 2), (s_ranges, 2), (s_lag, 3), (s_row_order, 2), (s_missing_cursor, 3),
        (s_arrow, 3), (s_pandas, 2), (s_hints, 2), (s_explicit_args, 2),
    )
}


# Arrow tables and pandas frames: dlt 1.31 loads them without `_dlt_id`/`_dlt_load_id` (its parquet normalizer's
# `add_dlt_id`/`add_dlt_load_id` are off by default), lakeload adds both (a deliberate difference, README "Coming
# from dlt": the rows get the ids dlt gives records). Those two columns are left out of these scripts' comparison;
# `test_arrow_items_get_no_id_columns` pins the difference.
ARROW_SCRIPTS = ("arrow", "pandas")


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_incremental_runs_leave_the_rows_and_state_dlt_leaves(name: str, tmp_path: Path) -> None:
    build, runs = SCRIPTS[name]
    assert_same(runs_of(build, runs, "incr", loader_file_format="parquet"), tmp_path, hints=True,
                arrow_ids=name in ARROW_SCRIPTS)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="deliberate difference (README, Coming from dlt): "
                   "lakeload gives Arrow and pandas rows _dlt_id/_dlt_load_id (dlt's ids for merge tables), dlt 1.31 none")
def test_arrow_items_get_no_id_columns(tmp_path: Path) -> None:
    assert_same(runs_of(s_pandas, 1, "incr", loader_file_format="parquet"), tmp_path)


def test_run_file_format_is_stored_as_a_table_hint(tmp_path: Path) -> None:
    assert_same(runs_of(s_records_int, 1, "incr", loader_file_format="parquet"), tmp_path, hints=True)

"""Tests of lakeload.kernel.filesystem.layout, with parity checks against dlt 1.31's path_utils."""

from __future__ import annotations

import pickle
import posixpath
import re
from typing import Any

import pendulum
import pytest
from dlt.destinations import path_utils
from dlt.destinations.exceptions import InvalidPlaceholderCallback as DltInvalidPlaceholderCallback

from lakeload.errors import LayoutError
from lakeload.kernel.filesystem.layout import Layout, UnpicklableLayoutCallback, new_file_id
from lakeload.kernel.filesystem.layout_template import (
    DATE_TOKENS,
    DEFAULT_LAYOUT,
    InvalidPlaceholderCallback,
)

EXECUTOR_SAFE_MODULES = ("lakeload.kernel.filesystem.layout",
                         "lakeload.kernel.filesystem.layout_template",
                         "lakeload.kernel.filesystem.safe_paths",
                         "lakeload.schema.naming")

SCHEMA, TABLE, LOAD_ID, FILE_ID, EXT = "my_schema", "users", "1795290972.5539668", "da8443c50d", "jsonl.gz"
# single-digit month, day, hour, minute, second; package time on a different UTC day than New York
PACKAGE_TS = pendulum.datetime(2026, 3, 5, 2, 7, 9, 12345, tz="UTC")
CURRENT_DT = pendulum.datetime(2026, 11, 21, 23, 59, 58, 999999, tz="Europe/Berlin")

ALL_PLACEHOLDERS_LAYOUT = (
    "{schema_name}.{table_name}/{load_id}/{file_id}/{curr_date}/{timestamp}/{timestamp_ms}/"
    "{load_package_timestamp}/{load_package_timestamp_ms}/" + "-".join(f"{{{t}}}" for t in DATE_TOKENS) + ".{ext}"
)


def placeholder_callback(schema_name: str, table_name: str, load_id: str, file_id: str, ext: str) -> str:
    """Module-level, so picklable; mirrors the seed's callback example."""
    return f"{schema_name}-{table_name[:2]}-{ext.split('.')[0]}"


def wrong_callback(schema_name: str, table_name: str) -> str:
    return "x"


def fixed_now() -> pendulum.DateTime:
    return CURRENT_DT


def dlt_render(layout: str, extras: dict[str, Any] | None, current: Any, package_ts: pendulum.DateTime) -> str:
    path = path_utils.create_path(
        layout,
        f"{TABLE}.{FILE_ID}.0.{EXT}",
        SCHEMA,
        LOAD_ID,
        load_package_timestamp=package_ts,
        current_datetime=current,
        extra_placeholders=extras,
    )
    return path_utils.normalize_path_sep(posixpath, path)


def ours(layout: Layout, package_ts: pendulum.DateTime = PACKAGE_TS, table: str = TABLE) -> str:
    return layout.render(schema_name=SCHEMA, table_name=table, load_id=LOAD_ID, file_id=FILE_ID, ext=EXT,
                         load_package_timestamp=package_ts)


# the seed's example layouts and the facts' observed ones, with their extra placeholders
SEED_LAYOUTS: list[tuple[str, dict[str, Any] | None]] = [
    (DEFAULT_LAYOUT, None),
    ("{schema_name}.{table_name}.{load_id}.{file_id}.{ext}", None),
    ("{table_name}/{timestamp}/{load_id}.{file_id}.{ext}", None),
    ("{table_name}/{load_package_timestamp}/{load_id}.{file_id}.{ext}", None),
    ("{table_name}/{owner}/{department}/{load_id}.{file_id}.{ext}", {"owner": "admin", "department": "finance"}),
    ("{table_name}/{test_placeholder}/{YYYY}-{MM}-{DD}/{ddd}/{mm}/{load_id}.{file_id}.{ext}",
     {"test_placeholder": "test_value"}),
    ("{table_name}/{test_placeholder}/{timestamp}/{load_id}.{file_id}.{ext}", {"test_placeholder": "test_value"}),
    ("{table_name}/{placeholder_x}/{timestamp}/{load_id}.{file_id}.{ext}", {"placeholder_x": placeholder_callback}),
    ("{table_name}/{YYYY}/{MM}/{DD}/{env}/{load_id}.{file_id}.{ext}", {"env": "prod"}),
    ("{table_name}.{load_id}.{file_id}.{ext}", None),
    ("{schema_name}/{table_name}/{load_id}.{file_id}", None),
    ("{table_name}", None),
    ("{table_name}/{num}/{when}/{file_id}.{ext}", {"num": 7, "when": pendulum.datetime(2020, 1, 2)}),
    ("{table_name}\\{load_id}.{file_id}.{ext}", None),
    (ALL_PLACEHOLDERS_LAYOUT, None),
]
TIME_MODES = {
    "package_utc": (None, PACKAGE_TS),
    "package_new_york": (None, PACKAGE_TS.in_timezone("America/New_York")),
    "fixed_berlin": (CURRENT_DT, PACKAGE_TS),
    "callable": (fixed_now, PACKAGE_TS.in_timezone("Asia/Tokyo")),
}


@pytest.mark.parametrize("mode", TIME_MODES)
@pytest.mark.parametrize(("layout", "extras"), SEED_LAYOUTS)
def test_render_matches_dlt(layout: str, extras: dict[str, Any] | None, mode: str) -> None:
    current, package_ts = TIME_MODES[mode]
    parsed = Layout.parse(layout, extras, current, warn_unsafe_separators=False)
    assert ours(parsed, package_ts) == dlt_render(layout, extras, current, package_ts)


def test_every_placeholder_renders_as_expected() -> None:
    parsed = Layout.parse(ALL_PLACEHOLDERS_LAYOUT, current_datetime=CURRENT_DT)
    path = ours(parsed)
    package_s = 1772676429  # 2026-03-05T02:07:09.012345Z
    now_s = int(CURRENT_DT.timestamp())
    expected_tokens = ("2026-26-2026-november-nov-11-11-21-21-23-23-59-59-saturday-sat-sa-6-58-58-"
                       "9999-999-99-9-4")
    assert path == (f"{SCHEMA}.{TABLE}/{LOAD_ID}/{FILE_ID}/2026-11-21/{now_s}/{now_s * 1000 + 999}/"
                    f"{package_s}/{package_s * 1000 + 12}/{expected_tokens}.{EXT}")


def test_date_tokens_default_to_package_time_in_utc() -> None:
    parsed = Layout.parse("{table_name}/{YYYY}/{MM}/{DD}/{HH}/{curr_date}/{file_id}.{ext}")
    new_york = PACKAGE_TS.in_timezone("America/New_York")  # 2026-03-04 21:07 local
    assert ours(parsed, new_york) == f"users/2026/03/05/02/2026-03-05/{FILE_ID}.{EXT}"


def test_ext_is_appended_when_missing() -> None:
    parsed = Layout.parse("{schema_name}/{table_name}/{load_id}.{file_id}")
    assert parsed.template.endswith("{file_id}.{ext}")
    assert ours(parsed) == f"{SCHEMA}/{TABLE}/{LOAD_ID}.{FILE_ID}.jsonl.gz"


def test_extra_placeholders_shadowing_standard_ones_follow_dlt() -> None:
    layout = "{table_name}/{YYYY}/{load_id}.{file_id}.{ext}"
    extras = {"load_id": "L", "YYYY": "never"}
    with pytest.warns(UserWarning, match="standard placeholders"):
        parsed = Layout.parse(layout, extras)
    assert ours(parsed) == dlt_render(layout, extras, None, PACKAGE_TS) == f"users/2026/L.{FILE_ID}.{EXT}"


LAYOUT_CASES = [
    DEFAULT_LAYOUT,
    "{schema_name}/{table_name}/{load_id}.{file_id}.{ext}",
    "{schema_name}.{table_name}.{load_id}.{file_id}.{ext}",
    "{table_name}.{load_id}.{file_id}.{ext}",
    "{table_name}/{YYYY}/{MM}/{load_id}.{file_id}.{ext}",
    "{table_name}",
    "{schema_name}-{table_name}",
    "prefix/{table_name}/{load_id}.{file_id}.{ext}",
    "{table_name}_{load_id}.{file_id}.{ext}",
]


@pytest.mark.parametrize("layout", LAYOUT_CASES)
@pytest.mark.parametrize("table", ["users", "users__pets"])
def test_table_prefix_matches_dlt(layout: str, table: str) -> None:
    parsed = Layout.parse(layout, warn_unsafe_separators=False)
    expected = path_utils.get_table_prefix_layout(layout).format(schema_name=SCHEMA, table_name=table)
    assert parsed.table_prefix(SCHEMA, table) == expected
    assert ours(parsed, table=table).startswith(parsed.table_prefix(SCHEMA, table))
    assert parsed.is_table_file(ours(parsed, table=table), SCHEMA, table)


def test_dlt_tables_ignore_the_layout() -> None:
    parsed = Layout.parse("{table_name}.{load_id}.{file_id}.{ext}")
    assert parsed.table_prefix(SCHEMA, "_dlt_loads") == "_dlt_loads/"
    assert parsed.table_dir(SCHEMA, "_dlt_pipeline_state") == "_dlt_pipeline_state/"


def test_table_dir_and_is_table_file() -> None:
    shared = Layout.parse("{table_name}.{load_id}.{file_id}.{ext}")
    assert shared.table_dir(SCHEMA, "users") == ""
    assert shared.is_table_file("users.1.a.jsonl", SCHEMA, "users")
    assert not shared.is_table_file("users__pets.1.a.jsonl", SCHEMA, "users")
    assert not shared.is_table_file("init", SCHEMA, "init")
    nested = Layout.parse("{schema_name}/{table_name}/{YYYY}/{load_id}.{file_id}.{ext}")
    assert nested.table_dir(SCHEMA, "users") == f"{SCHEMA}/users/"
    assert nested.is_table_file(f"{SCHEMA}\\users\\2026\\1.a.parquet", SCHEMA, "users")
    assert not nested.is_table_file(f"{SCHEMA}/users/init", SCHEMA, "users")
    unsafe = Layout.parse("{table_name}_{load_id}.{file_id}.{ext}", warn_unsafe_separators=False)
    assert unsafe.is_table_file("users__pets_1.a.jsonl", SCHEMA, "users")  # why the warning exists


def test_wrong_callback_signature() -> None:
    layout = "{table_name}/{cb}/{load_id}.{file_id}.{ext}"
    extras = {"cb": wrong_callback}
    with pytest.raises(DltInvalidPlaceholderCallback):
        dlt_render(layout, extras, None, PACKAGE_TS)
    with pytest.raises(InvalidPlaceholderCallback) as info:
        Layout.parse(layout, extras)
    message = str(info.value)
    assert info.value.callback_name == "cb"
    for fragment in ("'cb'", "schema_name, table_name, load_id, file_id, ext", "{table_name}/{cb}/{load_id}"):
        assert fragment in message


def test_callback_receives_path_arguments() -> None:
    seen: list[tuple[Any, ...]] = []

    def spy(*args: Any) -> str:
        seen.append(args)
        return "v"

    parsed = Layout.parse("{schema_name}/{table_name}/{x}/{file_id}.{ext}", {"x": spy})
    assert ours(parsed) == f"{SCHEMA}/{TABLE}/v/{FILE_ID}.{EXT}"
    assert seen == [(SCHEMA, TABLE, LOAD_ID, FILE_ID, EXT)]


def test_current_datetime_callable_must_return_datetime() -> None:
    parsed = Layout.parse(DEFAULT_LAYOUT, current_datetime=lambda: "yesterday")  # type: ignore[arg-type,return-value]
    with pytest.raises(LayoutError, match="pendulum.DateTime"):
        ours(parsed)


def test_layout_pickles_with_module_level_callbacks() -> None:
    parsed = Layout.parse("{table_name}/{x}/{timestamp}/{file_id}.{ext}", {"x": placeholder_callback}, fixed_now)
    parsed.ensure_picklable()
    restored = pickle.loads(pickle.dumps(parsed))
    assert restored == parsed
    assert ours(restored) == ours(parsed)


def test_lambdas_and_closures_ship_like_spark_ships_them() -> None:
    from pyspark import cloudpickle

    def closure(schema_name: str, table_name: str, load_id: str, file_id: str, ext: str) -> str:
        return SCHEMA

    for extras, current in (({"x": lambda s, t, li, f, e: "v"}, None), ({"x": closure}, None), ({"x": "plain"}, lambda: CURRENT_DT)):
        parsed = Layout.parse("{table_name}/{x}/{file_id}.{ext}", extras, current)
        parsed.ensure_picklable(cloudpickle.dumps)
        assert ours(cloudpickle.loads(cloudpickle.dumps(parsed))) == ours(parsed)
        with pytest.raises(UnpicklableLayoutCallback):  # plain pickle (the default) cannot ship lambdas
            Layout.parse("{table_name}/{x}/{file_id}.{ext}", {"x": lambda *a: "v"}).ensure_picklable()


def test_unpicklable_callbacks_are_reported() -> None:
    import threading

    from pyspark import cloudpickle

    lock = threading.Lock()

    def holds_lock(schema_name: str, table_name: str, load_id: str, file_id: str, ext: str) -> str:
        return str(lock)

    cases: list[tuple[dict[str, Any], Any, str]] = [
        ({"x": holds_lock}, None, "extra placeholder 'x'"),
        ({"x": "plain"}, lambda: str(lock) and CURRENT_DT, "current_datetime"),
    ]
    for extras, current, what in cases:
        parsed = Layout.parse("{table_name}/{x}/{file_id}.{ext}", extras, current)
        ours(parsed)  # usable on the driver
        with pytest.raises(UnpicklableLayoutCallback) as info:
            parsed.ensure_picklable(cloudpickle.dumps)
        message = str(info.value)
        assert what in message and "Spark executors" in message and "lock" in message.lower()
        assert "{table_name}/{env}/{load_id}.{file_id}.{ext}" in message


def test_new_file_id() -> None:
    ids = {new_file_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(r"[0-9a-f]{10}", i) for i in ids)

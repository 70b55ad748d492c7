"""Tests of lakeload.kernel.filesystem.layout_template: dlt 1.31's layout rules, errors and warnings."""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest
from dlt.common.normalizers.naming.snake_case import NamingConvention as SnakeCase
from dlt.destinations import path_utils
from dlt.destinations.exceptions import CantExtractTablePrefix as DltCantExtractTablePrefix
from dlt.destinations.exceptions import InvalidFilesystemLayout as DltInvalidFilesystemLayout

from lakeload.errors import LayoutError
from lakeload.kernel.filesystem.layout import Layout, UnpicklableLayoutCallback
from lakeload.kernel.filesystem.layout_template import (
    DATE_TOKENS,
    DEFAULT_LAYOUT,
    STANDARD_PLACEHOLDERS,
    CantExtractTablePrefix,
    InvalidFilesystemLayout,
    InvalidPlaceholderCallback,
    UnsafeLayoutSeparatorWarning,
)


def test_standard_placeholders_match_dlt() -> None:
    assert set(STANDARD_PLACEHOLDERS) == set(path_utils.STANDARD_PLACEHOLDERS)
    assert set(DATE_TOKENS) == set(path_utils.DATETIME_PLACEHOLDERS)
    assert DEFAULT_LAYOUT == "{table_name}/{load_id}.{file_id}.{ext}"


INVALID_LAYOUTS: list[tuple[str, dict[str, Any] | None, type[LayoutError], type[Exception], list[str]]] = [
    ("{table_name}/{foo}/{load_id}.{file_id}.{ext}", None, InvalidFilesystemLayout, DltInvalidFilesystemLayout,
     ["'foo'", "schema_name", "YYYY", "extra_placeholders"]),
    ("{table_name}/{year}/{load_id}.{file_id}.{ext}", {"env": "x"}, InvalidFilesystemLayout,
     DltInvalidFilesystemLayout, ["'year'", "['env']"]),
    ("{table_name}/year={year}/month={month}/day={day}/{load_id}.{file_id}.{ext}", None,
     InvalidFilesystemLayout, DltInvalidFilesystemLayout, ["'year'", "'month'", "'day'"]),
    ("{load_id}.{file_id}.{ext}", None, CantExtractTablePrefix, DltCantExtractTablePrefix,
     ["no {table_name} placeholder"]),
    ("", None, CantExtractTablePrefix, DltCantExtractTablePrefix, ["no {table_name} placeholder"]),
    ("{load_id}/{table_name}/{file_id}.{ext}", None, CantExtractTablePrefix, DltCantExtractTablePrefix,
     ["only {schema_name} may come before {table_name}", "['load_id']"]),
    ("{schema_name}/{YYYY}/{table_name}/{file_id}.{ext}", None, CantExtractTablePrefix, DltCantExtractTablePrefix,
     ["['schema_name', 'YYYY']"]),
    ("{table_name}{load_id}.{file_id}.{ext}", None, CantExtractTablePrefix, DltCantExtractTablePrefix,
     ["literal separator"]),
]


@pytest.mark.parametrize(("layout", "extras", "ours_cls", "dlt_cls", "fragments"), INVALID_LAYOUTS)
def test_invalid_layouts_are_rejected_like_dlt(layout: str, extras: dict[str, Any] | None,
                                               ours_cls: type[LayoutError], dlt_cls: type[Exception],
                                               fragments: list[str]) -> None:
    with pytest.raises(dlt_cls):
        path_utils.check_layout(layout, extras)
        path_utils.get_table_prefix_layout(layout)
    with pytest.raises(ours_cls) as info:
        Layout.parse(layout, extras)
    message = str(info.value)
    assert layout in message
    for fragment in fragments:
        assert fragment in message
    assert re.search(r"'\{table_name\}/(\{\w+\}/)?\{load_id\}\.\{file_id\}\.\{ext\}'", message), message


def test_stray_braces_are_rejected() -> None:
    with pytest.raises(InvalidFilesystemLayout, match="unmatched"):
        Layout.parse("{table_name}/a}b/{load_id}.{file_id}.{ext}")


def test_errors_are_lakeload_layout_errors() -> None:
    for cls in (InvalidFilesystemLayout, CantExtractTablePrefix, InvalidPlaceholderCallback,
                UnpicklableLayoutCallback):
        assert issubclass(cls, LayoutError)
    with pytest.raises(LayoutError, match="must be a string"):
        Layout.parse(None)  # type: ignore[arg-type]


SEPARATOR_CASES = ["/", ".", "_", "-", "x", "9", "A", " ", "=", "+", "@", "\u0663", "é"]
SCHEMA_SEGMENTS = ["/", ".", "_", "__", "_x_", "", "-", "x"]


@pytest.mark.parametrize("layout", [f"{{table_name}}{sep}{{load_id}}.{{file_id}}.{{ext}}" for sep in SEPARATOR_CASES]
                         + [f"{{schema_name}}{seg}{{table_name}}/{{load_id}}.{{ext}}" for seg in SCHEMA_SEGMENTS])
def test_unsafe_separator_warning_matches_dlt(layout: str) -> None:
    prefix = path_utils.get_table_prefix_layout(layout)
    dlt_unsafe = path_utils.get_unsafe_prefix_separators(prefix, SnakeCase())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Layout.parse(layout)
    ours_warned = [w for w in caught if issubclass(w.category, UnsafeLayoutSeparatorWarning)]
    assert bool(ours_warned) == bool(dlt_unsafe), (layout, dlt_unsafe)
    if ours_warned:
        text = str(ours_warned[0].message)
        assert layout in text and DEFAULT_LAYOUT in text and "warn_unsafe_separators=False" in text
        for sep in dlt_unsafe:
            assert repr(sep) in text


def test_unsafe_separator_warning_can_be_disabled() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Layout.parse("{table_name}_{load_id}.{file_id}.{ext}", warn_unsafe_separators=False)
    with pytest.warns(UnsafeLayoutSeparatorWarning, match="'_'"):
        Layout.parse("{table_name}_{load_id}.{file_id}.{ext}")


def test_warnings_point_at_the_caller_of_parse() -> None:
    with pytest.warns(UnsafeLayoutSeparatorWarning) as unsafe:
        Layout.parse("{table_name}_{load_id}.{file_id}.{ext}")
    with pytest.warns(UserWarning, match="standard placeholders") as shadowing:
        Layout.parse(DEFAULT_LAYOUT, {"load_id": "L"})
    assert unsafe[0].filename == shadowing[0].filename == __file__

"""Tests of lakeload.kernel.filesystem.safe_paths and the layout checks built on it.

Table names are checked after normalization, against dlt 1.31's naming conventions as the oracle: what dlt
turns into a safe name keeps working (same name), what stays unsafe is rejected.
"""

from __future__ import annotations

import importlib
from typing import Any

import pendulum
import pytest

from lakeload.errors import (
    ConfigurationError,
    InvalidNameError,
    LakeloadError,
    LayoutError,
    UnsafeLayoutPathError,
)
from lakeload.extract.extractor import table_name
from lakeload.kernel.filesystem.layout import Layout
from lakeload.kernel.filesystem.safe_paths import (
    check_dataset_key,
    check_dataset_name,
    check_pipeline_name,
    check_schema_name,
    name_problem,
)
from lakeload.schema.naming import NAMING_CONVENTIONS, get_naming

UNSAFE = ["", "   ", ".", "..", "../x", "../../escape", "a/b", "/abs", "a\\b", "..\\x", "a\x00b"]
UNUSUAL = ["a/b", "../x", "..", ".", "/abs", "a\\b", "a\x00b", "a__..__b", "My Table", "x" * 300]


def dlt_naming(name: str) -> Any:
    return importlib.import_module(f"dlt.common.normalizers.naming.{name}").NamingConvention()


@pytest.mark.parametrize("value", UNSAFE)
@pytest.mark.parametrize("check", [check_pipeline_name, check_dataset_name, check_schema_name])
def test_unsafe_single_names_are_rejected(check: Any, value: str) -> None:
    with pytest.raises(InvalidNameError) as raised:
        check(value)
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, ConfigurationError)
    assert repr(value) in str(raised.value) and "Fix:" in str(raised.value)


@pytest.mark.parametrize("value", ["quick_start", "My Data", "a.b", "ds-2026", "...", "x__y", "ünïcödé"])
def test_safe_single_names_pass_unchanged(value: str) -> None:
    assert name_problem(value) is None
    assert check_pipeline_name(value) == check_dataset_name(value) == check_schema_name(value) == value


def test_non_strings_are_rejected() -> None:
    with pytest.raises(InvalidNameError, match="NoneType, not a string"):
        check_dataset_name(None)


def test_dataset_message_suggests_what_dlt_would_use() -> None:
    with pytest.raises(InvalidNameError, match=r"e\.g\. '_escape_ds' \(what dlt's snake_case"):
        check_dataset_name("../../escape_ds")


@pytest.mark.parametrize("naming", sorted(NAMING_CONVENTIONS))
@pytest.mark.parametrize("value", UNUSUAL)
def test_table_names_follow_dlt_and_reject_only_what_stays_unsafe(naming: str, value: str) -> None:
    expected = dlt_naming(naming).normalize_tables_path(value)  # the oracle
    if name_problem(expected) is None:
        assert table_name(get_naming(naming), value) == expected
    else:
        with pytest.raises(InvalidNameError) as raised:
            table_name(get_naming(naming), value)
        assert repr(value) in str(raised.value) and f"'{naming}' naming convention" in str(raised.value)


@pytest.mark.parametrize("naming", ["direct", "duck_case"])
@pytest.mark.parametrize("value", ["a/b", "../x", "/abs", "a\\b", "..", "a\x00b"])
def test_conventions_that_keep_separators_reject_them(naming: str, value: str) -> None:
    with pytest.raises(InvalidNameError):
        table_name(get_naming(naming), value)


@pytest.mark.parametrize("naming", sorted(NAMING_CONVENTIONS))
@pytest.mark.parametrize("value", ["", "   ", None, 3])
def test_empty_or_non_string_table_names_are_rejected(naming: str, value: Any) -> None:
    with pytest.raises(InvalidNameError):
        table_name(get_naming(naming), value)


@pytest.mark.parametrize("path", ["", "/x/y", "\\x", "a/../b", "../a", "a/./b", "a/..", "a\\..\\b", "a/\x00"])
def test_dataset_keys_that_leave_or_blur_the_dataset_folder(path: str) -> None:
    with pytest.raises(UnsafeLayoutPathError) as raised:
        check_dataset_key(path, "L")
    error = raised.value
    assert isinstance(error, LayoutError) and isinstance(error, InvalidNameError) and isinstance(error, ValueError)
    assert isinstance(error, LakeloadError) and "Layout 'L'" in str(error) and repr(path) in str(error)


@pytest.mark.parametrize("path", ["users/1.2.ab.jsonl", "s.users.1.ab.parquet", "a//b", "...x/y", "u/..x"])
def test_relative_keys_pass(path: str) -> None:
    assert check_dataset_key(path, "L") == path


@pytest.mark.parametrize(
    ("layout", "extras"),
    [
        ("{table_name}/../../x/{load_id}.{file_id}.{ext}", None),
        ("/{table_name}/{load_id}.{file_id}.{ext}", None),
        ("{table_name}/..\\..\\{load_id}.{file_id}.{ext}", None),
        ("{table_name}/./{load_id}.{file_id}.{ext}", None),
        ("{table_name}/{env}/{load_id}.{file_id}.{ext}", {"env": "../../../y"}),
        ("{table_name}/{env}/{load_id}.{file_id}.{ext}", {"env": "y\x00"}),
        ("{env}{table_name}/{load_id}.{file_id}.{ext}", {"env": "/"}),  # unknown before table_name: dlt's rule
        ("{table_name}/{load_id}.{file_id}.{ext}", {"table_name": "../x"}),  # shadows the standard placeholder
    ],
)
@pytest.mark.filterwarnings("ignore:Extra placeholders")
def test_unsafe_layouts_and_fixed_values_fail_at_parse(layout: str, extras: dict[str, Any] | None) -> None:
    with pytest.raises(LayoutError):
        Layout.parse(layout, extras)


def test_callbacks_are_checked_when_they_render() -> None:
    def escape(schema_name: str, table_name: str, load_id: str, file_id: str, ext: str) -> str:
        return "../../../x" if table_name == "bad" else "ok"

    layout = Layout.parse("{table_name}/{env}/{load_id}.{file_id}.{ext}", {"env": escape})  # parse cannot know
    kwargs = dict(schema_name="s", load_id="1.2", file_id="ab", ext="jsonl", load_package_timestamp=pendulum.now())
    assert layout.render(table_name="good", **kwargs) == "good/ok/1.2.ab.jsonl"
    with pytest.raises(UnsafeLayoutPathError, match=r"renders the path 'bad/\.\./\.\./\.\./x/1\.2\.ab\.jsonl'"):
        layout.render(table_name="bad", **kwargs)


@pytest.mark.filterwarnings("ignore:Extra placeholders")
def test_a_callback_shadowing_table_name_is_checked_in_table_prefix() -> None:
    layout = Layout.parse("{table_name}/{load_id}.{file_id}.{ext}", {"table_name": lambda *args: "/etc"})
    with pytest.raises(UnsafeLayoutPathError, match="absolute"):
        layout.table_prefix("s", "users")


def test_current_datetime_callables_cannot_add_separators() -> None:
    layout = Layout.parse("{table_name}/{YYYY}/{MM}/{load_id}.{file_id}.{ext}", current_datetime=lambda: "../../x")
    with pytest.raises(LayoutError, match="current_datetime"):
        layout.render(schema_name="s", table_name="t", load_id="1", file_id="a", ext="jsonl",
                      load_package_timestamp=pendulum.now())

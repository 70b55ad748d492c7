"""Parity of lakeload.schema.naming with dlt's naming conventions (dlt is a test-only reference)."""

from __future__ import annotations

import pytest
from dlt.common.normalizers.naming import direct, duck_case, snake_case, sql_ci_v1, sql_cs_v1
from hypothesis import given, settings
from hypothesis import strategies as st

from lakeload.errors import ConfigurationError
from lakeload.schema.naming import (
    DirectNaming,
    DuckCaseNaming,
    NamingConvention,
    SnakeCaseNaming,
    SqlCiV1Naming,
    SqlCsV1Naming,
    get_naming,
)

PAIRS: list[tuple[type[NamingConvention], type]] = [
    (SnakeCaseNaming, snake_case.NamingConvention),
    (SqlCsV1Naming, sql_cs_v1.NamingConvention),
    (SqlCiV1Naming, sql_ci_v1.NamingConvention),
    (DuckCaseNaming, duck_case.NamingConvention),
    (DirectNaming, direct.NamingConvention),
]
MAX_LENGTHS = [None, 6, 7, 10, 16, 63, 127]

HAND = [
    "a", "A", "Abc", "camelCase", "CamelCase", "HTTPServer", "getHTTPResponseCode", "already_snake",
    "+1", "-1", "*", "@home", "a|b", "1abc", "123", "1_", "_", "__", "___", "a__b", "a___b", "_a", "__a",
    "trailing_", "trailing__", "ümlaut", "Ümlaut key", "ŁÓDŹ", "日本語", "a b c", "  padded  ", "tab\tkey",
    "new\nline", "quote'\"s", "a▶b", "dots.in.key", "slash/key", "x-y-z", "émoji 😀", "٣٤٥", "abc٣", "²",
    "a+b-c*d@e|f", "Some.Very-Long Identifier With Many Words That Will Need Shortening For Sure",
    "_dlt_id", "_dlt_load_id", "value", "$schema", "#hash", "100%", "a__", "ABC_DEF", "ABCdef", "aBC", "a1B2c3",
    "x" * 200, "Ab" * 100,
]  # fmt: skip

PATHS = ["Parent__Child", "a__b__c", "a____b", "__a", "a__", "  __x", "Root Table__Nested List__Deep", "a__ __b"]


def _dlt_or_error(fn, *args):  # type: ignore[no-untyped-def]
    try:
        return fn(*args)
    except (ValueError, AssertionError) as exc:
        return type(exc).__name__


def _ours_or_error(fn, *args):  # type: ignore[no-untyped-def]
    try:
        return fn(*args)
    except ValueError:
        # dlt raises AssertionError when max_length is shorter than the 6-char tag; we raise ValueError
        return "ERR"


def _same(ours: object, theirs: object) -> bool:
    if theirs in ("ValueError", "AssertionError"):
        return ours == "ERR"
    return ours == theirs


@pytest.mark.parametrize("ours_cls, dlt_cls", PAIRS)
@pytest.mark.parametrize("max_length", MAX_LENGTHS)
def test_hand_identifiers_match_dlt(ours_cls: type[NamingConvention], dlt_cls: type, max_length: int | None) -> None:
    ours, theirs = ours_cls(max_length), dlt_cls(max_length)
    for ident in HAND + PATHS:
        for method in ("normalize_identifier", "normalize_table_identifier", "normalize_path", "normalize_tables_path"):
            a = _ours_or_error(getattr(ours, method), ident)
            b = _dlt_or_error(getattr(theirs, method), ident)
            assert _same(a, b), (method, ident, a, b)
        assert ours.break_path(ident) == list(theirs.break_path(ident))
    assert ours.is_case_sensitive == theirs.is_case_sensitive
    assert ours.path_separator == theirs.PATH_SEPARATOR
    assert ours.name == theirs.name()


@pytest.mark.parametrize("ours_cls, dlt_cls", PAIRS)
@pytest.mark.parametrize("max_length", [None, 10, 30])
def test_make_path_and_shorten_fragments_match_dlt(
    ours_cls: type[NamingConvention], dlt_cls: type, max_length: int | None
) -> None:
    ours, theirs = ours_cls(max_length), dlt_cls(max_length)
    for frags in [(), ("a",), ("a", "b"), ("orders", "items", "value"), ("a", " ", "b"), ("x" * 40, "y" * 40)]:
        assert ours.make_path(*frags) == theirs.make_path(*frags)
        assert ours.shorten_fragments(*frags) == theirs.shorten_fragments(*frags)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("+1", "x1"), ("-1", "_1"), ("1abc", "_1abc"), ("ümlaut", "_mlaut"), ("trailing_", "trailingx"),
        ("a__b", "a_b"), ("CamelCase", "camel_case"), ("HTTPServer", "http_server"), ("_", "x"), ("__", "xx"),
        ("a@b|c", "aablc"), ("  padded  ", "padded"), ("٣٤٥", "_٣٤٥"),
    ],
)  # fmt: skip
def test_snake_case_known_rules(source: str, expected: str) -> None:
    assert SnakeCaseNaming().normalize_identifier(source) == expected


def test_surprising_rules_are_kept() -> None:
    # dlt quirk: sql_cs_v1 turns "__" into an empty identifier (trailing underscores removed, no guard)
    assert SqlCsV1Naming().normalize_identifier("__") == sql_cs_v1.NamingConvention().normalize_identifier("__") == ""
    # Unicode decimal digits are kept by snake_case (regex \d is Unicode), other non-ASCII letters are not
    assert SnakeCaseNaming().normalize_identifier("a٣b") == "a٣b"


@pytest.mark.parametrize("bad", ["", "   ", "\t\n"])
def test_blank_identifier_raises(bad: str) -> None:
    with pytest.raises(ValueError):
        SnakeCaseNaming().normalize_identifier(bad)
    with pytest.raises(ValueError):
        snake_case.NamingConvention().normalize_identifier(bad)


def test_shortening_keeps_length_and_tag() -> None:
    naming = SnakeCaseNaming(max_length=20)
    out = naming.normalize_identifier("a" * 50)
    assert len(out) == 20
    assert out == snake_case.NamingConvention(20).normalize_identifier("a" * 50)
    assert naming.normalize_identifier("A" * 50) != out  # tag is computed from the original identifier


def test_get_naming() -> None:
    assert isinstance(get_naming(), SnakeCaseNaming)
    naming = get_naming("sql_cs_v1", max_length=12)
    assert isinstance(naming, SqlCsV1Naming) and naming.max_length == 12
    with pytest.raises(ConfigurationError) as exc:
        get_naming("kebab_case")
    for name in ("snake_case", "sql_cs_v1", "sql_ci_v1", "duck_case", "direct"):
        assert name in str(exc.value)


IDENT_ALPHABET = st.sampled_from(
    list("abcXYZ019_ -+*@|.$/'\"\n\t▶") + ["ü", "Ł", "日", "٣", "²", "😀", "ǅ", "ß", "İ"]
)


@settings(max_examples=400, deadline=None)
@given(ident=st.text(IDENT_ALPHABET, min_size=0, max_size=40), max_length=st.sampled_from(MAX_LENGTHS))
def test_random_identifiers_match_dlt(ident: str, max_length: int | None) -> None:
    for ours_cls, dlt_cls in PAIRS:
        ours, theirs = ours_cls(max_length), dlt_cls(max_length)
        for method in ("normalize_identifier", "normalize_path"):
            a = _ours_or_error(getattr(ours, method), ident)
            b = _dlt_or_error(getattr(theirs, method), ident)
            assert _same(a, b), (ours_cls.name, method, ident, a, b)


@settings(max_examples=200, deadline=None)
@given(ident=st.text(min_size=1, max_size=30))
def test_any_unicode_matches_dlt_snake_case(ident: str) -> None:
    a = _ours_or_error(SnakeCaseNaming().normalize_identifier, ident)
    b = _dlt_or_error(snake_case.NamingConvention().normalize_identifier, ident)
    assert _same(a, b), (ident, a, b)

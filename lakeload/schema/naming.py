"""Executor-safe: identifier naming conventions compatible with dlt's, using only the standard library.

A naming convention turns source keys (JSON keys, resource names) into destination identifiers. The
rules reproduce dlt 1.31 bit for bit, because table and column names must be identical to the ones
dlt would produce:

* ``snake_case`` (default, case-insensitive): ``+``/``*`` become ``x``, ``-`` becomes ``_``, ``@``
  becomes ``a`` and ``|`` becomes ``l``; every other run of characters that are not ASCII letters,
  Unicode decimal digits or ``_`` becomes one ``_``; camelCase is broken with ``_`` and lower-cased;
  a leading digit gets a ``_`` prefix; each trailing ``_`` becomes ``x``; runs of ``_`` collapse.
* ``sql_cs_v1`` (case-sensitive), ``sql_ci_v1``, ``duck_case`` and ``direct``.

Identifiers longer than ``max_length`` are cut in the middle and get a 6-character hash tag of the
*original* identifier. Empty or whitespace-only keys raise ``ValueError``; the relational
normalizer replaces them with ``_empty`` before calling in here.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import overload

from lakeload.errors import ConfigurationError

PATH_SEPARATOR = "__"
_CACHE_SIZE = 1 << 16  # bounded: keys on executors can be high-cardinality
_COLLISION_PROB = 0.001
# bytes of hash needed for the collision probability above (base64 is lower-cased, so ~1.5x bits)
_TAG_BYTES = int((3 * math.log2(1 / _COLLISION_PROB)) // 8 + 1)
_TAG_TRANSLATE = bytes.maketrans(b"/+", b"ab")

# `\d` is deliberately the Unicode class: non-ASCII decimal digits survive normalization
_NON_ALNUM = re.compile(r"[^a-zA-Z\d_]+")
_MULTI_UNDERSCORE = re.compile("__+")
_LEADING_DIGIT = re.compile(r"^\d+")
_TRAILING_UNDERSCORES = re.compile(r"_+$")
_CAMEL_WORD = re.compile("([^_])([A-Z][a-z]+)")
_CAMEL_LOWER_UPPER = re.compile("([a-z0-9])([A-Z])")
_SNAKE_REDUCE = str.maketrans("+-*@|", "x_xal")
_DIRECT_CLEANUP = str.maketrans("\n\r'\"▶", "_____")
_DUCK_CLEANUP = str.maketrans('\n\r"', "___")


def _hash_tag(identifier: str) -> str:
    digest = hashlib.shake_128(identifier.encode("utf-8")).digest(_TAG_BYTES)
    return base64.b64encode(digest).rstrip(b"=").translate(_TAG_TRANSLATE).lower().decode("ascii")


@lru_cache(maxsize=_CACHE_SIZE)
def shorten_identifier(normalized: str, original: str, max_length: int | None) -> str:
    """Cut `normalized` to `max_length` keeping head and tail around a hash tag of `original`.

    Example: ``shorten_identifier("a" * 20, "A" * 20, 10)`` -> ``'aa' + tag + 'aa'``.
    """
    if not max_length or len(normalized) <= max_length:
        return normalized
    tag = _hash_tag(original)
    if len(tag) > max_length:
        raise ValueError(f"max_length={max_length} is shorter than the {len(tag)}-character hash tag")
    remaining = max_length - len(tag)
    head = remaining // 2 + remaining % 2
    tail = remaining // 2
    return normalized[:head] + tag + normalized[len(normalized) - tail :]


def _strip_checked(identifier: str) -> str:
    if identifier is None:
        raise ValueError("identifier is None")
    stripped = identifier.strip()
    if not stripped:
        raise ValueError(identifier)
    return stripped


@lru_cache(maxsize=_CACHE_SIZE)
def _snake_case(identifier: str, max_length: int | None) -> str:
    ident = _NON_ALNUM.sub("_", identifier.translate(_SNAKE_REDUCE))
    ident = _CAMEL_WORD.sub(r"\1_\2", ident)
    ident = _CAMEL_LOWER_UPPER.sub(r"\1_\2", ident).lower()
    if _LEADING_DIGIT.match(ident):
        ident = "_" + ident
    stripped = ident.rstrip("_")
    ident = stripped + "x" * (len(ident) - len(stripped))
    return shorten_identifier(_MULTI_UNDERSCORE.sub("_", ident), identifier, max_length)


@lru_cache(maxsize=_CACHE_SIZE)
def _sql_cs_v1(identifier: str, max_length: int | None) -> str:
    ident = _NON_ALNUM.sub("_", identifier)
    if _LEADING_DIGIT.match(ident):
        ident = "_" + ident
    if ident != "_":
        ident = _TRAILING_UNDERSCORES.sub("", ident)
    return shorten_identifier(_MULTI_UNDERSCORE.sub("_", ident), identifier, max_length)


@lru_cache(maxsize=_CACHE_SIZE)
def _duck_case(identifier: str, max_length: int | None) -> str:
    ident = _MULTI_UNDERSCORE.sub("_", identifier.translate(_DUCK_CLEANUP))
    return shorten_identifier(ident, identifier, max_length)


@lru_cache(maxsize=_CACHE_SIZE)
def _direct(identifier: str, max_length: int | None) -> str:
    return shorten_identifier(identifier.translate(_DIRECT_CLEANUP), identifier, max_length)


class NamingConvention:
    """Base class: path handling and shortening shared by every convention."""

    name: str = ""
    path_separator: str = PATH_SEPARATOR
    is_case_sensitive: bool = True
    _normalize: Callable[[str, int | None], str] = staticmethod(_direct)

    def __init__(self, max_length: int | None = None) -> None:
        self.max_length = max_length

    def __repr__(self) -> str:
        return f"{type(self).__name__}(max_length={self.max_length!r})"

    def normalize_identifier(self, identifier: str) -> str:
        """Normalize (and shorten) one identifier.

        Example: ``SnakeCaseNaming().normalize_identifier("CamelCase+1")`` -> ``'camel_casex1'``.
        """
        return self._normalize(_strip_checked(identifier), self.max_length)

    def normalize_table_identifier(self, identifier: str) -> str:
        """Normalize a table, dataset or schema name (same rules as columns).

        Example: ``SnakeCaseNaming().normalize_table_identifier("My Table")`` -> ``'my_table'``.
        """
        return self.normalize_identifier(identifier)

    def make_path(self, *identifiers: str) -> str:
        """Join identifiers with the path separator, dropping blank ones; no normalization.

        Example: ``SnakeCaseNaming().make_path("a", " ", "b")`` -> ``'a__b'``.
        """
        return self.path_separator.join(ident for ident in identifiers if ident.strip())

    def break_path(self, path: str) -> list[str]:
        """Split a path into its identifiers, dropping blank fragments.

        Example: ``SnakeCaseNaming().break_path("a__b")`` -> ``['a', 'b']``.
        """
        return [ident for ident in path.split(self.path_separator) if ident.strip()]

    def normalize_path(self, path: str) -> str:
        """Normalize every fragment of `path` and shorten the joined result.

        Example: ``SnakeCaseNaming().normalize_path("Parent__Child")`` -> ``'parent__child'``.
        """
        fragments = [self.normalize_identifier(ident) for ident in self.break_path(path)]
        return shorten_identifier(self.make_path(*fragments), path, self.max_length)

    def normalize_tables_path(self, path: str) -> str:
        """Like `normalize_path`, using the table identifier rules for each fragment.

        Example: ``SnakeCaseNaming().normalize_tables_path("Orders__Items")`` -> ``'orders__items'``.
        """
        fragments = [self.normalize_table_identifier(ident) for ident in self.break_path(path)]
        return shorten_identifier(self.make_path(*fragments), path, self.max_length)

    @overload
    def shorten_fragments(self) -> None: ...

    @overload
    def shorten_fragments(self, first: str, /, *normalized_identifiers: str) -> str: ...

    def shorten_fragments(self, *normalized_identifiers: str) -> str | None:
        """Join already-normalized identifiers and shorten the path; None when given nothing.

        Example: ``SnakeCaseNaming().shorten_fragments("orders", "items")`` -> ``'orders__items'``.
        """
        if not normalized_identifiers:
            return None
        path = self.make_path(*normalized_identifiers)
        return shorten_identifier(path, path, self.max_length)

    @staticmethod
    def shorten_identifier(normalized: str, original: str, max_length: int | None) -> str:
        """Shorten `normalized` to `max_length` with a hash tag of `original` (see module function).

        Example: ``SnakeCaseNaming.shorten_identifier("abc", "abc", None)`` -> ``'abc'``.
        """
        return shorten_identifier(normalized, original, max_length)


class SnakeCaseNaming(NamingConvention):
    """dlt's default ``snake_case`` convention (case-insensitive)."""

    name = "snake_case"
    is_case_sensitive = False
    _normalize = staticmethod(_snake_case)


class DuckCaseNaming(NamingConvention):
    """dlt's ``duck_case``: keeps Unicode and case, cleans new lines and double quotes."""

    name = "duck_case"
    _normalize = staticmethod(_duck_case)


class SqlCsV1Naming(NamingConvention):
    """dlt's ``sql_cs_v1``: SQL-safe identifiers preserving the source casing."""

    name = "sql_cs_v1"
    _normalize = staticmethod(_sql_cs_v1)


class SqlCiV1Naming(SqlCsV1Naming):
    """dlt's ``sql_ci_v1``: ``sql_cs_v1`` lower-cased (after shortening)."""

    name = "sql_ci_v1"
    is_case_sensitive = False

    def normalize_identifier(self, identifier: str) -> str:
        """Normalize like ``sql_cs_v1`` then lower-case.

        Example: ``SqlCiV1Naming().normalize_identifier("MyCol")`` -> ``'mycol'``.
        """
        return super().normalize_identifier(identifier).lower()


class DirectNaming(NamingConvention):
    """dlt's ``direct``: minimal changes, ``▶`` as path separator."""

    name = "direct"
    path_separator = "▶"


NAMING_CONVENTIONS: dict[str, type[NamingConvention]] = {
    cls.name: cls for cls in (SnakeCaseNaming, SqlCsV1Naming, SqlCiV1Naming, DuckCaseNaming, DirectNaming)
}
DEFAULT_NAMING = "snake_case"


def get_naming(name: str = DEFAULT_NAMING, max_length: int | None = None) -> NamingConvention:
    """Return an instance of the naming convention called `name`.

    Example: ``get_naming("snake_case", max_length=63).normalize_identifier("A b")`` -> ``'a_b'``.
    """
    cls = NAMING_CONVENTIONS.get(name)
    if cls is None:
        known = ", ".join(sorted(NAMING_CONVENTIONS))
        raise ConfigurationError(
            f"Unknown naming convention '{name}'. Known naming conventions: {known}. "
            "Fix: set `schema.naming` to one of them."
        )
    return cls(max_length)

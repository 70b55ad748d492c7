"""Executor-safe: the placeholders of a filesystem layout template and dlt 1.31's rules for a valid layout.

:meth:`Layout.parse <lakeload.kernel.filesystem.layout.Layout.parse>` checks a layout with
:func:`validate_template`; rendering splits the template with :func:`split_template`. Imports only the
standard library and :mod:`lakeload.errors`.

Example:
    >>> validate_template("{schema_name}/{table_name}/{load_id}.{file_id}", {})
    ('{schema_name}/{table_name}/{load_id}.{file_id}.{ext}', '{schema_name}/{table_name}/')
"""

from __future__ import annotations

import inspect
import logging
import re
import warnings
from collections.abc import Mapping

from lakeload.errors import LayoutError

__all__ = [
    "DEFAULT_LAYOUT",
    "DATE_TOKENS",
    "LAYOUT_EXAMPLE",
    "STANDARD_PLACEHOLDERS",
    "CantExtractTablePrefix",
    "InvalidFilesystemLayout",
    "InvalidPlaceholderCallback",
    "UnsafeLayoutSeparatorWarning",
    "check_callback",
    "placeholders",
    "split_template",
    "validate_template",
]

# the logger of the layout module, so log configuration keyed on it still applies
logger = logging.getLogger("lakeload.kernel.filesystem.layout")

DEFAULT_LAYOUT = "{table_name}/{load_id}.{file_id}.{ext}"

DATE_TOKENS: tuple[str, ...] = (
    "YYYY", "YY", "Y", "MMMM", "MMM", "MM", "M", "DD", "D", "HH", "H", "mm", "m",
    "dddd", "ddd", "dd", "d", "ss", "s", "SSSS", "SSS", "SS", "S", "Q",
)
"""pendulum format tokens usable as placeholders; each renders lower-cased (``{MMMM}`` -> ``november``)."""

_TIME_PLACEHOLDERS = ("curr_date", "timestamp", "timestamp_ms", "load_package_timestamp", "load_package_timestamp_ms")
_IDENTITY_PLACEHOLDERS = ("schema_name", "table_name", "load_id", "file_id", "ext")
STANDARD_PLACEHOLDERS: frozenset[str] = frozenset(_IDENTITY_PLACEHOLDERS + _TIME_PLACEHOLDERS + DATE_TOKENS)

_PLACEHOLDER_RE = re.compile(r"\{(.*?)\}")
_TABLE = "{table_name}"
_SCHEMA = "{schema_name}"
LAYOUT_EXAMPLE = f"An example of a valid layout: '{DEFAULT_LAYOUT}'."


class InvalidFilesystemLayout(LayoutError):
    """The layout uses a placeholder that is neither standard nor an extra placeholder, or has stray braces."""


class CantExtractTablePrefix(LayoutError):
    """The layout does not let lakeload find all files of one table (needed by replace and drop)."""

    def __init__(self, layout: str, problem: str) -> None:
        self.layout = layout
        super().__init__(f"Layout '{layout}' cannot be used to find the files of a table: {problem} {LAYOUT_EXAMPLE}")


class InvalidPlaceholderCallback(LayoutError):
    """An extra placeholder callable cannot be called with the five positional path arguments."""

    def __init__(self, name: str, reason: str = "") -> None:
        self.callback_name = name
        why = f" ({reason})" if reason else ""
        super().__init__(
            f"Extra placeholder '{name}' is a callable that cannot be called as "
            f"{name}(schema_name, table_name, load_id, file_id, ext){why}. Give it exactly these five "
            "positional parameters and return a string, e.g. "
            f"'def {name}(schema_name, table_name, load_id, file_id, ext): return table_name[:2]' "
            f"used in layout '{{table_name}}/{{{name}}}/{{load_id}}.{{file_id}}.{{ext}}'."
        )


class UnsafeLayoutSeparatorWarning(UserWarning):
    """The separator after ``{table_name}`` can occur inside snake_case table names."""


def placeholders(text: str) -> list[str]:
    """Return the placeholder names in ``text``, in order.

    Example:
        >>> placeholders("{table_name}/{load_id}.{file_id}.{ext}")
        ['table_name', 'load_id', 'file_id', 'ext']
    """
    return _PLACEHOLDER_RE.findall(text)


def split_template(template: str) -> tuple[tuple[str, bool], ...]:
    """Split a template into (text, is_placeholder) parts; stray braces outside placeholders are rejected.

    Example:
        >>> split_template("{table_name}/{file_id}")
        (('table_name', True), ('/', False), ('file_id', True))
    """
    parts: list[tuple[str, bool]] = []
    pos = 0
    for match in _PLACEHOLDER_RE.finditer(template):
        parts.append((template[pos : match.start()], False))
        parts.append((match.group(1), True))
        pos = match.end()
    parts.append((template[pos:], False))
    for text, is_placeholder in parts:
        if not is_placeholder and ("{" in text or "}" in text):
            raise InvalidFilesystemLayout(
                f"Layout '{template}' has an unmatched '{{' or '}}' in '{text}'. Braces may only wrap a "
                f"placeholder name. {LAYOUT_EXAMPLE}"
            )
    return tuple(p for p in parts if p[1] or p[0])


def _snake_case_allows(separator: str) -> bool:
    """Tell whether ``separator`` can occur inside a table name normalized to snake_case."""
    if separator in "__":  # the nested-table separator, or part of it
        return True
    probe = f"a{separator}b"
    return re.fullmatch(r"[a-z\d_]*", separator) is not None and "__" not in probe


def check_callback(name: str, value: object) -> None:
    """Raise :class:`InvalidPlaceholderCallback` when a callable extra placeholder cannot take the path arguments.

    Example:
        >>> check_callback("env", lambda schema_name, table_name, load_id, file_id, ext: "prod")
    """
    if not callable(value):
        return
    try:
        inspect.signature(value).bind("schema", "table", "load_id", "file_id", "ext")
    except TypeError as exc:
        raise InvalidPlaceholderCallback(name, str(exc)) from exc
    except ValueError:  # no signature available (some builtins): checked when called
        pass


def validate_template(layout: str, extras: Mapping[str, object], *,
                      warn_unsafe_separators: bool = True) -> tuple[str, str]:
    """Check ``layout`` with dlt's rules and return its ``(template, prefix_template)``.

    ``template`` is the layout with ``.{ext}`` appended when it has no ``{ext}``; ``prefix_template`` ends
    with the first character after ``{table_name}``. Raises :class:`InvalidFilesystemLayout` and
    :class:`CantExtractTablePrefix`; warns with :class:`UnsafeLayoutSeparatorWarning` unless told not to.
    Warnings point at the caller of :meth:`Layout.parse <lakeload.kernel.filesystem.layout.Layout.parse>`.

    Example:
        >>> validate_template("{table_name}/{env}/{load_id}.{file_id}.{ext}", {"env": "prod"})[1]
        '{table_name}/'
    """
    found = placeholders(layout)
    unknown = [p for p in found if p not in STANDARD_PLACEHOLDERS and p not in extras]
    if unknown:
        defined = f" Extra placeholders defined: {sorted(extras)}." if extras else ""
        raise InvalidFilesystemLayout(
            f"Layout '{layout}' uses unknown placeholder(s) {unknown}. Standard placeholders are "
            f"{sorted(STANDARD_PLACEHOLDERS)}.{defined} Fix the spelling or define the missing ones in "
            f"extra_placeholders, e.g. layout='{{table_name}}/{{env}}/{{load_id}}.{{file_id}}.{{ext}}' "
            "with extra_placeholders={'env': 'prod'}."
        )
    unused = [name for name in extras if name not in found]
    if unused:
        logger.info("Extra placeholders %s are not used in layout '%s'", unused, layout)
    shadowing = [name for name in extras if name in STANDARD_PLACEHOLDERS]
    if shadowing:
        warnings.warn(f"Extra placeholders {shadowing} have the names of standard placeholders; like dlt, "
                      "lakeload lets them replace schema, table, load and file values but not date and "
                      "time values.", UserWarning, stacklevel=3)

    if "table_name" not in found:
        raise CantExtractTablePrefix(layout, "it has no {table_name} placeholder.")
    before = found[: found.index("table_name")]
    if [p for p in before if p != "schema_name"]:
        raise CantExtractTablePrefix(
            layout, f"only {{schema_name}} may come before {{table_name}}, but the layout has {before} there."
        )
    template = layout if "ext" in found else layout + ".{ext}"
    end = template.index(_TABLE) + len(_TABLE)
    prefix_template = template[: end + 1]
    if prefix_template[-1] == "{":
        raise CantExtractTablePrefix(
            layout, "{table_name} must be followed by a literal separator such as '/' or '.', not directly "
            "by another placeholder."
        )
    split_template(template)  # rejects stray braces
    if warn_unsafe_separators:
        _warn_unsafe_separators(layout, prefix_template)
    return template, prefix_template


def _warn_unsafe_separators(layout: str, prefix_template: str) -> None:
    table_at = prefix_template.index(_TABLE)
    unsafe: list[str] = []
    head = prefix_template[:table_at]
    if _SCHEMA in head:
        segment = head[head.index(_SCHEMA) + len(_SCHEMA):]
        if _snake_case_allows(segment):
            unsafe.append(segment)
    separator = prefix_template[table_at + len(_TABLE):]
    if separator and _snake_case_allows(separator) and separator not in unsafe:
        unsafe.append(separator)
    if unsafe:
        warnings.warn(
            f"Layout '{layout}' separates {{table_name}} with {', '.join(repr(s) for s in unsafe)}, which can also "
            "occur inside snake_case table names: the prefix 'event_' of table 'event' also matches the files "
            "of its nested table 'event__child', so replace and drop would delete them too. Use '/' or '.', "
            f"e.g. '{DEFAULT_LAYOUT}', or pass warn_unsafe_separators=False to keep this layout.",
            UnsafeLayoutSeparatorWarning,
            stacklevel=4,
        )

"""Turning configuration values (environment strings, TOML values) into the types their readers expect.

>>> coerce_value("8", int, "PAGE_SIZE"), auto_cast("true"), flat_text(8)
(8, True, '8')
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from lakeload.errors import ConfigurationError

__all__ = ["auto_cast", "coerce_text", "coerce_value", "flat_text"]


def flat_text(value: Any) -> str | None:
    """A flat config value as the string a string-only consumer (Spark, delta-rs) wants; None when not flat.

    >>> flat_text(True), flat_text(8), flat_text({"a": 1})
    ('true', '8', None)
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def coerce_text(value: str, hint: type | None) -> Any:
    """Parse an environment string into the expected type (bool, int, float, dict/list as JSON)."""
    if hint is bool:
        return value.strip().lower() in ("1", "true", "yes", "on")
    if hint is int:
        return int(value)
    if hint is float:
        return float(value)
    if hint in (dict, list):
        return orjson.loads(value)
    return value


_INTEGER = re.compile(r"[+-]?[0-9]+")


def auto_cast(value: str) -> Any:
    """A string read without an expected type, cast as dlt's accessors do: bool, int, float, JSON object or list.

    >>> auto_cast("true"), auto_cast("5"), auto_cast("2.5"), auto_cast('{"a": 1}'), auto_cast("abc")
    (True, 5, 2.5, {'a': 1}, 'abc')
    """
    lowered = value.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if _INTEGER.fullmatch(value.strip()):
        return int(value)
    try:
        return float(value)
    except ValueError:
        pass
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        return value
    return parsed if isinstance(parsed, (dict, list)) else value


def coerce_value(value: Any, hint: type | None, source: str, secret: bool = False) -> Any:
    """`value` (from the environment or a TOML file) as `hint`: strings are parsed, numbers and booleans become
    text for `str`; a `ConfigurationError` naming `source` (and the value, unless `secret`) when a string cannot
    be parsed."""
    if hint is None:
        return value
    if isinstance(value, str):
        return value if hint is str else _coerce(value, hint, source, secret)
    if hint is str and isinstance(value, (int, float, bool)):
        return flat_text(value)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _coerce(value: str, hint: type | None, source: str, secret: bool = False) -> Any:
    try:
        return coerce_text(value, hint)
    except ValueError as exc:
        kind = "a JSON object" if hint is dict else "a JSON list" if hint is list else f"a {getattr(hint, '__name__', hint)}"
        if secret:  # neither the value nor the parser's message (which quotes it)
            raise ConfigurationError(f"The secret in {source} is not {kind}: fix its value there.") from None
        raise ConfigurationError(f"{source} = {value!r} is not {kind}: {exc}") from exc

"""Reading one TOML configuration file: a `ConfigFileError` naming file, line and column when it is malformed.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "config.toml")
>>> _ = open(path, "w").write('[destination.filesystem]\\nlayout = table_name\\n')
>>> read_toml(path)
Traceback (most recent call last):
...
lakeload.errors.ConfigFileError: Cannot read configuration file ... at line 2, column 10: Invalid value. ...
"""

from __future__ import annotations

import re
import sys

from lakeload.config.open_types import ConfigTree
from lakeload.errors import ConfigFileError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# Python 3.11-3.13's tomllib (and tomli < 2.1) put the position only in the message text; newer ones also
# give `lineno`/`colno`/`msg`, which are preferred.
_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_END = re.compile(r"\s*\(at end of document\)$")


def decode_error_position(exc: tomllib.TOMLDecodeError, text: str) -> tuple[str, int, int]:
    """The bare problem and the 1-based line and column of a `TOMLDecodeError` on `text`.

    >>> try:
    ...     tomllib.loads("a = 1\\nb = \\n")
    ... except tomllib.TOMLDecodeError as exc:
    ...     decode_error_position(exc, "a = 1\\nb = \\n")
    ('Invalid value', 2, 5)
    """
    message = str(exc)
    line, column = getattr(exc, "lineno", None), getattr(exc, "colno", None)
    problem = getattr(exc, "msg", None)
    if isinstance(line, int) and isinstance(column, int) and isinstance(problem, str):
        return problem, line, column
    match = _POSITION.search(message)
    if match:
        return message[: match.start()], int(match.group(1)), int(match.group(2))
    end = _END.search(message)
    lines = text.split("\n")
    return (message[: end.start()] if end else message), len(lines), len(lines[-1]) + 1


def _decode(path: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = len(before) - (before.rfind(b"\n") + 1) + 1
        raise ConfigFileError(
            path, "the file is not UTF-8 text", line, column, fix="Save it as UTF-8 (TOML files are always UTF-8)."
        ) from None


def read_toml_bytes(path: str) -> bytes:
    """The bytes of a configuration file; a `ConfigFileError` when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise ConfigFileError(
            path, exc.strerror or type(exc).__name__, fix="Make the file readable by this user, or move it away."
        ) from exc


def parse_toml(path: str, data: bytes) -> ConfigTree:
    """The tables of a TOML document read from `path`; a `ConfigFileError` with line and column when malformed."""
    text = _decode(path, data)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        problem, line, column = decode_error_position(exc, text)
        raise ConfigFileError(path, problem, line, column) from exc


def read_toml(path: str) -> ConfigTree:
    """Read and parse one configuration file (see `parse_toml`)."""
    return parse_toml(path, read_toml_bytes(path))

"""Cursor paths: a field name (`updated_at`), a dotted path (`meta.updated`) or a simple JSON path
(`$.meta.updated`, `items[0].ts`, `items[*].ts`, `"a.b"` for a name holding a dot), as dlt's `cursor_path`.

The value of a path in a record is its first match in document order, as dlt's JSON path lookup.

>>> path = parse_cursor_path("meta.updated")
>>> path.find({"meta": {"updated": 3}})
(True, 3)
>>> parse_cursor_path("updated_at").column
'updated_at'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lakeload.errors import IncrementalError

WILDCARD = object()
_TOKEN = re.compile(r'\s*(?:(?P<dot>\.)|\[\s*(?P<index>-?\d+|\*)\s*\]|"(?P<quoted>[^"]*)"|\'(?P<single>[^\']*)\'|(?P<star>\*)|(?P<name>[^.\[\]"\'\s*$]+))')

Step = str | int | object


@dataclass(frozen=True)
class CursorPath:
    """A parsed cursor path: `steps` are names, list indexes and wildcards; `column` is the one field of a simple path."""

    text: str
    steps: tuple[Step, ...]
    column: str | None

    def find(self, row: Any) -> tuple[bool, Any]:
        """(True, value) for the first match of the path in `row`; (False, None) when nothing matches."""
        if self.column is not None:
            return _field(row, self.column)
        for value in _matches(row, self.steps):
            return True, value
        return False, None


def _field(row: Any, name: str) -> tuple[bool, Any]:
    try:
        return True, row[name]
    except (KeyError, IndexError):
        return False, None
    except TypeError:  # objects (dataclasses, pydantic models) by attribute, as dlt
        if hasattr(row, name):
            return True, getattr(row, name)
        return False, None


def _matches(node: Any, steps: tuple[Step, ...]) -> Iterator[Any]:
    if not steps:
        yield node
        return
    step, rest = steps[0], steps[1:]
    if step is WILDCARD:
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            yield from _matches(child, rest)
    elif isinstance(step, int):
        if isinstance(node, list) and -len(node) <= step < len(node):
            yield from _matches(node[step], rest)
    elif isinstance(step, str):
        found, value = _field(node, step) if not isinstance(node, (list, str, bytes)) else (False, None)
        if found:
            yield from _matches(value, rest)


def parse_cursor_path(text: str) -> CursorPath:
    """Parse `text`; raises IncrementalError for syntax lakeload (and a simple JSON path) does not have."""
    if not isinstance(text, str) or not text.strip():
        raise IncrementalError(f"Incremental cursor_path must be a non-empty field name or JSON path, got {text!r}.")
    body, rooted = text.strip(), False
    if body.startswith("$"):
        body, rooted = body[1:], True
    steps: list[Step] = []
    position, expect_name = 0, not rooted
    while position < len(body):
        match = _TOKEN.match(body, position)
        if match is None or match.end() == position:
            raise _syntax_error(text)
        position = match.end()
        if match.group("dot"):
            if expect_name:
                raise _syntax_error(text)
            expect_name = True
            continue
        if match.group("index") is None and not expect_name:
            raise _syntax_error(text)  # a name must follow a dot (or start a path without '$')
        steps.append(_step(match))
        expect_name = False
    if not steps or expect_name and body:
        raise _syntax_error(text)
    simple = not rooted and len(steps) == 1 and isinstance(steps[0], str)
    return CursorPath(text, tuple(steps), steps[0] if simple else None)  # type: ignore[arg-type]


def _step(match: re.Match[str]) -> Step:
    if match.group("index") is not None:
        index = match.group("index")
        return WILDCARD if index == "*" else int(index)
    if match.group("star"):
        return WILDCARD
    for group in ("quoted", "single", "name"):
        if match.group(group) is not None:
            return match.group(group)
    return WILDCARD  # pragma: no cover - the pattern has no other group


def _syntax_error(text: str) -> IncrementalError:
    return IncrementalError(
        f"Incremental cursor_path {text!r} is not a field name or a simple JSON path. Use a field name "
        "('updated_at'), a dotted path ('meta.updated'), '$.meta.updated', list items ('items[0].ts', 'items[*].ts'), "
        'or quotes for names with dots (\'"a.b"\').'
    )

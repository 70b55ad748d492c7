"""Executor-safe: typed JSON lines for extracted items, so Python types survive driver -> executor.

JSON cannot hold ``datetime``, ``date``, ``time``, ``Decimal`` or ``bytes``. `dumps` writes each such
value as a string made of the tag character U+10FFFD (a private-use code point), a one-letter type
code and the value's text form; `loads` turns those strings back into the original types, so type
inference on the executor sees exactly what the resource yielded:

=====  ==========================================  ===========================================
code   written for                                 read back as
=====  ==========================================  ===========================================
``t``  ``datetime`` (incl. pendulum), isoformat    ``datetime`` (stdlib, naive stays naive)
``d``  ``date`` (incl. pendulum), isoformat        ``date``
``h``  ``time`` (incl. pendulum), isoformat        ``time``
``n``  ``Decimal`` (and subclasses), ``str()``     ``Decimal``
``b``  ``bytes`` (and subclasses), base64          ``bytes``
``s``  a *user* string that starts with the tag    the original string, unchanged
=====  ==========================================  ===========================================

Everything else follows orjson and dlt: UUIDs, enums and dataclasses are written natively (UUID as
its string, enum as its value), named tuples as objects, pydantic models via ``dict(by_alias=True)``,
non-string dict keys as strings, NaN and infinities as null. Integers outside the 64-bit range and
any other type raise `lakeload.errors.ExtractError`, as they make dlt's extract fail.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Callable, Sequence
from decimal import Decimal
from itertools import accumulate
from typing import Any

import orjson

from lakeload.errors import ExtractError

TAG = "\U0010fffd"
TAG_BYTES = TAG.encode("utf-8")
# its first byte, which starts only code points U+100000-U+10FFFF: searched for with memchr, ~10x faster than the
# four bytes (over 1 GB of extracted JSON: ~0.07 instead of ~0.9 us per 1 KB event here)
TAG_LEAD = TAG_BYTES[:1]
# Items are dumped with str keys only first: orjson is faster without OPT_NON_STR_KEYS (a page of GitHub-like
# events: ~5.0-5.8 -> ~3.5-4.9 us per event in alternating passes); orjson refuses a key of another type, and only
# then is the item (or page) dumped again with it. The bytes are the same either way.
_STR_KEYS = orjson.OPT_PASSTHROUGH_DATETIME
_OPTIONS = _STR_KEYS | orjson.OPT_NON_STR_KEYS
_ESCAPE = TAG + "s"

_DECODERS: dict[str, Callable[[str], Any]] = {
    "t": datetime.datetime.fromisoformat,
    "d": datetime.date.fromisoformat,
    "h": datetime.time.fromisoformat,
    "n": Decimal,
    "b": base64.b64decode,
    "s": lambda s: s,
}


def _untyped(obj: Any) -> Any:
    """Types that are not tagged but turned into JSON-able values, as dlt does."""
    for attr in ("asdict", "_asdict"):
        if callable(method := getattr(obj, attr, None)):
            return method()
    if callable(getattr(obj, "model_dump", None)):  # pydantic v2 model
        return obj.model_dump(by_alias=True)
    if hasattr(type(obj), "__fields__") and callable(getattr(obj, "dict", None)):  # pydantic v1
        return obj.dict(by_alias=True)
    name = f"{type(obj).__module__}.{type(obj).__qualname__}"
    raise TypeError(name)


def _tag(obj: Any) -> str | None:
    if isinstance(obj, datetime.datetime):
        return TAG + "t" + obj.isoformat()
    if isinstance(obj, datetime.date):
        return TAG + "d" + obj.isoformat()
    if isinstance(obj, datetime.time):
        return TAG + "h" + obj.isoformat()
    if isinstance(obj, Decimal):
        return TAG + "n" + str(obj)
    if isinstance(obj, bytes):
        return TAG + "b" + base64.b64encode(obj).decode("ascii")
    return None


_EXACT_TAGGERS: dict[type, Callable[[Any], str]] = {
    datetime.datetime: lambda v: TAG + "t" + v.isoformat(),
    datetime.date: lambda v: TAG + "d" + v.isoformat(),
    datetime.time: lambda v: TAG + "h" + v.isoformat(),
    Decimal: lambda v: TAG + "n" + str(v),
}


def _escape_user_strings(value: Any) -> Any:
    """Copy of `value` where user strings starting with the tag are escaped (rare slow path)."""
    if isinstance(value, str):
        return _ESCAPE + value if value.startswith(TAG) else value
    if isinstance(value, dict):
        return {k: _escape_user_strings(v) for k, v in value.items()}
    if hasattr(value, "_asdict"):
        return _escape_user_strings(value._asdict())
    if isinstance(value, (list, tuple)):
        return [_escape_user_strings(v) for v in value]
    return value


def _extract_error(item: Any, exc: orjson.JSONEncodeError) -> ExtractError:
    cause = exc.__cause__
    big = _big_integer_path(item)
    if big is not None:
        what = f"the integer at `{big}`, beyond the 64-bit range,"
    elif isinstance(cause, TypeError) and cause.args:
        what = f"values of type `{cause.args[0]}`"
    else:
        what = f"this item ({exc})"
    return ExtractError(
        f"lakeload cannot serialize {what} in an item of type `{type(item).__name__}`. Supported: "
        "str, int (64-bit), float, bool, None, dict, list, tuple, datetime, date, time, Decimal, bytes, "
        "UUID, Enum, dataclasses, named tuples and pydantic models. Fix: convert the value in your "
        "resource, e.g. numpy scalars with `.item()`, arrays with `.tolist()`, sets with `list()`, "
        "integers beyond 64 bits with `Decimal(...)` or `str(...)`."
    )


def _big_integer_path(value: Any, path: str = "") -> str | None:
    """Where in `value` an integer JSON cannot carry is (`sub[0].big`; orjson takes -2**63 .. 2**64-1), or None.

    >>> _big_integer_path({"id": 1, "sub": [{"big": 2**70}]})
    'sub[0].big'
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return path or "the item" if not -(2**63) <= value < 2**64 else None
    if isinstance(value, dict):
        children: Any = ((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        children = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    return next((found for key, child in children if (found := _big_integer_path(child, key)) is not None), None)


class _Tagger:
    """orjson's `default`: typed values become tagged text (counted in `tags`), other known types JSON values."""

    __slots__ = ("tags",)

    def __init__(self) -> None:
        self.tags = 0

    def __call__(self, obj: Any) -> Any:
        exact = _EXACT_TAGGERS.get(type(obj))
        tagged = exact(obj) if exact is not None else _tag(obj)
        if tagged is None:
            return _untyped(obj)
        self.tags += 1
        return tagged


def _dumps_each(items: Sequence[Any], option: int) -> tuple[list[bytes], _Tagger]:
    """orjson's dump of every item (with `option` added) and the tagger that served them: with str keys only,
    or, when orjson refuses a key of another type, all again with any keys (a fresh tagger)."""
    dumps = orjson.dumps
    try:
        tagger = _Tagger()
        return [dumps(item, default=tagger, option=_STR_KEYS | option) for item in items], tagger
    except orjson.JSONEncodeError:  # a key that is not a str (any other error is raised again below)
        tagger = _Tagger()
        return [dumps(item, default=tagger, option=_OPTIONS | option) for item in items], tagger


def dumps_tracked(item: Any) -> tuple[bytes, bool]:
    """Serialize `item` to one JSON document (no newline); also say whether any value was tagged.

    Example: ``dumps_tracked({"at": datetime.date(2024, 5, 1)})`` -> ``(b'{"at":"\\xf4\\x8f\\xbf\\xbdd2024-05-01"}', True)``.
    """
    try:
        (out,), tagger = _dumps_each((item,), 0)
        # more tag characters than tagged values: some user string carries it, escape those
        if out.find(TAG_LEAD) >= 0 and out.count(TAG_BYTES) != tagger.tags:
            escaped = orjson.dumps(_escape_user_strings(item), default=tagger, option=_OPTIONS)
            return escaped, tagger.tags > 0 or escaped != out
    except orjson.JSONEncodeError as exc:
        raise _extract_error(item, exc) from exc
    return out, tagger.tags > 0


def dumps_page(items: Sequence[Any]) -> tuple[bytes, list[int], bool]:
    """Every item as in `dumps_tracked`, one line each (ending with a newline), as one block of bytes; also
    where each item's line ends in it, and whether any value was tagged.

    One `default` serves the whole page and the tag check runs once over the block; only a page where some
    user string carries the tag character is serialized again item by item (`dumps_tracked` escapes those).

    >>> dumps_page([{"a": 1}, {"b": True}])
    (b'{"a":1}\\n{"b":true}\\n', [8, 19], False)
    """
    try:
        lines, tagger = _dumps_each(items, orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        for item in items:  # the item that fails raises its own error
            dumps_tracked(item)
        raise
    block, tagged = b"".join(lines), tagger.tags > 0
    if block.find(TAG_LEAD) >= 0 and block.count(TAG_BYTES) != tagger.tags:  # no lead byte: no tag at all
        tracked = [dumps_tracked(item) for item in items]
        lines = [line + b"\n" for line, _ in tracked]
        block, tagged = b"".join(lines), any(flag for _, flag in tracked)
    return block, list(accumulate(map(len, lines))), tagged


def dumps(item: Any) -> bytes:
    """Serialize `item` to one typed JSON document without a trailing newline.

    Example: ``dumps({"price": Decimal("1.10")})`` -> ``b'{"price":"\\xf4\\x8f\\xbf\\xbdn1.10"}'``.
    """
    return dumps_tracked(item)[0]


def may_have_tags(line: bytes) -> bool:
    """Cheap check whether a serialized line may contain tagged values.

    Example: ``may_have_tags(b'{"a":1}')`` -> ``False``.
    """
    return line.find(TAG_LEAD) >= 0 and TAG_BYTES in line


def _decode_str(value: str) -> Any:
    decoder = _DECODERS.get(value[1:2])
    if decoder is None:
        return value
    try:
        return decoder(value[2:])
    except (ValueError, ArithmeticError):
        return value  # not written by us: leave as is


def _decode(value: Any) -> Any:
    if isinstance(value, str):
        return _decode_str(value) if value.startswith(TAG) else value
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, str):
                if v.startswith(TAG):
                    value[k] = _decode_str(v)
            elif isinstance(v, (dict, list)):
                _decode(v)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, str):
                if v.startswith(TAG):
                    value[i] = _decode_str(v)
            elif isinstance(v, (dict, list)):
                _decode(v)
    return value


def loads(line: bytes | str, may_have_tags: bool = True) -> Any:
    """Parse one typed JSON document, restoring tagged values when `may_have_tags` is True.

    Example: ``loads(dumps({"d": Decimal("1.5")}), True)`` -> ``{'d': Decimal('1.5')}``.
    """
    obj = orjson.loads(line)
    return _decode(obj) if may_have_tags else obj

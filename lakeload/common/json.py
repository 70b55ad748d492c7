"""dlt's `json` (`from dlt.common import json`, `from dlt.common.json import json`): orjson with dlt 1.31's
conversions, for user code that reads and writes JSON as dlt scripts do.

`dumps`/`dumpb`/`dump` write what JSON cannot hold as text: a Decimal as its digits, bytes as base64, a
datetime, date or time in ISO form (`dumps(..., utc_z=True)`: UTC as ``Z``; `datetime_encoder=`: datetimes as it
renders them), a UUID as its text; dataclasses, named tuples, enums and pydantic models as their values.
`typed_dumps`/`typed_dumpb`/`typed_dump` mark those values with dlt's typed text (a private-use character before
the text), which `typed_loads`/`typed_loadb` turn back into Decimal, datetime, date, time, UUID and bytes.
`set_custom_encoder` adds a last-resort encoder. This module is itself the `json` object:
`from lakeload.common.json import json` and `from lakeload.common import json` give it.

>>> json.dumps({"price": Decimal("1.10"), "at": datetime.date(2024, 5, 1)})
'{"price":"1.10","at":"2024-05-01"}'
>>> json.typed_loads(json.typed_dumps({"price": Decimal("1.10")}))
{'price': Decimal('1.10')}
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import enum
import sys
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import IO, TYPE_CHECKING, Any

import orjson

from lakeload.common.utils import map_nested_values_in_place
from lakeload.schema import dlt_typed_text

__all__ = [
    "DatetimeEncoder",
    "JsonEncoder",
    "JsonSerializable",
    "dump",
    "dumpb",
    "dumps",
    "json",
    "load",
    "loadb",
    "loads",
    "set_custom_encoder",
    "typed_dump",
    "typed_dumpb",
    "typed_dumps",
    "typed_loadb",
    "typed_loads",
]

JsonSerializable = str | dict[str, Any]
"""What an encoder returns for a value orjson cannot write: text or an object."""
JsonEncoder = Callable[[Any], JsonSerializable]
"""An encoder for values of other types; raises TypeError for a value it cannot encode either."""
DatetimeEncoder = Callable[[datetime.datetime], Any]
"""How `dumps(..., datetime_encoder=...)` renders a datetime instead of its ISO text."""

_custom_encoder: list[JsonEncoder] = []
_OPTIONS = orjson.OPT_NON_STR_KEYS


def set_custom_encoder(encoder: JsonEncoder | None) -> None:
    """Use `encoder` for values none of the conversions above takes (it replaces an earlier one; None: none)."""
    _custom_encoder[:] = [encoder] if encoder is not None else []


def _structured(obj: Any, pydantic_dump: Callable[[Any], Any]) -> Any:
    """Named tuples, dataclasses, pydantic models, enums and custom-encoded values as JSON values."""
    for method in ("asdict", "_asdict"):
        if hasattr(obj, method):
            return getattr(obj, method)()
    if callable(getattr(obj, "model_dump", None)):
        return pydantic_dump(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if isinstance(obj, enum.Enum):
        return obj.value
    if _custom_encoder:
        return _custom_encoder[0](obj)
    raise TypeError(f"`{obj!r}` is not JSON serializable")


def _plain(obj: Any) -> Any:
    if isinstance(obj, Decimal):
        return str(obj)
    if isinstance(obj, (datetime.date, datetime.time)):  # datetime is a date
        return obj.isoformat()
    if isinstance(obj, uuid.UUID):
        return str(obj)
    if isinstance(obj, bytes):
        return base64.b64encode(obj).decode("ascii")
    return _structured(obj, lambda model: model.model_dump())


def _typed(obj: Any) -> Any:
    text = dlt_typed_text.encode(obj)
    if text is not None:
        return text
    if isinstance(obj, uuid.UUID):
        return dlt_typed_text.UUID + str(obj)
    return _structured(obj, lambda model: model.model_dump(by_alias=True))


def _options(sort_keys: bool, pretty: bool, extra: int = 0) -> int:
    return (_OPTIONS | extra | (orjson.OPT_SORT_KEYS if sort_keys else 0)
            | (orjson.OPT_INDENT_2 if pretty else 0))


def dumpb(obj: Any, sort_keys: bool = False, pretty: bool = False) -> bytes:
    """`obj` as JSON (UTF-8 bytes); `pretty` indents by 2, `sort_keys` sorts object keys."""
    return orjson.dumps(obj, default=_plain, option=_options(sort_keys, pretty))


def dumps(obj: Any, sort_keys: bool = False, pretty: bool = False, utc_z: bool = False,
          datetime_encoder: DatetimeEncoder | None = None) -> str:
    """`obj` as JSON text (see `dumpb`); `utc_z` writes a UTC offset as ``Z``, `datetime_encoder` renders each
    datetime (its result is written as it is)."""
    extra = orjson.OPT_UTC_Z if utc_z else 0
    default = _plain
    if datetime_encoder is not None:
        extra |= orjson.OPT_PASSTHROUGH_DATETIME  # else orjson writes datetimes itself

        def default(obj: Any) -> Any:
            return datetime_encoder(obj) if isinstance(obj, datetime.datetime) else _plain(obj)

    return orjson.dumps(obj, default=default, option=_options(sort_keys, pretty, extra)).decode("utf-8")


def dump(obj: Any, fp: IO[bytes], sort_keys: bool = False, pretty: bool = False) -> None:
    """Write `obj` as JSON to the binary file `fp`."""
    fp.write(dumpb(obj, sort_keys, pretty))


def typed_dumpb(obj: Any, sort_keys: bool = False, pretty: bool = False) -> bytes:
    """`obj` as JSON with Decimal, datetime, date, time, UUID and bytes values kept as dlt's typed text."""
    return orjson.dumps(obj, default=_typed, option=_options(sort_keys, pretty, orjson.OPT_PASSTHROUGH_DATETIME))


def typed_dumps(obj: Any, sort_keys: bool = False, pretty: bool = False) -> str:
    """`typed_dumpb` as text."""
    return typed_dumpb(obj, sort_keys, pretty).decode("utf-8")


def typed_dump(obj: Any, fp: IO[bytes], pretty: bool = False) -> None:
    """Write `typed_dumpb(obj)` to the binary file `fp`."""
    fp.write(typed_dumpb(obj, pretty=pretty))


def loadb(s: bytes | bytearray | memoryview) -> Any:
    """Parse JSON bytes."""
    return orjson.loads(s)


def loads(s: str) -> Any:
    """Parse JSON text."""
    return orjson.loads(s)


def load(fp: IO[bytes] | IO[str]) -> Any:
    """Parse the JSON that the file `fp` (binary or text) holds."""
    return orjson.loads(fp.read())


def _from_hex(text: str) -> bytes:
    return bytes.fromhex(text[2:] if text[:2] in ("0x", "0X") else text)


def _parse_datetime(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)


# by the typed text's character, from dlt_typed_text.PUA on (dlt's HexBytes read back as bytes, its Wei as a Decimal)
_DECODERS: tuple[Callable[[str], Any], ...] = (
    Decimal, _parse_datetime, datetime.date.fromisoformat, uuid.UUID, _from_hex,
    base64.b64decode, Decimal, datetime.time.fromisoformat,
)


def _decoded(value: str) -> Any:
    kind = ord(value[0]) - dlt_typed_text.PUA if len(value) > 1 else -1
    if not 0 <= kind < len(_DECODERS):
        return value
    try:
        return _DECODERS[kind](value[1:])
    except Exception:  # text that only starts with such a character: kept as it is
        return value


def _untyped(obj: Any) -> Any:
    """`obj` with typed text decoded; dicts and lists are changed in place."""
    if isinstance(obj, (dict, list)):
        return map_nested_values_in_place(_untyped_leaf, obj)
    return _untyped_leaf(obj)


def _untyped_leaf(value: Any) -> Any:
    return _decoded(value) if isinstance(value, str) else value


def typed_loadb(s: bytes | bytearray | memoryview) -> Any:
    """Parse JSON bytes, turning dlt's typed text back into the values `typed_dumpb` wrote."""
    return _untyped(orjson.loads(s))


def typed_loads(s: str) -> Any:
    """Parse JSON text, as `typed_loadb`."""
    return _untyped(orjson.loads(s))


# this module: dlt's `json` object is its JSON implementation module too
if TYPE_CHECKING:
    import lakeload.common.json as json
else:
    json = sys.modules[__name__]

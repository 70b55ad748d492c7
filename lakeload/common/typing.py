"""dlt's type aliases (`dlt.common.typing`) as user code imports them: `TDataItem(s)`, `TAnyDateTime`,
`TSecretStrValue`, `StrAny`, `DictStrAny`, `TFun`, ... Each is the same type dlt 1.31 defines; lakeload's own
modules do not use them (they have their own, narrower types).

>>> from lakeload.common.typing import TDataItems
>>> def page() -> TDataItems:
...     return [{"id": 1}]
>>> page()
[{'id': 1}]
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from re import Pattern
from typing import IO, Annotated, Any, Literal, NamedTuple, NewType, TypeAlias, TypedDict, TypeVar

import pendulum

__all__ = [
    "AnyFun",
    "AnyType",
    "CallableAny",
    "DictStrAny",
    "DictStrOptionalStr",
    "DictStrStr",
    "NoneType",
    "REPattern",
    "SecretSentinel",
    "StrAny",
    "StrOrBytesPath",
    "StrStr",
    "StrStrStr",
    "TAny",
    "TAnyClass",
    "TAnyDateTime",
    "TColumnNames",
    "TDataItem",
    "TDataItems",
    "TFileOrPath",
    "TFun",
    "TLoaderFileFormat",
    "TSecretStrValue",
    "TSecretValue",
    "TSortOrder",
    "TTableNames",
    "TTimeInterval",
    "TimedeltaSeconds",
    "TypedDict",
]

AnyType: TypeAlias = Any
CallableAny = NewType("CallableAny", Any)  # type: ignore[valid-newtype]  # dlt's runtime shape of TSecretValue
NoneType = type(None)
DictStrAny: TypeAlias = dict[str, Any]
DictStrStr: TypeAlias = dict[str, str]
DictStrOptionalStr: TypeAlias = dict[str, str | None]
StrAny: TypeAlias = Mapping[str, Any]
StrStr: TypeAlias = Mapping[str, str]
StrStrStr: TypeAlias = Mapping[str, Mapping[str, str]]
AnyFun: TypeAlias = Callable[..., Any]
TFun = TypeVar("TFun", bound=AnyFun)
TAny = TypeVar("TAny", bound=Any)
TAnyClass = TypeVar("TAnyClass", bound=object)
TimedeltaSeconds: TypeAlias = int | float | datetime.timedelta
StrOrBytesPath: TypeAlias = str | bytes | PathLike[str] | PathLike[bytes]
REPattern: TypeAlias = Pattern[str]


class SecretSentinel:
    """The marker in `Annotated[...]` that makes a type a secret (`TSecretStrValue`)."""


TSecretValue: TypeAlias = Annotated[CallableAny, SecretSentinel]
TSecretStrValue: TypeAlias = Annotated[str, SecretSentinel]
"""A secret string: with `= lakeload.secrets.value` as the default, resolved from secrets like any other."""

TColumnNames: TypeAlias = str | Sequence[str]
TTableNames: TypeAlias = str | Sequence[str]
TDataItem: TypeAlias = Any
"""One data item a resource yields (a dict, an Arrow table, a model, ...)."""
TDataItems: TypeAlias = TDataItem | list[TDataItem]
"""One item or a list of them (a page)."""
TAnyDateTime: TypeAlias = pendulum.DateTime | pendulum.Date | datetime.datetime | datetime.date | str | float | int
"""A point in time as a pendulum or stdlib object, ISO text or a Unix timestamp."""


class TTimeInterval(NamedTuple):
    """A time interval `[start, end)` of aware datetimes."""

    start: datetime.datetime
    end: datetime.datetime


TFileOrPath: TypeAlias = str | PathLike[str] | IO[Any]
TSortOrder: TypeAlias = Literal["asc", "desc"]
TLoaderFileFormat: TypeAlias = Literal["jsonl", "typed-jsonl", "insert_values", "parquet", "csv", "reference", "model"]

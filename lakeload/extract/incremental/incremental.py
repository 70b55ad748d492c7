"""`Incremental`: a cursor over a resource's data whose last value is kept in the pipeline state, as dlt's.

Give a resource function an argument whose default is an incremental; while a pipeline extracts the resource
the argument is a live instance bound to the state (`last_value`, `start_value`, ...) and the items the
resource yields are filtered to the new ones. The state lives where dlt keeps it:
`state["sources"][<source>]["resources"][<resource>]["incremental"][<cursor_path>]`.

>>> import os, tempfile
>>> import lakeload
>>> api_tickets = [{"id": 1, "updated_at": "2024-01-02T00:00:00Z"}, {"id": 2, "updated_at": "2024-01-05T00:00:00Z"}]
>>> @lakeload.resource(primary_key="id")
... def tickets(updated_at=lakeload.sources.incremental("updated_at", initial_value="2024-01-01T00:00:00Z")):
...     print("since", updated_at.last_value)
...     yield from [t for t in api_tickets if t["updated_at"] >= updated_at.last_value]  # api.tickets(since=...)
>>> tmp = tempfile.TemporaryDirectory()
>>> pipeline = lakeload.pipeline("tickets", destination=lakeload.destinations.filesystem(os.path.join(tmp.name, "bucket")),
...                              pipelines_dir=tmp.name)
>>> pipeline.extract(tickets).load_packages[0].row_counts
since 2024-01-01T00:00:00Z
{'tickets': 2}
>>> pipeline.state["sources"]["tickets"]["resources"]["tickets"]["incremental"]["updated_at"]["last_value"]
'2024-01-05T00:00:00Z'
>>> pipeline.extract(tickets).load_packages[0].row_counts   # ticket 2 was loaded already
since 2024-01-05T00:00:00Z
{}
"""

from __future__ import annotations

import datetime as dt
import typing
from collections.abc import Callable, Mapping
from typing import Any, Generic, Literal, TypedDict, TypeVar, cast

import pendulum

from lakeload.destinations.state_types import ResourceState
from lakeload.errors import IncrementalCursorPathMissing, IncrementalError
from lakeload.extract.incremental.cursor import parse_cursor_path
from lakeload.extract.incremental.lag import lagged_last_value
from lakeload.extract.incremental.transform import Filter, RunRange
from lakeload.kernel.spark.incremental import KeyHint

TCursorValue = TypeVar("TCursorValue")


class IncrementalState(TypedDict, total=False):
    """An incremental's state, `resource_state["incremental"][<cursor_path>]` (dlt's shape)."""

    initial_value: Any  # the cursor's type: a datetime, a number, a string ...
    last_value: Any
    unique_hashes: list[str]  # hashes of the rows at `last_value` (de-duplication at the boundary)
    start_value: Any


class IncrementalArgs(TypedDict, total=False):
    """`incremental=` as a dict of `Incremental`'s settings (dlt's `IncrementalArgs`)."""

    cursor_path: str | None
    initial_value: Any
    last_value_func: Callable[[Any], Any] | Literal["min", "max"]
    primary_key: KeyHint
    end_value: Any
    row_order: Literal["asc", "desc"] | None
    allow_external_schedulers: bool | None
    on_cursor_value_missing: Literal["raise", "include", "exclude"]
    lag: float | None
    range_start: Literal["open", "closed"]
    range_end: Literal["open", "closed"]


RANGES = ("open", "closed")
ON_MISSING = ("raise", "include", "exclude")
ROW_ORDERS = ("asc", "desc")


class Incremental(Generic[TCursorValue]):
    """Incremental loading on `cursor_path` (see the module docstring); dlt's `dlt.sources.incremental`.

    >>> cursor: Incremental[int] = Incremental("id", initial_value=0)
    >>> cursor.last_value_func is max
    True
    """

    def __init__(
        self,
        cursor_path: str | None = None,
        initial_value: TCursorValue | None = None,
        last_value_func: Callable[[Any], Any] | Literal["min", "max"] = max,
        primary_key: KeyHint = None,
        end_value: TCursorValue | None = None,
        row_order: Literal["asc", "desc"] | None = None,
        allow_external_schedulers: bool | None = None,
        on_cursor_value_missing: Literal["raise", "include", "exclude"] = "raise",
        lag: float | None = None,
        range_start: Literal["open", "closed"] = "closed",
        range_end: Literal["open", "closed"] = "open",
    ) -> None:
        if cursor_path:
            parse_cursor_path(cursor_path)
        self.cursor_path = cursor_path
        self.last_value_func = _last_value_func(last_value_func)
        self.initial_value = initial_value
        self.end_value = end_value
        self.primary_key = primary_key
        self.row_order = _one_of("row_order", row_order, ROW_ORDERS, none_ok=True)
        self.allow_external_schedulers = allow_external_schedulers
        self.on_cursor_value_missing = _one_of("on_cursor_value_missing", on_cursor_value_missing, ON_MISSING)
        self.lag = lag
        self.range_start = _one_of("range_start", range_start, RANGES)
        self.range_end = _one_of("range_end", range_end, RANGES)
        self.resource_name: str | None = None
        self._key_from_hints = primary_key is None
        self._state: IncrementalState | None = None
        self._start_value: Any = initial_value
        self._state_start_value: Any = None
        self._filters: dict[type[Filter], Filter] = {}
        self.start_out_of_range = self.end_out_of_range = False

    # -- configuration ---------------------------------------------------------------------------------------
    def _settings(self) -> IncrementalArgs:
        return {
            "cursor_path": self.cursor_path, "initial_value": self.initial_value, "end_value": self.end_value,
            "last_value_func": self.last_value_func, "primary_key": self.primary_key, "row_order": self.row_order,
            "allow_external_schedulers": self.allow_external_schedulers, "lag": self.lag,
            "on_cursor_value_missing": self.on_cursor_value_missing, "range_start": self.range_start,
            "range_end": self.range_end,
        }

    def merge(self, other: Incremental[Any]) -> Incremental[TCursorValue]:
        """A new incremental with this one's settings, overridden by those `other` sets (not None), as dlt's merge.

        >>> Incremental("id", initial_value=1).merge(Incremental(initial_value=5)).initial_value
        5
        """
        settings = self._settings()
        settings.update(cast(IncrementalArgs, {k: v for k, v in other._settings().items() if v is not None}))
        merged: Incremental[TCursorValue] = type(self)(**settings)
        merged.resource_name = other.resource_name or self.resource_name
        merged._key_from_hints = self._key_from_hints and other._key_from_hints
        orig = getattr(self, "__orig_class__", None) or getattr(other, "__orig_class__", None)
        if orig is not None:
            merged.__orig_class__ = orig  # type: ignore[attr-defined]
        return merged

    def copy(self) -> Incremental[TCursorValue]:
        """An unbound copy with the same settings."""
        return self.merge(self)

    @classmethod
    def ensure_instance(cls, value: Incremental[Any] | IncrementalArgs) -> Incremental[Any]:
        """`value` as an incremental: an instance as it is, a dict of settings (dlt's `IncrementalArgs`) made one."""
        if isinstance(value, Incremental):
            return value
        if isinstance(value, Mapping):
            return cls(**cast(IncrementalArgs, value))
        raise IncrementalError(f"incremental= takes lakeload.sources.incremental(...) or a dict of its settings, got {value!r}.")

    def is_partial(self) -> bool:
        """True without a cursor path (an override that only changes, e.g., the initial value)."""
        return not self.cursor_path

    def set_key_from_hints(self, primary_key: KeyHint) -> None:
        """Use the resource's primary key for de-duplication unless the incremental was given its own."""
        if self._key_from_hints:
            self.primary_key = primary_key

    def cursor_value_type(self) -> type | None:
        """The cursor's type: the `Incremental[...]` argument when declared, else the initial value's type."""
        args = typing.get_args(getattr(self, "__orig_class__", None))
        if args and isinstance(args[0], type):
            return args[0]
        return type(self.initial_value) if self.initial_value is not None else None

    # -- state and binding -----------------------------------------------------------------------------------
    def bind(self, resource_name: str, resource_state: Callable[[], ResourceState]) -> Incremental[TCursorValue]:
        """Bind to the state of `resource_name` for one run (`resource_state()` gives the resource's state)."""
        if self.is_partial():
            raise IncrementalCursorPathMissing(resource_name, "", None, "The incremental was created without a cursor_path. ")
        self._check_range()
        self.resource_name = resource_name
        self._filters = {}
        self.start_out_of_range = self.end_out_of_range = False
        if self.end_value is not None:  # a fixed range: its state is a throwaway, never stored
            self._state = self._new_state()
        else:
            incremental = resource_state().setdefault("incremental", {})
            self._state = incremental.setdefault(self.cursor_path, {})
            if not self._state:
                self._state.update(self._new_state())
        self._start_value = self._lagged(self._state["last_value"])
        self._state_start_value = self._state["last_value"]
        return self

    def _new_state(self) -> IncrementalState:
        value = self.initial_value
        return {"initial_value": value, "last_value": value, "unique_hashes": [], "start_value": value}

    def _lagged(self, value: Any) -> Any:
        return lagged_last_value(self.lag, self.last_value_func, self.initial_value, self.end_value, value,
                                 self.resource_name, self.cursor_value_type())

    def _check_range(self) -> None:
        if self.end_value is None:
            return
        if self.initial_value is None:
            raise IncrementalError("Incremental end_value was given without initial_value: give both to load a fixed range.")
        try:
            ordered = self.last_value_func([self.end_value, self.initial_value]) == self.end_value
        except Exception as exc:
            raise IncrementalError(
                f"Incremental initial_value={self.initial_value!r} and end_value={self.end_value!r} cannot be compared "
                f"({exc}): give them the same type (and tz-awareness)."
            ) from exc
        if not ordered:
            func = self.last_value_func
            word = "higher" if func is max else "lower" if func is min else "later (by last_value_func)"
            raise IncrementalError(
                f"Incremental initial_value={self.initial_value!r} is not before end_value={self.end_value!r}: "
                f"end_value must be {word} than initial_value."
            )

    @property
    def state(self) -> IncrementalState:
        """The bound state entry (`initial_value`, `last_value`, `unique_hashes`, `start_value`)."""
        if self._state is None:
            raise IncrementalError(
                f"The incremental on '{self.cursor_path}' is not bound: its state is known only while a pipeline "
                "extracts the resource that uses it."
            )
        return self._state

    @property
    def start_value(self) -> TCursorValue | None:
        """The last value when the run started (lagged); the initial value before binding."""
        return _public(self._start_value, self.cursor_value_type())  # type: ignore[no-any-return]

    @property
    def last_value(self) -> TCursorValue | None:
        """The cursor value reached so far (the start value until new items pass)."""
        if self._state is None:
            return _public(self.initial_value, self.cursor_value_type())  # type: ignore[no-any-return]
        return _public(self._lagged(self._state["last_value"]), self.cursor_value_type())  # type: ignore[no-any-return]

    def get_state(self) -> IncrementalState:
        """The bound state entry (dlt's name)."""
        return self.state

    # -- filtering -------------------------------------------------------------------------------------------
    def run_range(self) -> RunRange:
        """The settings of this run that the item filters read."""
        return RunRange(
            self.resource_name or "", parse_cursor_path(self.cursor_path or ""), self._start_value, self.end_value,
            self.last_value_func, self.primary_key, set(self.state["unique_hashes"]), self.on_cursor_value_missing,
            self.lag, self.range_start, self.range_end,
        )

    def filter_for(self, kind: type[Filter]) -> Filter:
        """The run's filter of one kind of items (records, Arrow, Spark), made on first use."""
        if kind not in self._filters:
            self._filters[kind] = kind(self.run_range())  # type: ignore[call-arg]
        return self._filters[kind]

    def record(self, found: Filter, kept_any: bool) -> None:
        """Write what `found` tracked to the state, as dlt does after every item."""
        state = self.state
        if self.lag and state.get("last_value") is not None:
            found.last_value = self.last_value_func((found.last_value, state["last_value"]))
        state["last_value"] = found.last_value
        if kept_any:
            state["start_value"] = self._state_start_value
        state["unique_hashes"] = found.final_hashes() if found.run.deduplicates else []
        self.start_out_of_range, self.end_out_of_range = found.start_out_of_range, found.end_out_of_range

    def can_close(self) -> bool:
        """True when rows are known to be ordered (`row_order`) and the last item left the range."""
        return (self.row_order == "asc" and self.end_out_of_range) or (self.row_order == "desc" and self.start_out_of_range)

    def __repr__(self) -> str:
        shown = {k: v for k, v in self._settings().items() if v is not None and k != "last_value_func"}
        return f"lakeload.sources.incremental({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


def _last_value_func(func: Any) -> Callable[[Any], Any]:
    if func in ("max", "min"):
        return max if func == "max" else min  # type: ignore[return-value]
    if not callable(func):
        raise IncrementalError(f"last_value_func must be max, min, 'max', 'min' or a function of a sequence, got {func!r}.")
    return func  # type: ignore[no-any-return]


def _one_of(name: str, value: Any, allowed: tuple[str, ...], none_ok: bool = False) -> Any:
    if (value is None and none_ok) or value in allowed:
        return value
    raise IncrementalError(f"Incremental {name}={value!r} is not one of {', '.join(map(repr, allowed))}.")


def _public(value: Any, cursor_type: type | None) -> Any:
    """A datetime in the cursor's declared type: pendulum's DateTime or the standard datetime."""
    if isinstance(value, dt.datetime) and cursor_type is not None:
        if cursor_type is pendulum.DateTime and not isinstance(value, pendulum.DateTime):
            return pendulum.instance(value)
        if cursor_type is dt.datetime and isinstance(value, pendulum.DateTime):
            return dt.datetime.fromisoformat(value.isoformat())
    return value

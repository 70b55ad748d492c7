"""How a resource gets its live incremental: from its function's argument, or from `incremental=` hints.

`IncrementalCall` is a resource function with an incremental argument and the arguments it was called with.
When extract iterates the resource, `bind_resource` picks the incremental as dlt does (the `incremental=` hint
of `@resource`/`apply_hints` wins; else an explicit `Incremental` argument merged over the default; a plain
explicit value becomes the default's `initial_value`), binds it to the resource's state and passes the live
instance as the argument. `filter_items` then filters what the resource yields (after its map/filter steps,
before `add_limit`, as dlt places it) and closes the resource's generator once `row_order` says nothing more
can be in range.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterator
from typing import Any

from lakeload.destinations.state_types import ResourceState
from lakeload.errors import IncrementalError
from lakeload.extract.incremental.cursor import parse_cursor_path
from lakeload.extract.incremental.incremental import Incremental
from lakeload.extract.incremental.items import filter_item
from lakeload.kernel.spark.incremental import KeyHint
from lakeload.schema.typing import TTable

_UNSET = object()


def incremental_parameter(fn: Callable[..., Any]) -> inspect.Parameter | None:
    """The parameter of `fn` that takes an incremental (its default is one, or it is annotated with one)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    try:
        annotations = typing.get_type_hints(fn)
    except Exception:  # unresolvable string annotations: only defaults tell
        annotations = {}
    for parameter in signature.parameters.values():
        if isinstance(parameter.default, Incremental) or _is_incremental_type(annotations.get(parameter.name)):
            return parameter
    return None


def _is_incremental_type(annotation: Any) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, type) and issubclass(annotation, Incremental):
        return True
    origin = typing.get_origin(annotation)
    if isinstance(origin, type) and issubclass(origin, Incremental):
        return True
    return any(_is_incremental_type(arg) for arg in typing.get_args(annotation) if arg is not type(None))


def _is_optional(annotation: Any) -> bool:
    return type(None) in typing.get_args(annotation)


class IncrementalCall:
    """A resource function with an incremental argument, and the arguments it was called with.

    >>> def tickets(updated=Incremental("updated", initial_value=0)): yield []
    >>> IncrementalCall(tickets, (), {}).configured(None).cursor_path
    'updated'
    """

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        parameter = incremental_parameter(fn)
        if parameter is None:
            raise IncrementalError(f"Function {getattr(fn, '__name__', fn)!r} has no incremental argument.")
        self.fn, self.args, self.kwargs, self.parameter = fn, args, kwargs, parameter
        self.signature = inspect.signature(fn)
        try:
            self.annotation = typing.get_type_hints(fn).get(parameter.name)
        except Exception:
            self.annotation = None

    def __call__(self) -> Any:
        """Call the function as it was called (its incremental argument unbound)."""
        return self.fn(*self.args, **self.kwargs)

    def _explicit(self) -> Any:
        try:
            bound = self.signature.bind_partial(*self.args, **self.kwargs)
        except TypeError:
            return _UNSET
        return bound.arguments.get(self.parameter.name, _UNSET)

    def configured(self, hint: Incremental[Any] | None) -> Incremental[Any] | None:
        """The incremental of this call (see the module docstring); None when the argument disables it."""
        if hint is not None:
            return hint
        default = self.parameter.default if isinstance(self.parameter.default, Incremental) else None
        explicit = self._explicit()
        if isinstance(explicit, Incremental):
            chosen: Incremental[Any] | None = default.merge(explicit) if default is not None else explicit.copy()
        elif explicit is None:
            if _is_optional(self.annotation):
                return None
            raise IncrementalError(
                f"Argument '{self.parameter.name}' of resource function '{self.fn.__name__}' got None: pass "
                "lakeload.sources.incremental(...) or an initial value, or annotate it Optional[Incremental[...]] "
                "to allow running without incremental loading."
            )
        elif explicit is not _UNSET and default is not None:
            chosen = default.copy()
            chosen.initial_value = explicit  # a plain value is the initial value, as in dlt
        else:
            chosen = default.copy() if default is not None else None
        if chosen is None or chosen.is_partial():
            if _is_optional(self.annotation):
                return None
            raise IncrementalError(
                f"Argument '{self.parameter.name}' of resource function '{self.fn.__name__}' has no incremental with a "
                "cursor_path: give it a default lakeload.sources.incremental('<cursor>', ...), pass one, or annotate it "
                "Optional[Incremental[...]]."
            )
        return chosen

    def with_argument(self, live: Incremental[Any] | None) -> Callable[[], Any]:
        """A call of the function with `live` as its incremental argument."""
        bound = self.signature.bind_partial(*self.args, **self.kwargs)
        bound.arguments[self.parameter.name] = live
        return lambda: self.fn(*bound.args, **bound.kwargs)


def bind_resource(
    resource_name: str, data: Any, hint: Incremental[Any] | None, primary_key: KeyHint,
    resource_state: Callable[[], ResourceState],
) -> tuple[Incremental[Any] | None, Any]:
    """The live incremental of one run of a resource (None without one) and the data to iterate."""
    call = data if isinstance(data, IncrementalCall) else None
    chosen = call.configured(hint) if call is not None else hint
    if chosen is None:
        return None, call.with_argument(None) if call is not None else data
    chosen.set_key_from_hints(primary_key)
    live = chosen.bind(resource_name, resource_state)
    return live, call.with_argument(live) if call is not None else data


def filter_items(items: Iterator[Any], live: Incremental[Any], close_source: Callable[[], None] | None) -> Iterator[Any]:
    """The items that pass `live`'s filter; the source is closed once `row_order` says the range was left."""
    for item in items:
        kept = filter_item(live, item)
        if close_source is not None and live.can_close():
            close_source()
        if kept is not None:
            yield kept


def mark_cursor(table: TTable, resource: Any, naming: Any) -> TTable:
    """`table` (a dlt table schema) with its incremental cursor column hinted `incremental: True`, as dlt does
    when the cursor path is a plain column name."""
    incremental = resource.incremental
    column = parse_cursor_path(incremental.cursor_path).column if incremental is not None and incremental.cursor_path else None
    if column is not None:
        name = naming.normalize_path(column)
        table["columns"].setdefault(name, {"name": name})["incremental"] = True
    return table

"""Arguments of source, resource and transformer functions injected from configuration, as dlt does.

    @lakeload.source
    def crm(api_key: str = lakeload.secrets.value, page_size: int = 100):
        ...

Every argument with a default may come from configuration (not only `lakeload.config.value` /
`lakeload.secrets.value` ones); an argument passed in the call wins. Values come from the one resolver
(`lakeload.config.resolver.resolve`), under dlt's keys: `sources.<section>.<name>.<argument>`, then
`sources.<section>.<argument>`, `sources.<name>.<argument>`, `sources.<argument>` and `<argument>`
(environment variables `SOURCES__<SECTION>__<NAME>__<ARGUMENT>`, ...), the same keys prefixed with the
pipeline's name first when a pipeline exists. `<section>` is the `section=` of the decorator or the name of
the function's module (a script's file name when it runs as `__main__`); `<name>` is the source's or the
resource's name. A resource in a source is looked up under its source's section. Sources resolve when they
are called, resources and transformers when extract runs them. A value neither passed nor found for a
`lakeload.config.value` / `lakeload.secrets.value` argument is a `ConfigValueMissingError` naming every key
tried. What was injected is listed by `lakeload config show` (`injected()`), secrets masked.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import inspect
import os
import sys
import typing
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from lakeload.common.context import active_pipeline_name, running_resource
from lakeload.config.accessors import ConfigValueSentinel
from lakeload.config.resolver import candidate_paths, env_name, resolve, toml_files
from lakeload.errors import ConfigValueMissingError

_COERCED = (bool, int, float, str, dict, list)
_PLAIN = (*_COERCED, tuple, bytes, datetime.datetime, datetime.date, datetime.time, decimal.Decimal)
# source name -> section of the source called last under that name: extract knows a resource's source by name
# only (its schema), and in dlt the source's section wins over its resources' own
_source_sections: dict[str, str] = {}


@dataclass(frozen=True)
class InjectableArg:
    """An argument that configuration may set: `hint` is the type a string is converted to (None: kept as is);
    `sentinel` when it defaults to `lakeload.config.value`/`lakeload.secrets.value` (None when optional and unset)."""

    name: str
    hint: type | None
    required: bool
    secret: bool
    sentinel: bool = False


@dataclass(frozen=True)
class InjectedValue:
    """A value injected in this process, for `lakeload config show` (`value` is masked when secret)."""

    key: str
    value: Any
    source: str
    secret: bool


_injected: dict[str, InjectedValue] = {}


def injected() -> list[InjectedValue]:
    """The arguments injected from configuration in this process, by key (the last value of each)."""
    return [_injected[key] for key in sorted(_injected)]


def _base_type(annotation: Any) -> tuple[Any, bool]:
    """(the plain type under `Optional[...]`/`Annotated[...]`/`list[str]`, whether None is allowed)."""
    optional = False
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _base_type(typing.get_args(annotation)[0])
    if origin is typing.Union or type(annotation).__name__ == "UnionType":
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(args) < len(typing.get_args(annotation))
        annotation = args[0] if len(args) == 1 else Any
        origin = typing.get_origin(annotation)
    return (origin or annotation), optional


def injectable_args(fn: Callable[..., Any]) -> tuple[InjectableArg, ...]:
    """The arguments of `fn` that configuration may set: those with a default of a plain type (str, numbers,
    bool, dict, list, dates, ...) or of `lakeload.config.value` / `lakeload.secrets.value`, as dlt's spec.

    >>> import lakeload
    >>> def src(api_key: str = lakeload.secrets.value, page_size: int = 10, client: object = object()): ...
    >>> [a.name for a in injectable_args(src)]
    ['api_key', 'page_size']
    """
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except (NameError, TypeError, AttributeError):  # unresolvable forward references: use the raw annotations
        hints = getattr(fn, "__annotations__", {})
    found = []
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.default is param.empty:
            continue
        if param.name in ("self", "cls"):
            continue
        sentinel = param.default if isinstance(param.default, ConfigValueSentinel) else None
        annotation = hints.get(param.name, Any)
        if annotation is Any and sentinel is None and param.default is not None:
            annotation = type(param.default)
        base, optional = _base_type(annotation)
        if base is not Any and base not in _PLAIN and sentinel is None:
            continue  # an object (a client, an incremental cursor): never from configuration
        hint = base if base in _COERCED else None
        required = sentinel is not None and not optional
        found.append(InjectableArg(param.name, hint, required, bool(sentinel and sentinel.secret), sentinel is not None))
    return tuple(found)


def default_section(fn: Callable[..., Any]) -> str:
    """The config section of a function: its module's `__source_name__`, else its module's last name part (the
    file name of a script run as `__main__`), as dlt.

    >>> default_section(default_section)
    'inject'
    """
    module = inspect.getmodule(fn) or sys.modules.get(getattr(fn, "__module__", ""), None)
    if module is None:
        return str(getattr(fn, "__module__", "__main__")).rsplit(".", 1)[-1]
    if hasattr(module, "__source_name__"):
        return str(module.__source_name__)
    if module.__name__ == "__main__" and getattr(module, "__file__", None):
        return os.path.splitext(os.path.basename(str(module.__file__)))[0]
    return module.__name__.rsplit(".", 1)[-1]


def resolve_arguments(
    args: tuple[InjectableArg, ...], given: dict[str, Any], sections: tuple[str, ...], pipeline_name: str | None, what: str
) -> dict[str, Any]:
    """Values for the `args` not in `given` (explicitly passed, not None) that configuration sets; raises
    `ConfigValueMissingError` naming every key tried when required ones are found nowhere."""
    values: dict[str, Any] = {}
    missing: dict[str, list[str]] = {}
    for arg in args:
        if given.get(arg.name) is not None:
            continue
        found = resolve(sections, arg.name, pipeline_name, hint=arg.hint, secret=arg.secret)
        if found.value is not None:
            values[arg.name] = found.value
            secret = arg.secret or found.from_secrets
            _remember(".".join((*sections, arg.name)), arg.name, found.value, str(found.source), secret)
        elif arg.required:
            missing[arg.name] = _places(sections, arg.name, pipeline_name)
        elif arg.sentinel:
            values[arg.name] = None  # an optional value found nowhere
    if missing:
        secrets = {arg.name for arg in args if arg.secret}
        raise ConfigValueMissingError(what, missing, secrets, toml_files())
    return values


def _places(sections: tuple[str, ...], key: str, pipeline_name: str | None) -> list[str]:
    """Every key looked up, in order: the TOML path and the environment variable of each."""
    return [f"{'.'.join(path)}  (env {env_name(path)})" for path in candidate_paths(sections, key, pipeline_name)]


def _remember(key: str, name: str, value: Any, source: str, secret: bool) -> None:
    from lakeload.config.credentials import MASK, mask_value, url_without_password

    shown = MASK if secret else url_without_password(value) if isinstance(value, str) else mask_value(name, value)
    _injected[key] = InjectedValue(key, shown, source, secret)


def _pipeline_name() -> str | None:
    return active_pipeline_name()


def _wrap(fn: Callable[..., Any], args: tuple[InjectableArg, ...], scope: Callable[[], tuple[tuple[str, ...], str | None, str]]) -> Callable[..., Any]:
    """`fn` with its injectable arguments resolved at call time (a generator function stays one, resolving
    when it starts); `scope()` gives (sections, pipeline name, what to name in errors)."""
    signature = inspect.signature(fn)

    def call_args(call: tuple[Any, ...], kwargs: dict[str, Any]) -> inspect.BoundArguments:
        bound = signature.bind_partial(*call, **kwargs)
        sections, pipeline_name, what = scope()
        bound.arguments.update(resolve_arguments(args, bound.arguments, sections, pipeline_name, what))
        return bound

    if inspect.isasyncgenfunction(fn):
        @functools.wraps(fn)
        async def async_generator(*call: Any, **kwargs: Any) -> AsyncIterator[Any]:
            bound = call_args(call, kwargs)
            async for item in fn(*bound.args, **bound.kwargs):
                yield item

        return async_generator

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*call: Any, **kwargs: Any) -> Iterator[Any]:
            bound = call_args(call, kwargs)
            return (yield from fn(*bound.args, **bound.kwargs))

        return generator

    @functools.wraps(fn)
    def function(*call: Any, **kwargs: Any) -> Any:
        bound = call_args(call, kwargs)
        return fn(*bound.args, **bound.kwargs)

    return function


def configurable_source(fn: Callable[..., Any], name: str, section: str | None = None) -> Callable[..., Any]:
    """`fn` (a source function) with its arguments injected when it is called, under `sources.<section>.<name>`.

    >>> import lakeload
    >>> def crm_function(api_key: str = lakeload.secrets.value, page_size: int = 100):
    ...     return api_key, page_size
    >>> crm = configurable_source(crm_function, "crm")
    >>> with lakeload.secrets.values({"sources.crm.api_key": "my-key"}):
    ...     crm()
    ('my-key', 100)
    """
    args = injectable_args(fn)
    config_section = section or default_section(fn)

    def scope() -> tuple[tuple[str, ...], str | None, str]:
        _source_sections[name] = config_section  # its resources resolve under this section when extracted
        return ("sources", config_section, name), _pipeline_name(), f"source '{name}'"

    return _wrap(fn, args, scope)


def configurable_resource(fn: Callable[..., Any], name: str, section: str | None = None) -> Callable[..., Any]:
    """`fn` (a resource or transformer function) with its arguments injected when extract calls it, under
    `sources.<section>.<resource name>`; inside a source, its source's section wins.

    >>> import lakeload
    >>> def users_function(page_size: int = 10):
    ...     yield from range(page_size)
    >>> users = configurable_resource(users_function, "users")
    >>> with lakeload.config.values({"sources.users.page_size": 3}):
    ...     list(users())
    [0, 1, 2]
    """
    args = injectable_args(fn)
    if not args:
        return fn
    own_section = section or default_section(fn)

    def scope() -> tuple[tuple[str, ...], str | None, str]:
        context = running_resource()  # the resource extracted now (a transformer's, for its parent)
        if context is None:
            return ("sources", own_section, name), _pipeline_name(), f"resource '{name}'"
        sections = ("sources", _source_sections.get(context.schema_name, own_section), name)
        return sections, context.pipeline_name, f"resource '{name}'"

    return _wrap(fn, args, scope)

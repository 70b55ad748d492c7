"""Executor-safe: file path layouts of the filesystem destination, rendered the way dlt 1.31 renders them.

Spark executors call :meth:`Layout.render` to name each data file, so this module imports only the
standard library, ``pendulum``, :mod:`lakeload.errors` and the executor-safe
:mod:`lakeload.kernel.filesystem.layout_template`, which holds the placeholders, dlt's rules
for a valid layout and the errors they raise.

Example:
    >>> import pendulum
    >>> layout = Layout.parse("{table_name}/{YYYY}/{MM}/{load_id}.{file_id}.{ext}")
    >>> layout.render(schema_name="s", table_name="users", load_id="1.5", file_id="abc", ext="jsonl.gz",
    ...               load_package_timestamp=pendulum.datetime(2026, 11, 21))
    'users/2026/11/1.5.abc.jsonl.gz'
    >>> layout.table_prefix("s", "users")
    'users/'
"""

from __future__ import annotations

import datetime as _dt
import inspect
import pickle
import posixpath
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import pendulum

from lakeload.errors import LayoutError
from lakeload.kernel.filesystem.layout_template import (
    DATE_TOKENS,
    DEFAULT_LAYOUT,
    LAYOUT_EXAMPLE,
    InvalidPlaceholderCallback,
    check_callback,
    placeholders,
    split_template,
    validate_template,
)
from lakeload.kernel.filesystem.safe_paths import check_dataset_key

__all__ = [
    "Layout",
    "UnpicklableLayoutCallback",
    "new_file_id",
]

_DLT_TABLES_PREFIX = "_dlt"
_INIT_FILE_NAME = "init"
_EPOCH = _dt.datetime(1970, 1, 1)

CurrentDatetime = pendulum.DateTime | Callable[[], pendulum.DateTime]
"""A fixed datetime, or a function called for every rendered path."""


class UnpicklableLayoutCallback(LayoutError):
    """A layout callable cannot be pickled, so it cannot be shipped to Spark executors."""


def new_file_id() -> str:
    """Return a random file id of 10 lowercase hex characters, as dlt uses in data file names.

    Example:
        >>> len(new_file_id())
        10
    """
    return secrets.token_hex(5)


def _epoch_units(moment: _dt.datetime, unit: _dt.timedelta) -> int:
    """Whole ``unit``s since the Unix epoch, flooring; a naive ``moment`` is taken as UTC."""
    offset = moment.utcoffset() or _dt.timedelta(0)
    wall = _dt.datetime(moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second,
                        moment.microsecond)
    return (wall - offset - _EPOCH) // unit


def _as_pendulum(value: object, what: str) -> pendulum.DateTime:
    if isinstance(value, pendulum.DateTime):
        return value
    if isinstance(value, _dt.datetime):
        return pendulum.instance(value) if value.tzinfo else pendulum.naive(
            value.year, value.month, value.day, value.hour, value.minute, value.second, value.microsecond)
    raise LayoutError(f"{what} must be a pendulum.DateTime, got {type(value).__name__}: {value!r}. "
                      "Pass e.g. current_datetime=pendulum.datetime(2026, 1, 1) or a function returning one.")


@dataclass(frozen=True)
class Layout:
    """A validated file layout: renders data file paths and table prefixes relative to the dataset folder.

    Build it with :meth:`parse`. Instances are immutable and picklable (see :meth:`ensure_picklable`).

    Example:
        >>> Layout.parse("{schema_name}/{table_name}/{load_id}.{file_id}").template
        '{schema_name}/{table_name}/{load_id}.{file_id}.{ext}'
    """

    layout: str
    """The layout as given."""
    template: str
    """The layout with ``.{ext}`` appended when it had no ``{ext}``."""
    prefix_template: str
    """The start of the template up to and including the first character after ``{table_name}``."""
    extra_placeholders: tuple[tuple[str, Any], ...] = ()
    current_datetime: CurrentDatetime | None = None

    @classmethod
    def parse(
        cls,
        layout: str = DEFAULT_LAYOUT,
        extra_placeholders: Mapping[str, object] | None = None,
        current_datetime: CurrentDatetime | None = None,
        *,
        warn_unsafe_separators: bool = True,
    ) -> Layout:
        """Validate ``layout`` with dlt's rules and return a :class:`Layout`.

        Raises :class:`InvalidFilesystemLayout` for unknown placeholders, :class:`CantExtractTablePrefix` when
        the table files cannot be told apart and :class:`InvalidPlaceholderCallback` for a callable extra
        placeholder with the wrong signature. Warns with :class:`UnsafeLayoutSeparatorWarning` when the
        separator after ``{table_name}`` (or between ``{schema_name}`` and it) can occur in a table name.
        Raises :class:`~lakeload.errors.UnsafeLayoutPathError` when the template or a fixed extra placeholder
        value leaves the dataset folder (absolute, or a ``.``/``..`` segment).
        The rules, errors and warning live in :mod:`lakeload.kernel.filesystem.layout_template`.

        Example:
            >>> Layout.parse("{table_name}/{env}/{load_id}.{file_id}.{ext}", {"env": "prod"}).prefix_template
            '{table_name}/'
        """
        if not isinstance(layout, str):
            raise LayoutError(f"The layout must be a string, got {type(layout).__name__}. {LAYOUT_EXAMPLE}")
        extras = dict(extra_placeholders or {})
        for name, value in extras.items():
            check_callback(name, value)
        if current_datetime is not None and not callable(current_datetime):
            current_datetime = _as_pendulum(current_datetime, "current_datetime")
        template, prefix_template = validate_template(layout, extras, warn_unsafe_separators=warn_unsafe_separators)
        parsed = cls(layout, template, prefix_template, tuple(extras.items()), current_datetime)
        parsed._check_static_parts()
        return parsed

    def _check_static_parts(self) -> None:
        """Fail now, not on an executor, when the template or a fixed extra value leaves the dataset folder.

        Renders with stand-in names (``<table_name>``, ...) and callbacks replaced by ``<name>``; what
        callbacks return is checked by every :meth:`render`.
        """
        probe = replace(self, current_datetime=None, extra_placeholders=tuple(
            (name, f"<{name}>" if callable(value) else value) for name, value in self.extra_placeholders))
        probe.render(schema_name="<schema_name>", table_name="<table_name>", load_id="<load_id>",
                     file_id="<file_id>", ext="<ext>", load_package_timestamp=pendulum.datetime(2026, 1, 1))

    @property
    def placeholders(self) -> list[str]:
        """Placeholder names of the template, in order (``ext`` included).

        Example:
            >>> Layout.parse().placeholders
            ['table_name', 'load_id', 'file_id', 'ext']
        """
        return placeholders(self.template)

    def _identity(self, names: set[str], schema_name: str, table_name: str, load_id: str | None,
                  file_id: str | None, ext: str | None) -> dict[str, object]:
        """Placeholder name -> value (rendered with `format`): the identity placeholders and the extra ones."""
        values: dict[str, object] = {"schema_name": schema_name, "table_name": table_name, "load_id": load_id,
                                  "file_id": file_id, "ext": ext}
        for name, value in self.extra_placeholders:
            if name not in names:
                continue
            if callable(value):
                try:
                    inspect.signature(value).bind(schema_name, table_name, load_id, file_id, ext)
                except TypeError as exc:
                    raise InvalidPlaceholderCallback(name, str(exc)) from exc
                except ValueError:
                    pass
                value = value(schema_name, table_name, load_id, file_id, ext)
            values[name] = value
        return values

    def _now(self, load_package_timestamp: pendulum.DateTime) -> pendulum.DateTime:
        current = self.current_datetime
        if current is None:
            return load_package_timestamp
        if callable(current):
            return _as_pendulum(current(), "The value returned by current_datetime()")
        return current

    def render(self, *, schema_name: str, table_name: str, load_id: str, file_id: str, ext: str,
               load_package_timestamp: pendulum.DateTime) -> str:
        """Return the path of one data file relative to the dataset folder, as dlt names it.

        ``ext`` is the full extension (``jsonl.gz``, ``parquet``). ``load_package_timestamp`` is the package
        creation time, used in UTC; it also drives ``{timestamp}``, ``{curr_date}`` and the date tokens
        unless ``current_datetime`` was given. Raises :class:`~lakeload.errors.UnsafeLayoutPathError` when the
        path (e.g. from a callback) is empty or absolute, or has a ``.``/``..`` segment: it would leave the dataset.

        Example:
            >>> Layout.parse("{table_name}.{load_id}.{file_id}").render(schema_name="s", table_name="t",
            ...     load_id="1.2", file_id="ab", ext="parquet", load_package_timestamp=pendulum.now())
            't.1.2.ab.parquet'
        """
        names = set(self.placeholders)
        values = self._identity(names, schema_name, table_name, load_id, file_id, ext)
        package = _as_pendulum(load_package_timestamp, "load_package_timestamp")
        package = package.in_timezone("UTC") if package.tzinfo else package.replace(tzinfo=pendulum.UTC)
        now = self._now(package)
        values["load_package_timestamp"] = _epoch_units(package, _dt.timedelta(seconds=1))
        values["load_package_timestamp_ms"] = _epoch_units(package, _dt.timedelta(milliseconds=1))
        values["timestamp"] = _epoch_units(now, _dt.timedelta(seconds=1))
        values["timestamp_ms"] = _epoch_units(now, _dt.timedelta(milliseconds=1))
        values["curr_date"] = now.date().isoformat()
        for token in DATE_TOKENS:
            if token in names:
                values[token] = now.format(token).lower()
        rendered = "".join(format(values[text], "") if is_ph else text for text, is_ph in split_template(self.template))
        return check_dataset_key(rendered.replace("\\", "/"), self.layout)

    def table_prefix(self, schema_name: str, table_name: str) -> str:
        """Return the path prefix (relative to the dataset folder) shared by all files of a table, and no other.

        dlt's own ``_dlt_*`` tables ignore the layout and always live in ``<table>/``.

        Example:
            >>> Layout.parse("{schema_name}.{table_name}.{load_id}.{file_id}.{ext}").table_prefix("s", "users")
            's.users.'
        """
        if table_name.startswith(_DLT_TABLES_PREFIX):
            return table_name + "/"
        names = set(placeholders(self.prefix_template))
        values = self._identity(names, schema_name, table_name, None, None, None)
        prefix = "".join(format(values[text], "") if is_ph else text for text, is_ph in split_template(self.prefix_template))
        return check_dataset_key(prefix.replace("\\", "/"), self.layout)

    def table_dir(self, schema_name: str, table_name: str) -> str:
        """Return the folder (relative, ending with '/', or '' for the dataset folder) holding a table's files.

        Example:
            >>> Layout.parse("{table_name}.{load_id}.{file_id}.{ext}").table_dir("s", "users")
            ''
        """
        folder = posixpath.dirname(self.table_prefix(schema_name, table_name))
        return folder + "/" if folder else ""

    def is_table_file(self, relative_path: str, schema_name: str, table_name: str) -> bool:
        """Tell whether ``relative_path`` (relative to the dataset folder) is a file of the table.

        Files named ``init`` are never table files, as in dlt.

        Example:
            >>> Layout.parse().is_table_file("users/1.2.ab.jsonl.gz", "s", "users")
            True
        """
        path = relative_path.replace("\\", "/")
        if posixpath.basename(path) == _INIT_FILE_NAME:
            return False
        return path.startswith(self.table_prefix(schema_name, table_name))

    def ensure_picklable(self, dumps: Callable[[object], bytes] = pickle.dumps) -> None:
        """Raise :class:`UnpicklableLayoutCallback` when a callback cannot be pickled for Spark executors.

        `dumps` is the pickler the caller ships with (the driver passes Spark's cloudpickle).

        Example:
            >>> import threading
            >>> from pyspark import cloudpickle
            >>> lock = threading.Lock()
            >>> try:
            ...     Layout.parse("{table_name}/{x}/{file_id}", {"x": lambda *a: str(lock)}).ensure_picklable(cloudpickle.dumps)
            ... except UnpicklableLayoutCallback as exc:
            ...     print("executors" in str(exc))
            True
        """
        callbacks = [(f"extra placeholder '{n}'", v) for n, v in self.extra_placeholders if callable(v)]
        if callable(self.current_datetime):
            callbacks.append(("current_datetime", self.current_datetime))
        for what, func in callbacks:
            try:
                dumps(func)
            except Exception as exc:
                label = getattr(func, "__qualname__", repr(func))
                raise UnpicklableLayoutCallback(
                    f"The {what} callback {label} cannot be pickled ({exc}), so it cannot run on Spark "
                    "executors, where files are written. Use a function whose closure holds only picklable "
                    "values (no locks, open files, sockets or clients), e.g. 'def env(schema_name, table_name, "
                    "load_id, file_id, ext): return \"prod\"' with layout '{table_name}/{env}/{load_id}.{file_id}.{ext}'."
                ) from exc

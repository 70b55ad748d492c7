"""Executor-safe: the names and layout paths lakeload turns into file paths, checked to stay where they belong.

Every file lakeload writes lives under ``<bucket_url>/<dataset_name>/`` or under the pipeline's working folder
(``<pipelines_dir>/<pipeline_name>/``, or ``[spark] working_url``). Pipeline, dataset, schema and table names
each become one folder or file-name part, so each must be a single path segment: not empty, not ``.`` or
``..``, without ``/``, ``\\`` (a separator on local Windows paths, and turned into ``/`` by layouts) or NUL.
Table names are checked *after* the naming convention normalized them, so ``"a/b"`` is fine with
``snake_case`` (it becomes ``a_b``, as in dlt) and rejected with ``direct``, which keeps the ``/``.
Rendered layout paths may hold ``/`` but must stay relative to the dataset folder, with no ``.``/``..``
segment. A failed check raises :class:`~lakeload.errors.InvalidNameError` (a ``ValueError``) naming the
value and the fix. Imports only :mod:`lakeload.errors` and the executor-safe :mod:`lakeload.schema.naming`.

Example:
    >>> check_table_name("a_b", given="a/b", naming="snake_case")
    'a_b'
    >>> check_dataset_key("users/1.2.ab.jsonl", "{table_name}/{load_id}.{file_id}.{ext}")
    'users/1.2.ab.jsonl'
"""

from __future__ import annotations

from lakeload.errors import InvalidNameError, UnsafeLayoutPathError
from lakeload.schema.naming import SnakeCaseNaming

__all__ = [
    "check_dataset_key",
    "check_dataset_name",
    "check_pipeline_name",
    "check_schema_name",
    "check_table_name",
    "name_problem",
]

_SEPARATORS = (("/", "'/'"), ("\\", "'\\'"), ("\x00", "a NUL character"))
_RULE = "a single folder or file name: not empty, not '.' or '..', without '/', '\\' or NUL"


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be one path segment, or ``None`` when it can.

    Example:
        >>> name_problem("../x"), name_problem("users")
        ("it contains '/', a path separator", None)
    """
    if not isinstance(name, str):
        return f"it is a {type(name).__name__}, not a string"
    if not name.strip():
        return "it is empty"
    if name.strip() in (".", ".."):
        return f"'{name.strip()}' names a folder itself or its parent, not a new one"
    for char, label in _SEPARATORS:
        if char in name:
            return f"it contains {label}, a path separator" if char != "\x00" else f"it contains {label}"
    return None


def _suggest(name: object) -> str:
    """What dlt's snake_case makes of ``name``, as a hint; empty when nothing sensible comes out."""
    try:
        suggestion = SnakeCaseNaming().normalize_table_identifier(str(name))
    except ValueError:
        return ""
    return f", e.g. {suggestion!r} (what dlt's snake_case naming makes of it)" if name_problem(suggestion) is None else ""


def _check(name: object, what: str, why: str, fix: str, origin: str = "") -> str:
    problem = name_problem(name)
    if problem is not None:
        raise InvalidNameError(f"{what} {name!r}{origin} cannot be used: {problem}. {why} Fix: {fix}")
    return name  # type: ignore[return-value]  # name_problem() returned None: it is a str


def check_pipeline_name(name: object) -> str:
    """Return ``name`` if it can be a pipeline name, else raise :class:`InvalidNameError`.

    Example:
        >>> check_pipeline_name("quick_start")
        'quick_start'
    """
    return _check(name, "Pipeline name", "It names the pipeline's working folder under pipelines_dir and is part "
                  "of the state file names in the bucket.", f"pass a pipeline_name that is {_RULE}{_suggest(name)}.")


def check_dataset_name(name: object) -> str:
    """Return ``name`` if it can be a dataset name, else raise :class:`InvalidNameError`.

    lakeload uses the dataset name as given (one folder under the bucket), so it must already be safe.

    Example:
        >>> check_dataset_name("mydata")
        'mydata'
    """
    return _check(name, "Dataset name", "It names one folder directly under the bucket, which holds every file "
                  "of the dataset.", f"pass a dataset_name that is {_RULE}{_suggest(name)}.")


def check_schema_name(name: object) -> str:
    """Return ``name`` if it can be a schema (source) name, else raise :class:`InvalidNameError`.

    Example:
        >>> check_schema_name("crm")
        'crm'
    """
    return _check(name, "Schema name", "It is part of the file names in the bucket's _dlt_version and _dlt_loads "
                  "folders and of the schema file in the pipeline's working folder.",
                  f"name the source (or pass schema=) with {_RULE}; dlt also asks for a Python identifier"
                  f"{_suggest(name)}.")


def check_table_name(name: object, given: object = None, naming: str | None = None) -> str:
    """Return the normalized table name ``name`` if it is safe, else raise :class:`InvalidNameError`.

    ``given`` is the name before normalization and ``naming`` the convention's name, for the message.

    Example:
        >>> check_table_name("users")
        'users'
    """
    origin = ""
    if given is not None and given != name:
        origin = f" (normalized from {given!r} by the '{naming}' naming convention)" if naming else f" (from {given!r})"
    elif naming:
        origin = f" (as the '{naming}' naming convention keeps it)"
    return _check(name, "Table name", "It names the table's files in the bucket and in the load package.",
                  f"give a table name (hint, callable, resource name or, for a nested table, data key) that stays {_RULE} after normalization, "
                  "or use the default snake_case naming convention, which turns e.g. 'a/b' into 'a_b'.", origin)


def check_dataset_key(path: str, layout: str) -> str:
    """Return ``path`` (rendered by ``layout``, relative to the dataset folder) if it stays under that folder.

    Raises :class:`~lakeload.errors.UnsafeLayoutPathError` for an empty or absolute path, a NUL or any
    ``.``/``..`` segment (backslashes count as ``/``).

    Example:
        >>> check_dataset_key("users/", "{table_name}/{load_id}.{file_id}.{ext}")
        'users/'
    """
    parts = path.replace("\\", "/").split("/")
    problem = ""
    if not path.strip():
        problem = "it is empty"
    elif path.startswith(("/", "\\")):
        problem = "it is absolute"
    elif "\x00" in path:
        problem = "it contains a NUL character"
    elif any(part.strip() in (".", "..") for part in parts):
        problem = "it has a '.' or '..' segment"
    if problem:
        raise UnsafeLayoutPathError(
            f"Layout '{layout}' renders the path {path!r}, which would leave the dataset folder: {problem}. Every "
            "file must land under <bucket_url>/<dataset_name>/. Fix: use a layout, extra placeholder values and "
            "callbacks that give relative paths without '.' or '..' segments, e.g. "
            "'{table_name}/{load_id}.{file_id}.{ext}'."
        )
    return path

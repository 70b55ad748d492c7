"""Names of dlt 1.31's ``_dlt_*`` state files: split them into their parts and pick among a listing.

Pure functions over file names (or paths) as the destination lists them: the state file dlt restores,
the newest stored schema, a schema by its hash, and the old state files dlt deletes. The records
inside the files are built and parsed by :mod:`lakeload.destinations.impl.filesystem.state_files`.

Example:
    >>> newest_state_file(["p__1.5__aa.jsonl", "p__1.7__bb.jsonl"], "p")
    'p__1.7__bb.jsonl'
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import NamedTuple

from lakeload.destinations.impl.filesystem.state_files import NAME_SEPARATOR, hash_to_hex


class LoadsFileName(NamedTuple):
    schema_name: str
    load_id: str


class VersionFileName(NamedTuple):
    schema_name: str
    version_id: str
    """``time.precise_time()`` when the schema was stored, as text (not a load id)."""
    hash_hex: str


class StateFileName(NamedTuple):
    pipeline_name: str
    load_id: str
    hash_hex: str
    """Hex of the schema's stored version hash."""


def _stem_parts(name: str, parts: int) -> list[str] | None:
    stem = posixpath.splitext(posixpath.basename(name.replace("\\", "/")))[0]
    split = stem.rsplit(NAME_SEPARATOR, parts - 1)
    return split if len(split) == parts else None


def parse_loads_name(name: str) -> LoadsFileName | None:
    """Split a ``_dlt_loads`` file name or path into its parts; ``None`` if it is not one.

    Example:
        >>> parse_loads_name("_dlt_loads/users_pets__1795290972.5539668.jsonl")
        LoadsFileName(schema_name='users_pets', load_id='1795290972.5539668')
    """
    split = _stem_parts(name, 2)
    return LoadsFileName(*split) if split else None


def parse_version_name(name: str) -> VersionFileName | None:
    """Split a ``_dlt_version`` file name or path into its parts; ``None`` if it is not one.

    Example:
        >>> parse_version_name("s__1795290972.7484267__88860f.jsonl")
        VersionFileName(schema_name='s', version_id='1795290972.7484267', hash_hex='88860f')
    """
    split = _stem_parts(name, 3)
    return VersionFileName(*split) if split else None


def parse_state_name(name: str) -> StateFileName | None:
    """Split a ``_dlt_pipeline_state`` file name or path into its parts; ``None`` if it is not one.

    Example:
        >>> parse_state_name("p__1795290972.5539668__88860f.jsonl")
        StateFileName(pipeline_name='p', load_id='1795290972.5539668', hash_hex='88860f')
    """
    split = _stem_parts(name, 3)
    return StateFileName(*split) if split else None


def newest_state_file(names: Iterable[str], pipeline_name: str) -> str | None:
    """Return the state file dlt restores for ``pipeline_name``: the greatest load id, compared as text.

    Example:
        >>> newest_state_file(["p__1.5__aa.jsonl", "p__1.7__bb.jsonl", "q__9.0__cc.jsonl"], "p")
        'p__1.7__bb.jsonl'
    """
    best, newest = None, "0"
    for name in names:
        parts = parse_state_name(name)
        if parts and parts.pipeline_name == pipeline_name and parts.load_id > newest:
            best, newest = name, parts.load_id
    return best


def newest_version_file(names: Iterable[str], schema_name: str | None) -> str | None:
    """Return the newest schema file of ``schema_name`` (any schema if ``None``), by its time part as text.

    Example:
        >>> newest_version_file(["s__1.5__aa.jsonl", "s__1.25__bb.jsonl"], "s")
        's__1.5__aa.jsonl'
    """
    best, newest = None, "0"
    for name in names:
        parts = parse_version_name(name)
        if parts and (not schema_name or parts.schema_name == schema_name) and parts.version_id > newest:
            best, newest = name, parts.version_id
    return best


def state_files_newest_first(names: Iterable[str], pipeline_name: str) -> list[str]:
    """The state files of ``pipeline_name``, the one :func:`newest_state_file` picks first (load ids as text):
    the order to fall back in when the newest file cannot be read.

    Example:
        >>> state_files_newest_first(["p__1.5__aa.jsonl", "p__1.7__bb.jsonl", "q__9.0__cc.jsonl"], "p")
        ['p__1.7__bb.jsonl', 'p__1.5__aa.jsonl']
    """
    parsed = ((n, parse_state_name(n)) for n in names)
    return _newest_first([(p.load_id, n) for n, p in parsed if p and p.pipeline_name == pipeline_name])


def version_files_newest_first(names: Iterable[str], schema_name: str) -> list[str]:
    """The stored versions of ``schema_name``, the one :func:`newest_version_file` picks first.

    Example:
        >>> version_files_newest_first(["s__1.25__bb.jsonl", "s__1.5__aa.jsonl", "t__2.0__cc.jsonl"], "s")
        ['s__1.5__aa.jsonl', 's__1.25__bb.jsonl']
    """
    parsed = ((n, parse_version_name(n)) for n in names)
    return _newest_first([(p.version_id, n) for n, p in parsed if p and p.schema_name == schema_name])


def _newest_first(own: list[tuple[str, str]]) -> list[str]:
    """The names of `(id, name)` pairs, greatest id (as text) first, ids that are not above "0" left out."""
    return [name for key, name in sorted(own, key=lambda item: item[0], reverse=True) if key > "0"]


def version_file_by_hash(names: Iterable[str], version_hash: str) -> str | None:
    """Return the first schema file whose name carries ``version_hash`` (base64), or ``None``.

    Example:
        >>> version_file_by_hash(["s__1.5__deadbeef.jsonl"], "3q2+7w==")
        's__1.5__deadbeef.jsonl'
    """
    wanted = hash_to_hex(version_hash)
    return next((n for n in names if (p := parse_version_name(n)) and p.hash_hex == wanted), None)


def state_files_to_delete(names: Iterable[str], pipeline_name: str, max_state_files: int = 100) -> list[str]:
    """Return the state files of ``pipeline_name`` that dlt deletes, keeping the ``max_state_files`` newest.

    Load ids are compared as numbers here (unlike :func:`newest_state_file`); ``max_state_files < 1`` keeps all.

    Example:
        >>> state_files_to_delete(["p__1.5__a.jsonl", "p__10.0__b.jsonl", "p__2.0__c.jsonl"], "p", 2)
        ['p__1.5__a.jsonl']
    """
    if max_state_files < 1:
        return []
    own = [(float(p.load_id), n) for n in names if (p := parse_state_name(n)) and p.pipeline_name == pipeline_name]
    if len(own) <= max_state_files:
        return []
    own.sort(key=lambda item: item[0], reverse=True)
    return [name for _, name in own[max_state_files:]]

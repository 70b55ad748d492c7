"""Names for the kinds of dict configuration passes around whose keys are not lakeload's to fix.

fsspec's filesystems take keyword arguments of their own (s3fs, gcsfs, adlfs, paramiko each take different ones),
and users add theirs through `kwargs`/`client_kwargs`; a backend's credentials have the fields of its dataclass;
a TOML file (or the in-memory config) holds whatever tables the user wrote. Each is named here so that a
signature says which one it carries, not a bare dict of anything.

>>> options: FsspecOptions = {"anon": False, "client_kwargs": {"region_name": "eu-central-1"}}
"""

from __future__ import annotations

from typing import Any

FsspecOptions = dict[str, Any]
"""Keyword arguments of an fsspec filesystem (`fsspec.filesystem(protocol, **options)`), secrets in clear: the
credentials mapped to the backend's own argument names, `client_kwargs`, and whatever the user passes in
`kwargs`. Arbitrary by design (each backend takes its own); log `masked_options(options)`, never `options`."""

CredentialFields = dict[str, Any]
"""The fields of one backend's typed credentials by name (`aws_access_key_id`, `azure_storage_account_name`,
...): parsed from a native string, or shown with secrets masked. The names differ per backend class."""

ConfigTree = dict[str, Any]
"""A tree of configuration as a TOML document parses (`tomllib`): tables are nested dicts, values strings, numbers,
booleans, datetimes or lists. Arbitrary by design: the user writes it (sections of any source or destination)."""

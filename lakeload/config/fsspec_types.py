"""Names for the two kinds of dict the bucket configuration passes around whose keys are not lakeload's to fix.

fsspec's filesystems take keyword arguments of their own (s3fs, gcsfs, adlfs, paramiko each take different ones),
and users add theirs through `kwargs`/`client_kwargs`; a backend's credentials have the fields of its dataclass.
Both are named here so that a signature says which of the two it carries, not a bare `dict[str, Any]`.

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

"""Driver side: exclusive table versions for the embedded Iceberg catalog, by create-only writes into the bucket.

Under the embedded catalog a table is its newest metadata file, so two writers that both read version N and both
write version N+1 would each think they committed while readers see only one of them. Before pyiceberg writes
metadata version V, lakeload claims V by creating `<table>/metadata/_lakeload_commits/<V>.claim` only if it does
not exist: an exclusive create on a local folder, a conditional PUT (`If-None-Match: *`) on S3. The loser gets
pyiceberg's `CommitFailedException` and reads the table again (`lakeload.delta.tree`). A claim names its
metadata file; a claim whose file never appeared (its writer died between the two writes) is skipped once
older than `STALE_SECONDS`: the next writer commits the version after it. A writer that finds, after writing,
a claim above its own (its claim was taken for stale) reports its commit as failed and commits again.

Buckets whose filesystem has no create-only write (GCS, Azure, SFTP through fsspec here) get no claims: as with
dlt, concurrent writers there need a shared catalog (`[iceberg_catalog]`).

>>> claim_name(7)
'00007.claim'
"""

from __future__ import annotations

import json
import logging
import os
import posixpath
import re
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

logger = logging.getLogger("lakeload.load")
CLAIMS = "_lakeload_commits"
STALE_SECONDS = 300.0
_CLAIM = re.compile(r"^(\d+)\.claim$")


def claim_name(version: int) -> str:
    return f"{version:05d}.claim"


def claims_dir(metadata_path: str) -> str:
    """The claims folder beside a metadata file (fsspec path or URI)."""
    return posixpath.join(posixpath.dirname(metadata_path), CLAIMS)


def supports_claims(fs: AbstractFileSystem) -> bool:
    """Whether `fs` can create a file only if it does not exist (local folders, S3)."""
    protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    return bool({"file", "local", "s3", "s3a"} & set(protocols))


def create_exclusive(fs: AbstractFileSystem, path: str, data: bytes) -> bool:
    """Create `path` holding `data` unless it exists; False when it exists."""
    path = fs._strip_protocol(path)
    protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    try:
        if {"file", "local"} & set(protocols):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "xb") as handle:
                handle.write(data)
        else:
            fs.pipe_file(path, data, mode="create")
    except FileExistsError:
        return False
    return True


def claim(fs: AbstractFileSystem, metadata_path: str, version: int) -> bool:
    """Claim `version` for the metadata file `metadata_path`; False when another writer holds it."""
    body = json.dumps({"metadata": posixpath.basename(metadata_path), "at": time.time()}).encode()
    return create_exclusive(fs, posixpath.join(claims_dir(metadata_path), claim_name(version)), body)


def claimed_versions(fs: AbstractFileSystem, metadata_path: str) -> list[int]:
    """The versions claimed in the table of `metadata_path`, ascending."""
    folder = fs._strip_protocol(claims_dir(metadata_path))
    try:
        names = [posixpath.basename(p) for p in fs.ls(folder, detail=False, refresh=True)]
    except FileNotFoundError:
        return []
    return sorted(int(m.group(1)) for n in names if (m := _CLAIM.match(n)))


def stale_above(fs: AbstractFileSystem, metadata_path: str, version: int) -> int:
    """The highest version above `version` whose claim is stale (its metadata file never appeared, and it is
    older than `STALE_SECONDS`); `version` when there is none. A fresh claim without its file is left alone:
    its writer is between its two writes (the commit that follows fails on it and tries again)."""
    highest = version
    folder = posixpath.dirname(fs._strip_protocol(metadata_path))
    for claimed in claimed_versions(fs, metadata_path):
        if claimed <= highest:
            continue
        path = posixpath.join(folder, CLAIMS, claim_name(claimed))
        try:
            content = json.loads(fs.cat_file(path))
        except (OSError, ValueError):
            continue
        if fs.exists(posixpath.join(folder, str(content.get("metadata", "")))):
            continue
        if time.time() - float(content.get("at", 0)) >= STALE_SECONDS:
            logger.warning("Iceberg metadata version %d was claimed and never written (a writer stopped); it is skipped",
                           claimed)
            highest = claimed
    return highest

"""Driver side: pyiceberg reading and writing the bucket through lakeload's own fsspec filesystem of it.

`BucketFileIO` is pyiceberg's fsspec FileIO whose filesystem for the bucket's scheme is the one lakeload opened
from the destination's configuration (`FilesystemClient.fs`: credentials, endpoint, retries), so no credential
is copied into a catalog's properties, where pyiceberg could print it. `BucketSqlCatalog` is pyiceberg's SQL
catalog using it (SQLite or PostgreSQL), with an in-memory SQLite database shared by every thread of the
process when its uri is `sqlite:///:memory:` (the embedded catalog).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.io.fsspec import FsspecFileIO

from lakeload.iceberg import commit_claims

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem
    from pyiceberg.io import FileIO
    from pyiceberg.table.metadata import TableMetadata

    from lakeload.destinations.impl.filesystem.client import FilesystemClient

MEMORY_URI = "sqlite:///:memory:"


FS_KEY = "lakeload.bucket-fs"  # the catalog property naming a filesystem of `_FILESYSTEMS` (an opaque id)
_FILESYSTEMS: dict[str, AbstractFileSystem] = {}


def io_properties(fs: AbstractFileSystem) -> dict[str, str]:
    """Catalog properties that make every FileIO pyiceberg loads for the catalog a `BucketFileIO` over `fs`."""
    key = f"{type(fs).__name__}-{id(fs)}"
    _FILESYSTEMS[key] = fs
    return {"py-io-impl": f"{__name__}.BucketFileIO", FS_KEY: key}


class BucketFileIO(FsspecFileIO):
    """pyiceberg's fsspec FileIO over lakeload's filesystem of one bucket (local paths: the local filesystem); made
    by pyiceberg from the catalog's properties (`io_properties`)."""

    def __init__(self, properties: dict[str, str]) -> None:
        super().__init__(properties=properties)
        self._bucket_fs = _FILESYSTEMS[properties[FS_KEY]]

    def _get_fs(self, scheme: str, hostname: str | None = None) -> AbstractFileSystem:
        if scheme in ("", "file"):
            from fsspec.implementations.local import LocalFileSystem

            return LocalFileSystem(auto_mkdir=True)
        return self._bucket_fs

    def __getstate__(self) -> dict[str, Any]:  # never shipped: the filesystem holds the bucket's credentials
        raise TypeError("BucketFileIO is not picklable (it holds the bucket's credentials)")


class BucketSqlCatalog(SqlCatalog):
    """pyiceberg's SQL catalog whose tables read and write the bucket through `BucketFileIO`. `exclusive`: every
    metadata version is claimed in the bucket before it is written (`lakeload.iceberg.commit_claims`: the
    embedded catalog, whose truth is the bucket)."""

    def __init__(self, client: FilesystemClient, name: str, *, exclusive: bool = False, properties: dict[str, str]) -> None:
        self._fs = client.fs
        self._claims = exclusive and commit_claims.supports_claims(client.fs)
        properties = {**properties, **io_properties(client.fs)}
        if properties.get("uri") == MEMORY_URI:
            from sqlalchemy import create_engine
            from sqlalchemy.pool import StaticPool

            properties = {**properties, "uri": "sqlite://"}
            super().__init__(name, **properties)
            self.engine = create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False})
            self._init_catalog()
        else:
            super().__init__(name, **properties)

    def _parse_metadata_version(self, metadata_location: str) -> int:  # type: ignore[override]
        """The version of a metadata file, or of a stale claim above it (the next commit skips that version)."""
        version = SqlCatalog._parse_metadata_version(metadata_location)
        return commit_claims.stale_above(self._fs, metadata_location, version) if self._claims else version

    def _write_metadata(self, metadata: TableMetadata, io: FileIO, metadata_path: str) -> None:  # type: ignore[override]
        """Claim the metadata file's version, write it, and check no later claim skipped it (else the commit
        fails as a concurrent update: pyiceberg's `CommitFailedException`, and the load reads the table again)."""
        if not self._claims:
            SqlCatalog._write_metadata(metadata, io, metadata_path)
            return
        version = SqlCatalog._parse_metadata_version(metadata_path)
        if not commit_claims.claim(self._fs, metadata_path, version):
            raise CommitFailedException(f"Iceberg metadata version {version} was committed by another writer")
        SqlCatalog._write_metadata(metadata, io, metadata_path)
        if any(v > version for v in commit_claims.claimed_versions(self._fs, metadata_path)):
            raise CommitFailedException(f"Iceberg metadata version {version} was taken for stale by another writer")

    def __repr__(self) -> str:  # its uri may carry a database password
        return f"BucketSqlCatalog(name={self.name!r})"

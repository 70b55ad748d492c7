"""Where the I/O manager's tables live and how delta-rs and the Spark executors open them.

The I/O manager's settings become a `FilesystemConfiguration`, the same object a lakeload pipeline's
bucket is described by: `root_uri` is the bucket URL (lakeload's `[destination.filesystem] bucket_url`
when not given), credentials are the storage config's fields laid over those in lakeload's configuration,
and the delta-only options go to `deltalake_storage_options`. From it come the delta-rs storage options
(`lakeload.delta.storage`) and the fsspec arguments the executors write with, so one
`.lakeload/secrets.toml` serves pipelines and assets.

>>> from lakeload.dagster.config import LocalConfig
>>> location = resolve_location("/data/lake", LocalConfig())
>>> location.table("iris", "iris_dataset").uri
'/data/lake/iris/iris_dataset'
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from lakeload.config.credentials import Credentials, url_without_password
from lakeload.config.open_types import CredentialFields, FsspecOptions
from lakeload.dagster.config import PROVIDER_PROTOCOLS, ClientConfig, LakeloadConfig, StorageConfig
from lakeload.delta.storage import StorageOptions, delta_protocol, storage_options, table_uri
from lakeload.destinations.impl.filesystem.client import fsspec_kwargs, open_filesystem
from lakeload.destinations.impl.filesystem.configuration import (
    FilesystemArguments,
    FilesystemConfiguration,
    resolve_configuration,
)
from lakeload.errors import ConfigurationError


@dataclass(frozen=True)
class TableLocation:
    """One table: its delta-rs URI and its folder as the executors' fsspec filesystem names it."""

    name: str
    uri: str
    folder: str


@dataclass
class DeltaLocation:
    """The root of the I/O manager's tables with everything needed to open them (secrets in clear: never log)."""

    config: FilesystemConfiguration
    root_path: str  # the root as an fsspec path (no protocol for buckets)
    storage_options: StorageOptions
    fs_kwargs: FsspecOptions = field(repr=False)

    def __repr__(self) -> str:
        return f"DeltaLocation({url_without_password(self.config.bucket_url)!r})"

    @property
    def root_uri(self) -> str:
        return self.config.bucket_url

    @property
    def is_local(self) -> bool:
        return self.config.is_local

    def table(self, schema: str, table: str) -> TableLocation:
        """`<root_uri>/<schema>/<table>`."""
        dataset_path = posixpath.join(self.root_path.rstrip("/"), schema)
        uri = table_uri(self.config, dataset_path, table)
        return TableLocation(f"{schema}.{table}", uri, posixpath.join(dataset_path, table))


def _check_provider(storage: StorageConfig, config: FilesystemConfiguration) -> None:
    protocols = PROVIDER_PROTOCOLS.get(storage.provider)
    if protocols is None or config.protocol.lower() in protocols:
        return
    raise ConfigurationError(
        f"storage_options is {type(storage).__name__} (provider {storage.provider!r}) but root_uri "
        f"{url_without_password(config.bucket_url)!r} is a {config.protocol}:// location. Use the storage config of that "
        f"backend, or LakeloadConfig() to take the settings from lakeload's configuration."
    )


def _credentials(resolved: Credentials | None, explicit: CredentialFields) -> Credentials | None:
    """The explicit fields over the fields lakeload's configuration gives (each field on its own)."""
    if not explicit:
        return resolved
    base = resolved.to_dict() if resolved is not None else {}
    sources = dict(resolved.sources) if resolved is not None else {}
    sources.update({name: "Dagster I/O manager storage_options" for name in explicit})
    return Credentials({**base, **explicit}, sources=sources)


def resolve_location(
    root_uri: str | None,
    storage: StorageConfig | None = None,
    client: ClientConfig | None = None,
    destination_name: str = "filesystem",
    pipeline_name: str | None = None,
) -> DeltaLocation:
    """Resolve the I/O manager's storage: explicit settings first, then lakeload's configuration."""
    storage = storage or LakeloadConfig()
    explicit: FilesystemArguments = {"bucket_url": root_uri}
    config = resolve_configuration(explicit, destination_name, pipeline_name)
    _check_provider(storage, config)
    delta_protocol(config)  # a clear error for memory://, sftp://, ...
    config.credentials = _credentials(config.credentials, storage.credentials())
    config.kwargs = {**config.kwargs, **storage.fsspec_kwargs()}
    config.deltalake_storage_options = {
        **config.deltalake_storage_options, **storage.all_delta_options(), **(client.delta_options() if client else {}),
    }
    kwargs = fsspec_kwargs(config)
    root_path = open_filesystem(config.bucket_url, kwargs)[1] if not config.is_local else config.bucket_url[len("file://"):]
    return DeltaLocation(config, root_path, storage_options(config), kwargs)

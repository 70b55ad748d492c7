"""`lakeload.destinations.filesystem(...)`: the filesystem & buckets destination factory."""

from __future__ import annotations

import copy
from dataclasses import fields, replace
from typing import Any

from lakeload.config.credentials import url_without_password
from lakeload.config.open_types import FsspecOptions
from lakeload.destinations.impl.filesystem.configuration import (
    DeltaStorageArguments,
    ExtraPlaceholders,
    FilesystemArguments,
    FilesystemConfiguration,
    resolve_configuration,
)
from lakeload.destinations.impl.filesystem.table_format import table_format, table_format_names
from lakeload.destinations.reference import Destination, DestinationCapabilities

_CAPABILITY_NAMES = {f.name for f in fields(DestinationCapabilities)}


class filesystem(Destination):  # noqa: N801 - dlt's factory name
    """The filesystem destination: a local folder or a bucket (s3, gs, az, sftp, memory).

    >>> dest = filesystem(bucket_url="/tmp/bucket", layout="{table_name}/{load_id}.{file_id}.{ext}")
    >>> dest.name
    'filesystem'
    """

    type_name = "filesystem"

    def __init__(self, bucket_url: str | None = None, credentials: Any = None, layout: str | None = None,
                 extra_placeholders: ExtraPlaceholders | None = None, current_datetime: Any = None,
                 destination_name: str | None = None, kwargs: FsspecOptions | None = None,
                 client_kwargs: FsspecOptions | None = None, always_refresh_views: bool | None = None,
                 max_state_files: int | None = None, deltalake_storage_options: DeltaStorageArguments | None = None,
                 **capabilities: Any) -> None:
        unknown = set(capabilities) - _CAPABILITY_NAMES
        if unknown:
            from lakeload.errors import ConfigurationError

            raise ConfigurationError(
                f"Unknown filesystem destination arguments {sorted(unknown)}; known capabilities: {sorted(_CAPABILITY_NAMES)}."
            )
        self.bucket_url, self.credentials, self.layout = bucket_url, credentials, layout
        self.extra_placeholders, self.current_datetime = extra_placeholders, current_datetime
        self.given_name, self.kwargs, self.client_kwargs = destination_name, kwargs, client_kwargs
        self.always_refresh_views, self.max_state_files = always_refresh_views, max_state_files
        self.deltalake_storage_options = deltalake_storage_options
        self.capability_overrides = capabilities

    @property
    def name(self) -> str:
        return self.given_name or self.destination_type.rsplit(".", 1)[-1]  # dlt: the last part of its type

    @property
    def destination_name(self) -> str:
        """The name given, else the type's (dlt's `destination_name`: "filesystem" for the shorthand)."""
        return self.name

    def capabilities(self) -> DestinationCapabilities:
        """dlt's capabilities of a filesystem destination; its table formats are those registered
        (`table_format.table_format_names`), its merge strategies those of any of them."""
        names = table_format_names()
        strategies = dict.fromkeys(s for name in names for s in table_format(name).capabilities.merge_strategies)
        found = DestinationCapabilities(supported_table_formats=tuple(names), supported_merge_strategies=tuple(strategies))
        return replace(found, **self.capability_overrides)

    def configuration(self, pipeline_name: str | None = None) -> FilesystemConfiguration:
        """Resolve this destination's settings from arguments, env vars and TOML files."""
        explicit: FilesystemArguments = {
            "bucket_url": self.bucket_url,
            "credentials": self.credentials,
            "layout": self.layout,
            "extra_placeholders": self.extra_placeholders,
            "current_datetime": self.current_datetime,
            "kwargs": self.kwargs,
            "client_kwargs": self.client_kwargs,
            "always_refresh_views": self.always_refresh_views,
            "max_state_files": self.max_state_files,
            "deltalake_storage_options": self.deltalake_storage_options,
        }
        return resolve_configuration(explicit, self.name, pipeline_name)

    def location(self, pipeline_name: str | None = None) -> str:
        """The resolved bucket URL (a `ConfigurationError` when none is configured)."""
        return self.configuration(pipeline_name).bucket_url

    def with_credentials(self, credentials: Any) -> filesystem:
        """A copy that uses `credentials` (a dict, a connection string or a lakeload credentials object)."""
        changed = copy.copy(self)
        changed.credentials = credentials
        return changed

    def __repr__(self) -> str:
        bucket_url = url_without_password(self.bucket_url) if isinstance(self.bucket_url, str) else self.bucket_url
        return f"filesystem(destination_name={self.name!r}, bucket_url={bucket_url!r})"

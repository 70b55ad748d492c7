"""The settings a pipeline looks up: its destination's configuration, naming, file sizes and formats.

`Pipeline` inherits them; every value comes from the one resolver (`lakeload.config`) or the destination.
"""

from __future__ import annotations

from typing import Any

from lakeload.config.resolver import resolve
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.destinations.reference import Destination, JobClient, LoadContext
from lakeload.errors import ConfigurationError, LakeloadError
from lakeload.extract.extractor import FILE_MAX_BYTES
from lakeload.kernel.filesystem.layout import Layout
from lakeload.load.loader import checked_layout
from lakeload.runtime.package_destination import DestinationRecord, destination_record
from lakeload.schema.naming import NamingConvention, get_naming
from lakeload.schema.schema import Schema
from lakeload.storage.packages import PipelineStorage

NO_DESTINATION = (
    "No destination: pass destination='filesystem' (or a lakeload.destinations.filesystem(...) factory) "
    "to lakeload.pipeline() or to run()."
)


class PipelineSettings:
    """Configuration lookups of a pipeline (named `pipeline_name`, loading to `destination`)."""

    pipeline_name: str
    destination: Destination | None
    dataset_name: str
    storage: PipelineStorage
    spark: Any
    _source_options: dict[str, dict[str, Any]]

    def _configuration(self) -> FilesystemConfiguration:
        if self.destination is None:
            raise LakeloadError(NO_DESTINATION)
        config = self.destination.configuration(self.pipeline_name)
        if not isinstance(config, FilesystemConfiguration):
            raise LakeloadError(f"Destination {self.destination!r} has no bucket: it is not a filesystem destination.")
        return config

    def _job_client(self) -> JobClient:
        """The destination's job client for this pipeline and dataset (`lakeload.destinations.reference`)."""
        if self.destination is None:
            raise LakeloadError(NO_DESTINATION)
        return self.destination.client(LoadContext(self.pipeline_name, self.dataset_name, lambda: self.spark, self.storage))

    def _client(self) -> FilesystemClient:
        return FilesystemClient(self._configuration(), self.dataset_name)

    def destination_client(self) -> FilesystemClient:
        """The client of the pipeline's filesystem destination and dataset, its configuration resolved (as dlt's
        `pipeline.destination_client()`); a `ConfigurationError` when the bucket is not configured.

        >>> import tempfile
        >>> import lakeload
        >>> tmp = tempfile.TemporaryDirectory()
        >>> pipeline = lakeload.pipeline("quick_start", destination=lakeload.destinations.filesystem("memory://bucket"),
        ...                              dataset_name="my_dataset", pipelines_dir=tmp.name)
        >>> pipeline.destination_client().dataset_path
        '/bucket/my_dataset'
        """
        return self._client()

    def _layout(self, config: FilesystemConfiguration) -> Layout:
        return checked_layout(config)

    @property
    def naming(self) -> NamingConvention:
        """The naming convention of new schemas: the destination's (snake_case unless overridden)."""
        name = self.destination.capabilities().naming_convention if self.destination is not None else "snake_case"
        return get_naming(name)

    def _schema_naming(self, schema: Schema) -> NamingConvention:
        """A stored schema keeps the naming it was created with; a different destination naming is an error."""
        naming = self.naming
        stored = schema.normalizers.get("names", naming.name)
        if schema.data_tables(seen_data_only=True) and stored != naming.name:
            raise LakeloadError(
                f"Schema '{schema.name}' was created with the '{stored}' naming convention but the destination "
                f"asks for '{naming.name}'. Load into a new dataset (and pipeline), or keep naming_convention='{stored}'."
            )
        schema.normalizers["names"] = naming.name
        return naming

    def _compressed(self) -> bool:
        for sections in (("normalize", "data_writer"), ("data_writer",)):
            value = resolve(sections, "disable_compression", self.pipeline_name, hint=bool).value
            if value is not None:
                return not value
        return True

    def _file_max_bytes(self) -> int:
        """Size at which extract starts a new file; more files let more Spark tasks share the work."""
        value = resolve(("extract",), "file_max_bytes", self.pipeline_name, hint=int).value
        return int(value) if value else FILE_MAX_BYTES

    def _source_options_for(self, bucket_url: str) -> dict[str, Any]:
        """fsspec options of a files source's bucket: those extract used, else from `[sources.filesystem]`."""
        if bucket_url not in self._source_options:
            from lakeload.sources.filesystem import configured_options

            self._source_options[bucket_url] = configured_options(bucket_url, self.pipeline_name)
        return self._source_options[bucket_url]

    def _max_nesting(self) -> int | None:
        """The destination's nesting (sinks receive nested data whole: dlt's max_table_nesting=0); None: the schema's."""
        return self.destination.max_table_nesting if self.destination is not None else None

    def _destination_record(self) -> DestinationRecord | None:
        """The destination packages of this pipeline are meant for now (see `package_destination`)."""
        if self.destination is None:
            return None
        destination = self.destination
        return destination_record(destination.destination_type, destination.name, destination.location(self.pipeline_name),
                                  self.dataset_name)

    def _extract_destination(self) -> DestinationRecord | None:
        """The destination a new package is for; none when it is not configured yet (`extract()` alone, as in dlt)."""
        try:
            return self._destination_record()
        except ConfigurationError:
            return None

    def _preferred_format(self) -> str:
        return self.destination.capabilities().preferred_loader_file_format if self.destination else "jsonl"

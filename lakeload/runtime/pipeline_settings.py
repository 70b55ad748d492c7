"""The settings part of `Pipeline`: where it loads (destination, dataset) and the configuration it looks up.

`PipelineSettings` holds the resolved destination and dataset name (`run(destination=..., dataset_name=...)`
replaces them) and answers every lookup the steps make: the destination's configuration and clients, the naming
convention, file sizes and formats. Values under `[extract]`, `[normalize]` or `[sources.filesystem]` come from the
one resolver (`lakeload.config`) when a step asks, so a changed environment applies to the next step.

>>> settings = PipelineSettings("quick_start", None, "mydata")
>>> settings.naming.name, settings.preferred_format(), settings.destination_record() is None
('snake_case', 'jsonl', True)
>>> from lakeload.destinations import filesystem
>>> PipelineSettings("quick_start", filesystem("memory://bucket"), "my_dataset").client().dataset_path
'/bucket/my_dataset'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lakeload.config.data_writer import DataWriterSettings, extract_data_writer, normalize_data_writer
from lakeload.config.resolver import resolve
from lakeload.destinations.file_formats import written_format
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.destinations.reference import Destination, JobClient, LoadContext
from lakeload.errors import ConfigurationError, LakeloadError
from lakeload.extract.writer import FILE_MAX_BYTES
from lakeload.kernel.filesystem.layout import Layout
from lakeload.kernel.normalize.writers import FileLimits
from lakeload.load.loader import checked_layout
from lakeload.runtime.package_destination import DestinationRecord, destination_record
from lakeload.schema.naming import NamingConvention, get_naming
from lakeload.schema.schema import Schema
from lakeload.storage.packages import PipelineStorage

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NO_DESTINATION = (
    "No destination: pass destination='filesystem' (or a lakeload.destinations.filesystem(...) factory) "
    "to lakeload.pipeline() or to run()."
)


@dataclass
class PipelineSettings:
    """The pipeline `pipeline_name` loading into `dataset_name` of `destination`, and its configuration lookups."""

    pipeline_name: str
    destination: Destination | None
    dataset_name: str
    source_options: dict[str, dict[str, Any]] = field(default_factory=dict)  # bucket_url -> fsspec options (files sources)
    staging: Destination | None = None  # the bucket a database destination loads its files from (`staging=`)

    def configuration(self) -> FilesystemConfiguration:
        """The filesystem destination's resolved configuration; an error without one."""
        if self.destination is None:
            raise LakeloadError(NO_DESTINATION)
        config = self.destination.configuration(self.pipeline_name)
        if not isinstance(config, FilesystemConfiguration):
            raise LakeloadError(f"Destination {self.destination!r} has no bucket: it is not a filesystem destination.")
        return config

    def job_client(self, spark: Callable[[], SparkSession], storage: PipelineStorage) -> JobClient:
        """The destination's job client for this pipeline and dataset (`lakeload.destinations.reference`)."""
        if self.destination is None:
            raise LakeloadError(NO_DESTINATION)
        context = LoadContext(self.pipeline_name, self.dataset_name, spark, storage, self.staging, self.naming.name)
        return self.destination.client(context)

    def client(self) -> FilesystemClient:
        """The client of the filesystem destination's dataset (`pipeline.destination_client()`)."""
        return FilesystemClient(self.configuration(), self.dataset_name)

    def layout(self, config: FilesystemConfiguration) -> Layout:
        """The bucket's file layout, checked."""
        return checked_layout(config)

    @property
    def naming(self) -> NamingConvention:
        """The naming convention of new schemas, as dlt picks it: `[schema] naming` (env `SCHEMA__NAMING`), else the
        destination's (`naming_convention=`), else `snake_case`."""
        name = resolve(("schema",), "naming", self.pipeline_name).value
        if not name:
            name = self.destination.capabilities().naming_convention if self.destination is not None else "snake_case"
        return get_naming(str(name))

    def schema_naming(self, schema: Schema) -> NamingConvention:
        """A stored schema keeps the naming it was created with; a different destination naming is an error."""
        naming = self.naming
        stored = schema.normalizers.get("names", naming.name)
        if schema.data_tables(seen_data_only=True) and stored != naming.name:
            raise LakeloadError(
                f"Schema '{schema.name}' was created with the '{stored}' naming convention but the destination "
                f"(or [schema] naming) asks for '{naming.name}'. Load into a new dataset (and pipeline), or keep naming_convention='{stored}'."
            )
        schema.normalizers["names"] = naming.name
        return naming

    def compressed(self) -> bool:
        """Whether normalize compresses its files (`[normalize.data_writer] disable_compression`)."""
        for sections in (("normalize", "data_writer"), ("data_writer",)):
            value = resolve(sections, "disable_compression", self.pipeline_name, hint=bool).value
            if value is not None:
                return not value
        return True

    def file_max_bytes(self) -> int:
        """Size at which extract starts a new file; more files let more Spark tasks share the work."""
        value = resolve(("extract",), "file_max_bytes", self.pipeline_name, hint=int).value
        return int(value) if value else FILE_MAX_BYTES

    def extract_writer(self, source_section: str, source_name: str) -> DataWriterSettings:
        """dlt's file rotation of one source's extracted items (`[sources.<section>.data_writer]`, ...); a size
        not set there is `[extract] file_max_bytes`."""
        return extract_data_writer(source_section, source_name, self.pipeline_name)

    def normalize_file_limits(self) -> FileLimits:
        """When normalize begins a new file of a table (`[normalize.data_writer]`, then `[data_writer]`): at dlt's rows
        per file (`file_max_items` in whole buffers of `buffer_max_items`), or once a file reached `file_max_bytes`."""
        writer = normalize_data_writer(self.pipeline_name)
        return FileLimits(writer.items_per_file, writer.file_max_bytes)

    def source_options_for(self, bucket_url: str) -> dict[str, Any]:
        """fsspec options of a files source's bucket: those extract used, else from `[sources.filesystem]`."""
        if bucket_url not in self.source_options:
            from lakeload.sources.filesystem import configured_options

            self.source_options[bucket_url] = configured_options(bucket_url, self.pipeline_name)
        return self.source_options[bucket_url]

    def max_nesting(self) -> int | None:
        """The destination's nesting (sinks receive nested data whole: dlt's max_table_nesting=0); None: the schema's."""
        return self.destination.max_table_nesting if self.destination is not None else None

    def destination_record(self) -> DestinationRecord | None:
        """The destination packages of this pipeline are meant for now (see `package_destination`)."""
        if self.destination is None:
            return None
        destination = self.destination
        return destination_record(destination.type_name, destination.name, destination.location(self.pipeline_name),
                                  self.dataset_name)

    def extract_destination(self) -> DestinationRecord | None:
        """The destination a new package is for; none when it is not configured yet (`extract()` alone, as in dlt)."""
        try:
            return self.destination_record()
        except ConfigurationError:
            return None

    def refused_merges_but(self) -> tuple[str, ...] | None:
        """The merge strategies of a destination that refuses a plain table's others (None: any is taken, an
        unsupported one appended, as dlt's filesystem does)."""
        if self.destination is None:
            return None
        capabilities = self.destination.capabilities()
        return None if capabilities.merge_falls_back_to_append else capabilities.supported_merge_strategies

    def destination_merges(self) -> bool:
        """Whether the destination merges rows itself (a database): normalize gives its merge tables dlt's ids."""
        return self.destination is not None and self.destination.capabilities().merges_in_place

    def preferred_format(self) -> str:
        """The loader file format when none is asked for: the destination's preferred one."""
        return self.destination.capabilities().preferred_loader_file_format if self.destination else "jsonl"

    def written_format(self, requested: str | None, announce: bool = False) -> str:
        """The file format normalize writes for `loader_file_format=requested` (`file_formats.written_format`): a
        `ConfigurationError` when the destination does not load it."""
        destination = self.destination
        capabilities = destination.capabilities() if destination else None
        return written_format(requested, capabilities, destination.name if destination else "", announce=announce)

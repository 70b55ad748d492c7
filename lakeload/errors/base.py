"""The roots of lakeload's error hierarchy: `LakeloadError` and one error per area (configuration, destination,
schema, extract, normalize, load, Spark); the modules beside this one derive the particular errors from them.
"""

from __future__ import annotations


class LakeloadError(Exception):
    """Base of every lakeload error."""


class ConfigurationError(LakeloadError):
    """A configuration value is missing, malformed or inconsistent."""


class DestinationError(LakeloadError):
    """The destination refused an operation or is not reachable."""


class LayoutError(ConfigurationError):
    """The filesystem layout template is invalid."""


class SchemaError(LakeloadError):
    """Data does not fit the schema and cannot be coerced."""


class ExtractError(LakeloadError):
    """A resource failed or produced data lakeload cannot store."""


class NormalizeError(LakeloadError):
    """The Spark normalize job failed."""


class LoadError(LakeloadError):
    """Loading a package into the destination failed. The package stays pending and is retried by `pipeline.load()`."""


class SparkSetupError(LakeloadError):
    """Spark or Java could not be started."""

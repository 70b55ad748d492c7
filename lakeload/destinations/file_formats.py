"""The file format normalize writes for a package: the one `loader_file_format` asks for when the destination
takes it (dlt's `supported_loader_file_formats`), else its preferred one.

Normalize writes `jsonl`, `parquet` and `csv`. dlt's `insert_values` (the default of dlt's SQL destinations: the
rows as `INSERT` statements) is written as Parquet where the destination takes it: the same rows, loaded by the
destination's Parquet reader. A format the destination does not take fails before anything is extracted, as
in dlt.

>>> from lakeload.destinations.reference import DestinationCapabilities
>>> duckdb = DestinationCapabilities(preferred_loader_file_format="parquet",
...                                  supported_loader_file_formats=("parquet", "jsonl", "insert_values"))
>>> written_format(None, duckdb, "duckdb"), written_format("jsonl", duckdb, "duckdb")
('parquet', 'jsonl')
>>> written_format("insert_values", duckdb, "duckdb")
'parquet'
>>> written_format("csv", duckdb, "duckdb")
Traceback (most recent call last):
...
lakeload.errors.ConfigurationError: Destination 'duckdb' does not load loader_file_format='csv'; it loads parquet, jsonl, insert_values. Fix: pass one of them to run(loader_file_format=...), or leave it out for parquet.
"""

from __future__ import annotations

import logging

from lakeload.destinations.reference import DestinationCapabilities
from lakeload.errors import ConfigurationError

logger = logging.getLogger("lakeload.normalize")
WRITTEN = ("jsonl", "parquet", "csv")  # what normalize writes
WRITTEN_AS = {"insert_values": "parquet"}  # dlt's formats written as another that loads the same rows


def written_format(
    requested: str | None, capabilities: DestinationCapabilities | None, destination_name: str, *, announce: bool = False
) -> str:
    """The file format normalize writes when `loader_file_format=requested` (None: not given) for a destination
    with `capabilities` (None: no destination yet); a `ConfigurationError` for one it does not take. `announce`
    logs a stand-in format (once per package: normalize asks with it)."""
    if requested is None:
        return capabilities.preferred_loader_file_format if capabilities else "jsonl"
    if capabilities is not None and requested not in capabilities.supported_loader_file_formats:
        supported = capabilities.supported_loader_file_formats
        raise ConfigurationError(
            f"Destination '{destination_name}' does not load loader_file_format={requested!r}; it loads "
            f"{', '.join(supported)}. Fix: pass one of them to run(loader_file_format=...), or leave it out for "
            f"{capabilities.preferred_loader_file_format}."
        )
    if requested in WRITTEN_AS:
        written = WRITTEN_AS[requested]
        if announce:
            logger.info("loader_file_format=%r: lakeload writes the rows as %s files, which %s loads as the same rows.",
                        requested, written, destination_name)
        return written
    if requested not in WRITTEN:
        raise ConfigurationError(
            f"loader_file_format={requested!r} is not a file format lakeload writes. Fix: use one of "
            f"{', '.join(WRITTEN)}."
        )
    return requested

"""dlt's `[data_writer]` settings: when extract and normalize close a file and begin the next one.

dlt reads them per step, with its `data_writer` section kept after every shorter path:

- extract, per source: `[sources.<section>.<source name>.data_writer]`, `[sources.<section>.data_writer]`,
  `[sources.<source name>.data_writer]`, `[sources.data_writer]`, `[data_writer]` (a standalone resource's source
  is its module's section and the schema's name). `[extract.data_writer]` and a resource's own
  `[sources.<section>.<source>.<resource>.data_writer]` are not read, as in dlt 1.31.
- normalize: `[normalize.data_writer]`, then `[data_writer]`.

Each with `<pipeline name>.` first, and as environment variables (`SOURCES__<SECTION>__DATA_WRITER__FILE_MAX_ITEMS`,
`NORMALIZE__DATA_WRITER__FILE_MAX_ITEMS`, `DATA_WRITER__BUFFER_MAX_ITEMS`).

>>> DataWriterSettings(file_max_items=10, buffer_max_items=3).items_per_file
12
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lakeload.config.resolver import resolve
from lakeload.errors import ConfigurationError

BUFFER_MAX_ITEMS = 5000  # dlt's default
DATA_WRITER = "data_writer"


@dataclass(frozen=True)
class DataWriterSettings:
    """One step's file rotation: at most `file_max_items` items (rows) and `file_max_bytes` bytes per file.

    dlt buffers `buffer_max_items` items (at most `file_max_items`) and checks both limits only when it writes its
    buffer out, so a file closes after the write that makes it reach them (`items_per_file`).
    """

    file_max_items: int | None = None
    file_max_bytes: int | None = None
    buffer_max_items: int = BUFFER_MAX_ITEMS

    @property
    def flush_items(self) -> int:
        """Items dlt writes out at once: `buffer_max_items`, never more than `file_max_items`."""
        return min(self.buffer_max_items, self.file_max_items or self.buffer_max_items)

    @property
    def items_per_file(self) -> int | None:
        """Items in each full file when items come one at a time: `file_max_items` rounded up to whole buffers."""
        if not self.file_max_items:
            return None
        return math.ceil(self.file_max_items / self.flush_items) * self.flush_items


def _positive(value: object, key: str, where: str | None) -> int | None:
    """`value` as a limit: None or 0 is none (as in dlt); anything but a positive integer is an error."""
    if value is None or value == 0:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(f"data_writer.{key} must be a positive integer, got {value!r} (from {where}). Fix: set a "
                                 "number of items or bytes, e.g. file_max_items = 100000, or remove the key.")
    return value


def resolve_data_writer(sections: tuple[str, ...], pipeline_name: str | None) -> DataWriterSettings:
    """The writer settings dlt resolves under `sections` (`("normalize",)`, `("sources", section, name)`).

    >>> resolve_data_writer(("normalize",), None).file_max_items
    """
    found: dict[str, int | None] = {}
    for key in ("file_max_items", "file_max_bytes", "buffer_max_items"):
        resolved = resolve(sections, key, pipeline_name, hint=int, config_section=DATA_WRITER)
        found[key] = _positive(resolved.value, key, resolved.source)
    return DataWriterSettings(found["file_max_items"], found["file_max_bytes"], found["buffer_max_items"] or BUFFER_MAX_ITEMS)


def extract_data_writer(source_section: str, source_name: str, pipeline_name: str | None) -> DataWriterSettings:
    """Extract's settings for the items of one source (see the module docstring)."""
    return resolve_data_writer(("sources", source_section, source_name), pipeline_name)


def normalize_data_writer(pipeline_name: str | None) -> DataWriterSettings:
    """Normalize's settings: `[normalize.data_writer]`, then `[data_writer]`."""
    return resolve_data_writer(("normalize",), pipeline_name)

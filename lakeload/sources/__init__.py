"""Sources that Spark reads itself: files in local folders and buckets (`lakeload.sources.filesystem`).

>>> from lakeload.sources import filesystem, read_jsonl
>>> pipeline.run(filesystem("data/", "**/*.jsonl") | read_jsonl(), table_name="events")
"""

from lakeload.sources.filesystem import (
    FileReader,
    FilesystemResource,
    filesystem,
    read_csv,
    read_jsonl,
    read_parquet,
)

__all__ = ["FileReader", "FilesystemResource", "filesystem", "read_csv", "read_jsonl", "read_parquet"]

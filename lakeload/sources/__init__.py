"""Sources that Spark reads itself: files in local folders and buckets (`lakeload.sources.filesystem`), and
incremental loading of any resource (`lakeload.sources.incremental`, dlt's `dlt.sources.incremental`).

Example (`run()` reads the files with Spark)::

    from lakeload.sources import filesystem, read_jsonl
    pipeline.run(filesystem("data/", file_glob="**/*.jsonl") | read_jsonl(), table_name="events")
"""

from typing import TYPE_CHECKING, Any

from lakeload.sources.filesystem import (
    FileReader,
    FilesystemResource,
    filesystem,
    read_csv,
    read_csv_duckdb,
    read_jsonl,
    read_parquet,
    readers,
)

if TYPE_CHECKING:
    from lakeload.extract.incremental import Incremental as incremental  # noqa: N813

__all__ = ["FileReader", "FilesystemResource", "filesystem", "incremental", "read_csv", "read_csv_duckdb", "read_jsonl",
           "read_parquet", "readers"]


def __getattr__(name: str) -> Any:
    if name == "incremental":  # the class itself, as dlt's: `incremental[int]("id")` and `incremental("id")` both work
        from lakeload.extract.incremental import Incremental

        return Incremental
    raise AttributeError(f"module 'lakeload.sources' has no attribute {name!r}")

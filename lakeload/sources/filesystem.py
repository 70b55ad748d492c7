"""Files sources: JSONL, Parquet and CSV files in a local folder or a bucket, read by Spark, not by the driver.

Example (`run()` reads the files with Spark)::

    from lakeload.sources.filesystem import filesystem, read_jsonl, read_parquet, readers
    files = filesystem(bucket_url="s3://bucket/events", file_glob="**/*.jsonl.gz", incremental=True)
    pipeline.run(files | read_jsonl(), table_name="events")
    pipeline.run(filesystem("data/", file_glob="*.parquet") | read_parquet(), table_name="t")
    pipeline.run(readers("data/", file_glob="*.csv").read_csv(), table_name="t")

`filesystem()` lists the files (dlt's file items); a reader (`lakeload.sources.file_readers`) reads them with
Spark; dlt's `readers()` source holds one reader resource per format over the same files.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from lakeload.common.storages.fsspec_filesystem import FileItemDict
from lakeload.config.open_types import FsspecOptions
from lakeload.errors import SourceError
from lakeload.extract.context import ExtractContext
from lakeload.extract.incremental import Incremental
from lakeload.extract.resource import Resource, TableHints
from lakeload.extract.source import Source
from lakeload.sources.file_readers import (
    READERS,
    FileReader,
    FileReadResource,
    FileSelection,
    HintedFiles,
    read_csv,
    read_csv_duckdb,
    read_jsonl,
    read_parquet,
    reading,
)
from lakeload.sources.listing import FileItem, configured_options

__all__ = ["FileItem", "FileItemDict", "FileReader", "FilesystemResource", "configured_options", "filesystem", "read_csv",
           "read_csv_duckdb", "read_jsonl", "read_parquet", "readers"]
# dlt's `readers()` source: its resources, each a reader over the same files
READER_RESOURCES: dict[str, Callable[..., FileReader]] = {
    "read_csv": read_csv, "read_jsonl": read_jsonl, "read_parquet": read_parquet, "read_csv_duckdb": read_csv_duckdb,
}


@dataclass
class FilesystemResource(Resource):
    """The files `filesystem(...)` matches. Alone it yields dlt's file items; `| read_jsonl()` etc. reads them."""

    selection: FileSelection | None = None

    def __or__(self, reader: Any) -> Resource:
        if not isinstance(reader, FileReader) and (isinstance(reader, Resource) or callable(reader)):
            return super().__or__(reader)  # a transformer of one's own: it gets pages of `FileItemDict`s
        if not isinstance(reader, FileReader) or self.selection is None:
            raise SourceError(
                f"Cannot pipe the files of '{self.name}' into {reader!r}: use {READERS}, or a transformer of your own "
                "that reads the file items (FileItemDict.open())."
            )
        hinted = HintedFiles(self, self.selection, self.name)
        return FileReadResource(reader.name, reading(reader, hinted), TableHints(), takes_context=True, reader=reader,
                                hinted=hinted)


def _file_items(selection: FileSelection, extract_content: bool, context: ExtractContext) -> Iterator[list[FileItemDict]]:
    """dlt's pages of file items (`FileSelection.file_items`); with `extract_content`, each file's bytes in
    `file_content`."""
    config, files = selection.select(context)
    for page in selection.file_items(config, files):
        for item in page if extract_content else ():
            item["file_content"] = item.read_bytes()
        yield page


def filesystem(
    bucket_url: str | None = None,
    credentials: Any = None,
    file_glob: str = "*",
    files_per_page: int = 100,
    extract_content: bool = False,
    kwargs: FsspecOptions | None = None,
    client_kwargs: FsspecOptions | None = None,
    incremental: bool | Incremental[Any] = False,
    fetch_file_info: bool = False,
    *,
    name: str = "filesystem",
) -> FilesystemResource:
    """The files below `bucket_url` that match `file_glob` (`**` spans folders), dlt-style, with dlt's arguments in
    dlt's order: `filesystem("data/", None, "**/*.jsonl")` is dlt's `filesystem(bucket_url, credentials, file_glob)`.

    `bucket_url`: a local folder, `file://` URL or bucket (`s3://`, `gs://`, `az://`, `abfss://`, `sftp://`,
    `memory://`); `credentials`, `kwargs`, `client_kwargs` take the forms of the filesystem destination's.
    Unset ones come from `[sources.filesystem]` (`SOURCES__FILESYSTEM__BUCKET_URL`,
    `[sources.filesystem.credentials]`), resolved when the pipeline extracts. No matching file: a warning.

    `incremental=True` picks only files not loaded before: a file is new when its URL is not in the
    pipeline state or its version (etag on object stores, else modification time) changed. The state
    holds `state["sources"][<schema>]["resources"][<resource>]["files"] = {url: version}` and is committed
    only when the extract succeeded, so a failed extract picks the same files again. Tradeoff: one entry
    (~100 bytes) per existing file, written with every state change to `_dlt_pipeline_state`: fine for
    tens of thousands of files, heavy for millions (then split the glob by date prefix). Entries of
    files deleted from the bucket are dropped; a high-water mark on modification time would be constant
    size but miss files that arrive late with older times. The state is keyed by resource name: give
    two incremental sources in one pipeline different names (`(files | read_jsonl()).with_name("events")`).

    dlt's way works too: `incremental=lakeload.sources.incremental("modification_date")` (or
    `files.apply_hints(incremental=...)`) reads only files modified after the last loaded one (a file arriving late with an older time is missed),
    its cursor kept as dlt keeps it, under the files resource's name (`filesystem_<name>` after `.with_name(name)`).

    Alone, or piped into a transformer of one's own, it yields dlt's pages of file items: lists of up to
    `files_per_page` `FileItemDict`s that open and read their file (`.open()`, `.read_bytes()`) through this
    source's bucket and credentials; `extract_content=True` puts each file's bytes in `file_content`.
    `fetch_file_info` (dlt's, for its `http` filesystem) changes nothing: every listed file has its size and date.

    Example (`run()` reads the files with Spark)::

        files = filesystem("data/", file_glob="**/*.jsonl", incremental=True)
        pipeline.run(files | read_jsonl(), table_name="events")
    """
    if files_per_page < 1:
        raise SourceError(f"filesystem(files_per_page={files_per_page}): give 1 or more files per page.")
    cursor = incremental if isinstance(incremental, Incremental) else None  # dlt's form: a cursor on the file items
    selection = FileSelection(bucket_url, file_glob, cursor is None and bool(incremental), credentials, kwargs,
                              client_kwargs, files_per_page)
    data = functools.partial(_file_items, selection, extract_content)
    files = FilesystemResource(name, data, TableHints(), takes_context=True, selection=selection)
    files.apply_hints(primary_key="file_url")  # dlt's: keys the hashes of an incremental on the files
    if cursor is not None:
        files.apply_hints(incremental=cursor)
    return files



def readers(
    bucket_url: str | None = None,
    credentials: Any = None,
    file_glob: str = "*",
    kwargs: FsspecOptions | None = None,
    client_kwargs: FsspecOptions | None = None,
    incremental: Incremental[Any] | bool | None = None,
) -> Source:
    """dlt's `readers` source: the files of `filesystem(bucket_url, credentials, file_glob, ...)` behind four reader
    resources, `read_csv`, `read_jsonl`, `read_parquet` and `read_csv_duckdb` (the same rows as `read_csv`: Spark
    reads them all), each callable with its reader's arguments as in dlt.

    The arguments are `filesystem()`'s; `incremental=lakeload.sources.incremental("modification_date")` reads only
    files modified since the last run, its cursor under `filesystem` (`filesystem_<name>` after `.with_name(name)`).

    Example (`run()` reads the files with Spark)::

        files = readers("data/", file_glob="*.csv", incremental=lakeload.sources.incremental("modification_date"))
        pipeline.run(files.read_csv().with_name("rows"))
    """
    resources: dict[str, Resource] = {}
    for name, make_reader in READER_RESOURCES.items():
        files = filesystem(bucket_url, credentials, file_glob, kwargs=kwargs, client_kwargs=client_kwargs,
                           incremental=incremental or False)
        piped = files | make_reader()
        assert isinstance(piped, FileReadResource)
        resources[name] = replace(piped, make_reader=make_reader)
    return Source("readers", resources, section="filesystem")

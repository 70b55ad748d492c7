"""Files sources: JSONL, Parquet and CSV files in a local folder or a bucket, read by Spark, not by the driver.

Example (`run()` reads the files with Spark)::

    from lakeload.sources.filesystem import filesystem, read_jsonl, read_parquet
    files = filesystem(bucket_url="s3://bucket/events", file_glob="**/*.jsonl.gz", incremental=True)
    pipeline.run(files | read_jsonl(), table_name="events")
    pipeline.run(filesystem("data/", file_glob="*.parquet") | read_parquet(), table_name="t")

- `read_jsonl()`: the files are not opened on the driver. Extract registers them as splits of the load
  package (plain files bigger than `[extract] file_max_bytes` as several byte ranges, a gzip file as one);
  normalize's Spark tasks read them in place, and fail naming the file when it changed or vanished
  since extract (the package is kept).
- `read_parquet()` / `read_csv()`: the resource yields one Spark DataFrame over all the files (see
  `lakeload.sources.spark_files`).
"""

from __future__ import annotations

import functools
import gzip
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from lakeload.config.open_types import FsspecOptions
from lakeload.destinations.impl.filesystem.client import open_filesystem
from lakeload.errors import SourceError
from lakeload.extract.context import ExtractContext
from lakeload.extract.external import ExternalFiles
from lakeload.extract.incremental import Incremental
from lakeload.extract.incremental.binding import bind_resource
from lakeload.extract.incremental.items import filter_item
from lakeload.extract.resource import Resource, TableHints
from lakeload.sources.file_items import FileItemDict
from lakeload.sources.listing import (
    FileItem,
    ListedFile,
    SourceConfiguration,
    configured_options,
    list_files,
    pick_new,
    resolve_source,
)
from lakeload.sources.spark_files import files_frame
from lakeload.spark.session_kind import default_parallelism

__all__ = ["FileItem", "FileItemDict", "FileReader", "FilesystemResource", "configured_options", "filesystem", "read_csv",
           "read_jsonl", "read_parquet"]
FORMATS = ("jsonl", "parquet", "csv")
READERS = "read_jsonl(), read_parquet() or read_csv()"


@dataclass(frozen=True)
class FileSelection:
    """What `filesystem(...)` was given; resolved and listed when a pipeline extracts."""

    bucket_url: str | None
    file_glob: str = "*"
    incremental: bool = False
    credentials: Any = field(default=None, repr=False)
    kwargs: FsspecOptions | None = field(default=None, repr=False)
    client_kwargs: FsspecOptions | None = field(default=None, repr=False)

    def select(self, context: ExtractContext, hinted: HintedFiles | None = None) -> tuple[SourceConfiguration, list[ListedFile]]:
        """The resolved bucket and the files to read: all matching ones, with `incremental` only new ones, and with
        an `incremental=` hint on the files resource (`hinted`) only those its cursor lets through."""
        config = resolve_source(self.bucket_url, self.credentials, self.kwargs, self.client_kwargs, context.pipeline_name)
        files = list_files(config, self.file_glob)
        if self.incremental:
            files = pick_new(files, context.resource_state(), config, self.file_glob)
        return config, hinted.pick(files, context) if hinted is not None else files


@dataclass(frozen=True)
class HintedFiles:
    """The files resource piped into a reader, and the resource name its incremental state is kept under.

    dlt's documented way to load only new files is `files.apply_hints(incremental=incremental("modification_date"))`
    before `files | read_csv()`: the cursor filters the file items, not the rows read from them, and its state is
    the files resource's (renamed with the reader as `with_name` renames it, see `FileReadResource.with_name`).
    """

    files: FilesystemResource
    state_name: str

    def pick(self, files: list[ListedFile], context: ExtractContext) -> list[ListedFile]:
        """`files` whose items pass the files resource's incremental (all of them without one)."""
        hint = self.files.incremental_hint
        if hint is None or not files:
            return files
        state = context.for_resource(self.state_name).resource_state
        live, _ = bind_resource(self.state_name, None, hint, self.files.hints.raw_primary_key, state)
        assert live is not None
        kept = filter_item(live, [f.item() for f in files]) or []
        urls = {item["file_url"] for item in kept}
        return [f for f in files if f.url in urls]


@dataclass(frozen=True)
class FileReader:
    """Turns files into items; pipe a `filesystem(...)` resource into one: `files | read_jsonl()`."""

    file_format: str
    add_file_name: bool = False

    def __post_init__(self) -> None:
        if self.file_format not in FORMATS:
            raise SourceError(f"Unknown file format {self.file_format!r}: use {READERS}.")

    @property
    def name(self) -> str:
        return f"read_{self.file_format}"

    def read(self, selection: FileSelection, hinted: HintedFiles | None, context: ExtractContext) -> Iterator[Any]:
        """The items of the selected files: one `ExternalFiles` (JSONL) or one Spark DataFrame; none without files."""
        config, files = selection.select(context, hinted)
        if not files:
            return
        if self.file_format != "jsonl":
            yield files_frame(context.spark(), config, files, self.file_format, self.add_file_name)
        elif config.protocol == "memory":  # lives in this process only: executors cannot see it
            yield from _driver_records(config, files, self.add_file_name)
        else:
            parallelism = default_parallelism(context.spark())  # the splits keep every executor busy to the end
            yield ExternalFiles(config.bucket_url, list(files), config.options, "jsonl", self.add_file_name, parallelism)


def _driver_records(config: SourceConfiguration, files: list[ListedFile], add_file_name: bool) -> Iterator[Any]:
    fs, _ = open_filesystem(config.bucket_url, config.options)
    for file in files:
        data = fs.cat_file(file.path)
        for line in (gzip.decompress(data) if file.compression else data).splitlines():
            if line.strip():
                record = orjson.loads(line)
                if add_file_name and isinstance(record, dict):
                    record["_file_name"] = file.url
                yield record


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
        hinted = HintedFiles(self, self.name)
        return FileReadResource(reader.name, _reading(reader, hinted), TableHints(), takes_context=True, reader=reader, hinted=hinted)


def _reading(reader: FileReader, hinted: HintedFiles) -> Callable[[ExtractContext], Iterator[Any]]:
    assert hinted.files.selection is not None
    return functools.partial(reader.read, hinted.files.selection, hinted)


@dataclass
class FileReadResource(Resource):
    """`files | read_csv()`: the rows of the files; an `incremental=` hint on `files` picks which files (`HintedFiles`)."""

    reader: FileReader | None = None
    hinted: HintedFiles | None = None

    def with_name(self, name: str) -> Resource:
        """A copy under another name; the files' incremental state moves as dlt moves it (the files resource's name
        with the reader's replaced by `name`, else `<files>_<name>`: `filesystem_table` for `.with_name("table")`)."""
        if self.reader is None or self.hinted is None:
            return super().with_name(name)
        old = self.hinted.state_name
        hinted = replace(self.hinted, state_name=old.replace(self.name, name) if self.name in old else f"{old}_{name}")
        return replace(self, name=name, data=_reading(self.reader, hinted), hinted=hinted)


def _file_items(selection: FileSelection, files_per_page: int, extract_content: bool,
                context: ExtractContext) -> Iterator[list[FileItemDict]]:
    """dlt's pages of file items: `files_per_page` `FileItemDict`s each, opened through the source's filesystem."""
    config, files = selection.select(context)
    if not files:
        return
    fs, _ = open_filesystem(config.bucket_url, config.options)
    for start in range(0, len(files), files_per_page):
        page = [FileItemDict(f.item(), fs, f.path) for f in files[start:start + files_per_page]]
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
                              client_kwargs)
    data = functools.partial(_file_items, selection, files_per_page, extract_content)
    files = FilesystemResource(name, data, TableHints(), takes_context=True, selection=selection)
    files.apply_hints(primary_key="file_url")  # dlt's: keys the hashes of an incremental on the files
    if cursor is not None:
        files.apply_hints(incremental=cursor)
    return files


def read_jsonl(chunksize: int = 1000, *, add_file_name: bool = False) -> FileReader:
    """Read JSON lines files (`.jsonl`, `.ndjson`, `.json`; gzip `.gz`): normalize's Spark tasks parse them in place.

    `add_file_name=True` adds the column `_file_name` (the file's URL). `chunksize` is dlt's (records per page of its
    Python reader) and changes nothing here: Spark reads the files.

    Example (`run()` reads the files with Spark)::

        pipeline.run(filesystem("s3://bucket/events", file_glob="*.jsonl.gz") | read_jsonl(), table_name="events")
    """
    return FileReader("jsonl", add_file_name)


def read_parquet(chunksize: int = 1000, use_pyarrow: bool = False, *, add_file_name: bool = False) -> FileReader:
    """Read Parquet files as one Spark DataFrame (the columns' union; types from the files).

    `chunksize` and `use_pyarrow` are dlt's (how its Python reader pages the rows) and change nothing here.

    Example (`run()` reads the files with Spark)::

        pipeline.run(filesystem("data/", file_glob="*.parquet") | read_parquet(), table_name="t")
    """
    return FileReader("parquet", add_file_name)


def read_csv(chunksize: int = 10000, *, add_file_name: bool = False, **pandas_kwargs: Any) -> FileReader:
    """Read CSV files with a header row (gzip `.gz` too) as one Spark DataFrame, with inferred column types.

    `chunksize` is dlt's (rows per page of its pandas reader) and changes nothing here; dlt's pandas options
    (`sep=";"`, ...) are not taken: Spark parses the files.

    Example (`run()` reads the files with Spark)::

        pipeline.run(filesystem("data/", file_glob="*.csv") | read_csv(), table_name="t")
    """
    if pandas_kwargs:
        raise SourceError(
            f"read_csv({', '.join(f'{k}=...' for k in pandas_kwargs)}): lakeload reads CSV with Spark, not pandas, and "
            "takes none of pandas' options. Fix: drop them (files with a header row and commas are read), or convert "
            "the files first.")
    return FileReader("csv", add_file_name)

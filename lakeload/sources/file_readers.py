"""Readers of a files source: what turns the files `filesystem(...)` selects into items, read by Spark, not by the driver.

- `read_jsonl()`: the files are not opened on the driver. Extract registers them as splits of the load
  package (plain files bigger than `[extract] file_max_bytes` as several byte ranges, a gzip file as one);
  normalize's Spark tasks read them in place, and fail naming the file when it changed or vanished
  since extract (the package is kept).
- `read_parquet()` / `read_csv()` / `read_csv_duckdb()`: the resource yields one Spark DataFrame over all the files
  (see `lakeload.sources.spark_files`).

Which files: those the files resource lists, then those its `incremental=` hint lets through, then those its own
steps (`add_filter`, `add_map`, ...) keep, as dlt's pipe of file items would (`HintedFiles`).

Example (`run()` reads the files with Spark)::

    files = filesystem("data/", file_glob="*.parquet")
    files.add_filter(lambda item: item["size_in_bytes"] < 1_000_000)
    pipeline.run(files | read_parquet(), table_name="t")
"""

from __future__ import annotations

import functools
import gzip
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from lakeload.common.storages.fsspec_filesystem import FileItemDict
from lakeload.config.open_types import FsspecOptions
from lakeload.destinations.impl.filesystem.client import open_filesystem
from lakeload.errors import SourceError
from lakeload.extract.context import ExtractContext
from lakeload.extract.external import ExternalFiles
from lakeload.extract.incremental.binding import bind_resource
from lakeload.extract.incremental.items import filter_item
from lakeload.extract.pipes import apply_steps
from lakeload.extract.resource import Resource, page_items
from lakeload.sources.listing import ListedFile, SourceConfiguration, list_files, pick_new, resolve_source
from lakeload.sources.spark_files import files_frame
from lakeload.spark.session_kind import default_parallelism

__all__ = ["FileReadResource", "FileReader", "FileSelection", "HintedFiles", "read_csv", "read_csv_duckdb",
           "read_jsonl", "read_parquet"]
FORMATS = ("jsonl", "parquet", "csv")
READERS = "read_jsonl(), read_parquet(), read_csv() or read_csv_duckdb()"


@dataclass(frozen=True)
class FileSelection:
    """What `filesystem(...)` was given; resolved and listed when a pipeline extracts."""

    bucket_url: str | None
    file_glob: str = "*"
    incremental: bool = False
    credentials: Any = field(default=None, repr=False)
    kwargs: FsspecOptions | None = field(default=None, repr=False)
    client_kwargs: FsspecOptions | None = field(default=None, repr=False)
    files_per_page: int = 100

    def select(self, context: ExtractContext, hinted: HintedFiles | None = None) -> tuple[SourceConfiguration, list[ListedFile]]:
        """The resolved bucket and the files to read: all matching ones, with `incremental` only new ones, and through
        a files resource piped into a reader (`hinted`) only those its cursor and steps let through."""
        config = resolve_source(self.bucket_url, self.credentials, self.kwargs, self.client_kwargs, context.pipeline_name)
        files = list_files(config, self.file_glob)
        if self.incremental:
            files = pick_new(files, context.resource_state(), config, self.file_glob)
        return config, hinted.pick(config, files, context) if hinted is not None else files

    def file_items(self, config: SourceConfiguration, files: list[ListedFile]) -> Iterator[list[FileItemDict]]:
        """dlt's pages of file items: `files_per_page` `FileItemDict`s each, opened through the source's filesystem."""
        if not files:
            return
        fs, _ = open_filesystem(config.bucket_url, config.options)
        for start in range(0, len(files), self.files_per_page):
            yield [FileItemDict(f.item(), fs, f.path) for f in files[start:start + self.files_per_page]]


@dataclass(frozen=True)
class HintedFiles:
    """The files resource piped into a reader, and the resource name its incremental state is kept under.

    dlt's documented way to load only new files is `files.apply_hints(incremental=incremental("modification_date"))`
    before `files | read_csv()`: the cursor filters the file items, not the rows read from them, and its state is
    the files resource's (renamed with the reader as `with_name` renames it, see `FileReadResource.with_name`).
    The files resource's own steps (`files.add_filter(...)`) run on its file items after the cursor.
    """

    files: Resource
    selection: FileSelection
    state_name: str

    def pick(self, config: SourceConfiguration, files: list[ListedFile], context: ExtractContext) -> list[ListedFile]:
        """`files` whose items pass the files resource's incremental and steps (all of them without any)."""
        return self._by_steps(config, self._by_cursor(files, context))

    def _by_cursor(self, files: list[ListedFile], context: ExtractContext) -> list[ListedFile]:
        hint = self.files.incremental_hint
        if hint is None or not files:
            return files
        state = context.for_resource(self.state_name).resource_state
        live, _ = bind_resource(self.state_name, None, hint, self.files.hints.raw_primary_key, state)
        assert live is not None
        kept = filter_item(live, [f.item() for f in files]) or []
        urls = {item["file_url"] for item in kept}
        return [f for f in files if f.url in urls]

    def _by_steps(self, config: SourceConfiguration, files: list[ListedFile]) -> list[ListedFile]:
        if not self.files.steps or not files:
            return files
        stepped = apply_steps(self.selection.file_items(config, files), self.files.steps)
        urls = {item.get("file_url") for page in stepped for item in page_items(page) if isinstance(item, Mapping)}
        return [f for f in files if f.url in urls]


@dataclass(frozen=True)
class FileReader:
    """Turns files into items; pipe a `filesystem(...)` resource into one: `files | read_jsonl()`."""

    file_format: str
    add_file_name: bool = False
    reader_name: str | None = None  # the resource's name when not `read_<file_format>` (`read_csv_duckdb`)

    def __post_init__(self) -> None:
        if self.file_format not in FORMATS:
            raise SourceError(f"Unknown file format {self.file_format!r}: use {READERS}.")

    @property
    def name(self) -> str:
        return self.reader_name or f"read_{self.file_format}"

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


def reading(reader: FileReader, hinted: HintedFiles) -> Callable[[ExtractContext], Iterator[Any]]:
    """The data function of a reader resource: `reader` over the files `hinted` picks."""
    return functools.partial(reader.read, hinted.selection, hinted)


@dataclass
class FileReadResource(Resource):
    """`files | read_csv()`: the rows of the files; an `incremental=` hint on `files` picks which files (`HintedFiles`).

    A reader resource of `readers(...)` can be called with its reader's arguments, as dlt's:
    `readers("data/", file_glob="*.csv").read_csv(chunksize=5000)` (`make_reader`).
    """

    reader: FileReader | None = None
    hinted: HintedFiles | None = None
    make_reader: Callable[..., FileReader] | None = field(default=None, repr=False, compare=False)

    def __call__(self, *args: Any, **kwargs: Any) -> Resource:
        """A copy reading with `make_reader(*args, **kwargs)` (a reader resource of `readers(...)`)."""
        if self.make_reader is None or self.hinted is None:
            return super().__call__(*args, **kwargs)
        reader = self.make_reader(*args, **kwargs)
        return replace(self, reader=reader, data=reading(reader, self.hinted), make_reader=None)

    def with_name(self, name: str) -> Resource:
        """A copy under another name; the files' incremental state moves as dlt moves it (the files resource's name
        with the reader's replaced by `name`, else `<files>_<name>`: `filesystem_table` for `.with_name("table")`)."""
        if self.reader is None or self.hinted is None:
            return super().with_name(name)
        old = self.hinted.state_name
        hinted = replace(self.hinted, state_name=old.replace(self.name, name) if self.name in old else f"{old}_{name}")
        return replace(self, name=name, data=reading(self.reader, hinted), hinted=hinted)


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
    _refuse_options("read_csv", "pandas", pandas_kwargs)
    return FileReader("csv", add_file_name)


def read_csv_duckdb(chunk_size: int | None = 5000, use_pyarrow: bool = False, **duckdb_kwargs: Any) -> FileReader:
    """dlt's CSV reader through DuckDB: here the same reader as `read_csv()` (Spark parses the files, one DataFrame
    over all of them, with inferred column types), under dlt's name, so `readers(...).read_csv_duckdb()` and
    `files | read_csv_duckdb()` run as they do in dlt scripts.

    `chunk_size` and `use_pyarrow` are dlt's (how DuckDB's result is paged) and change nothing here; DuckDB's
    `read_csv` options (`filename=True`, `delim=";"`, ...) are not taken.

    Example (`run()` reads the files with Spark)::

        pipeline.run(readers("data/", file_glob="*.csv").read_csv_duckdb(), table_name="t")
    """
    _refuse_options("read_csv_duckdb", "DuckDB", duckdb_kwargs)
    return FileReader("csv", reader_name="read_csv_duckdb")


def _refuse_options(reader: str, engine: str, options: dict[str, Any]) -> None:
    if options:
        raise SourceError(
            f"{reader}({', '.join(f'{k}=...' for k in options)}): lakeload reads CSV with Spark, not {engine}, and "
            f"takes none of {engine}'s options. Fix: drop them (files with a header row and commas are read), or "
            "convert the files first.")

"""The table formats of the filesystem destination: what each can do, how a package's tables of it are loaded,
and the registry from a `table_format` hint to the format that loads it.

A root table's `table_format` hint picks its format (none: `plain`, files copied into the bucket as they are);
its nested tables follow it. For each package the loader (`lakeload.load.loader`) groups the root tables by
format and hands each format one `FormatLoad`: the root tables of that format, their files (nested tables'
included) and what loading needs (Spark, the bucket's client, the layout). The format writes them as its
write dispositions say (append, replace, merge by its strategy) and returns a `FormatResult`. Right before the
load's `_dlt_loads` record, every format the schema has tables of may record what readers need
(`TableFormat.record_completion`; Delta: its table versions) and finish it right after the record.

Built-in formats register when their module is imported; `DEFAULT_TABLE_FORMATS` names those modules, so
this layer imports none of them (as fsspec's registry names its implementations). A new format (Iceberg, say)
subclasses `TableFormat` in its own package and registers an instance::

    class JsonFormat(TableFormat):
        name = "json_files"
        capabilities = TableFormatCapabilities(write_dispositions=("append",))

        def load(self, work: FormatLoad) -> FormatResult:
            ...  # write work.files into work.client's dataset
            return FormatResult(files=[...])

    register_table_format(JsonFormat())

Its capabilities are what extract asks before loading starts (`lakeload.extract.table_schema`: a merge
strategy the format lacks is refused; a format without merge strategies takes a merge as an append).

>>> table_format(None).name, table_format("delta").capabilities.merge_strategies
('plain', ('upsert', 'delete-insert', 'insert-only', 'scd2', 'cdc'))
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from lakeload.errors import ConfigurationError

if TYPE_CHECKING:  # types only: extract asks for capabilities without loading the bucket's client
    from lakeload.destinations.impl.filesystem.client import FilesystemClient
    from lakeload.destinations.package_types import NormalizedPackage, PackageFile
    from lakeload.kernel.contracts import TLoadedFile
    from lakeload.kernel.filesystem.layout import Layout
    from lakeload.kernel.spark.working import WorkingStore
    from lakeload.schema.schema import Schema

PLAIN = "plain"  # the format of a table without a `table_format` hint


@dataclass(frozen=True)
class TableFormatCapabilities:
    """What a table format can do; printable.

    `merge_strategies` empty: the format cannot merge, and a merge table of it is appended to (dlt's fallback on
    a filesystem, with a warning). `merge_needs_key`: a merge needs a primary or merge key (refused at extract).
    `file_format`: normalize writes the format's tables in it, whatever `loader_file_format` says (Delta: parquet).
    """

    write_dispositions: tuple[str, ...] = ("append", "replace")
    merge_strategies: tuple[str, ...] = ()
    merge_needs_key: bool = False
    nested_tables: bool = True
    hard_deletes: bool = False
    file_format: str | None = None  # the file format its tables are normalized to; None: the package's
    row_level_merge: bool = False  # merges rows in place by key: merge rows get key ids, nested rows the root key
    partitions: bool = True  # takes `partition` column hints (refused at extract otherwise)

    def supports_merge(self, strategy: str) -> bool:
        """Whether a merge of `strategy` is done as a merge (False also for a format that appends merges).

        >>> TableFormatCapabilities(merge_strategies=("upsert",)).supports_merge("scd2")
        False
        """
        return strategy in self.merge_strategies


@dataclass
class FormatLoad:
    """A package's root tables of one format, their files, and what loading them needs."""

    spark: Any  # the pipeline's SparkSession (started)
    client: FilesystemClient
    layout: Layout
    pipeline_name: str
    working: WorkingStore | None  # the bucket the package's files are in (`[spark] working_url`), else None
    package_dir: str
    package: NormalizedPackage  # the normalized package's manifest (`package.json`), all formats
    schema: Schema
    root_tables: list[str]  # the package's root tables of this format, in package order
    files: list[PackageFile]  # the package's files of those trees (paths relative to `package_dir`)

    @property
    def load_id(self) -> str:
        return str(self.package["load_id"])

    def disposition(self, root_name: str) -> str:
        """The write disposition of a root table (`append` when it has none)."""
        return str(self.schema.tables.get(root_name, {}).get("write_disposition") or "append")

    def table_disposition(self, table_name: str) -> str:
        """The write disposition of any table: its own, else its nearest ancestor's (dlt's inherited hint)."""
        from lakeload.schema.schema import table_write_disposition

        return table_write_disposition(self.schema.tables, table_name)


@dataclass
class FormatResult:
    """What a format loaded: the `LoadResult` pieces it fills (`lakeload.destinations.reference.LoadResult`)."""

    files: list[TLoadedFile] = field(default_factory=list)  # the files written (load-result entries)
    replaced_tables: list[str] = field(default_factory=list)
    deleted_files: int = 0


@dataclass(frozen=True)
class TableRefresh:
    """What dropping or emptying a table for a package's `refresh` needs (`TableFormat.drop_table`, `truncate_table`)."""

    client: FilesystemClient
    layout: Layout
    schema_name: str
    pipeline_name: str
    load_id: str


class TableFormat(ABC):
    """A table format of the filesystem destination (see the module docstring)."""

    name: ClassVar[str]
    capabilities: ClassVar[TableFormatCapabilities]

    @abstractmethod
    def load(self, work: FormatLoad) -> FormatResult:
        """Load the package's trees of this format (called once per package, also for trees without rows: a
        replace with no rows empties its tables)."""

    def drop_table(self, refresh: TableRefresh, table_name: str) -> None:
        """Remove a table with its data (`refresh="drop_sources"` or `"drop_resources"`), before the package's files
        go in. By default the table's folder goes: a format that keeps each table in a folder of its own."""
        refresh.client.delete_folder(table_name)

    def truncate_table(self, refresh: TableRefresh, table_name: str, overwritten: bool) -> None:
        """Empty a table that stays in the schema (`refresh="drop_data"`), before the package's files go in;
        `overwritten`: the package replaces the table anyway. By default its files go, as `drop_table`: a format
        with a history (Delta, Iceberg) empties the table in a commit of the load instead, so that a rerun does not
        empty what the load wrote."""
        self.drop_table(refresh, table_name)

    def record_completion(self, client: FilesystemClient, schema: Schema, load_id: str) -> Callable[[], None] | None:
        """Called right before the load's `_dlt_loads` record, for every format `schema` has tables of: record
        what readers of the completed load need; the callable returned runs right after the record."""
        return None


TABLE_FORMATS: dict[str, TableFormat] = {}
DEFAULT_TABLE_FORMATS = {
    PLAIN: "lakeload.load.plain_format", "delta": "lakeload.delta.table_format", "iceberg": "lakeload.iceberg.table_format",
}


def register_table_format(table_format: TableFormat) -> None:
    """Make `table_format` load the tables whose `table_format` hint is its name."""
    TABLE_FORMATS[table_format.name] = table_format


def table_format_names() -> list[str]:
    """The names a `table_format` hint may take: every registered format and the built-in ones (not `plain`).

    >>> "delta" in table_format_names()
    True
    """
    return [name for name in dict.fromkeys([*DEFAULT_TABLE_FORMATS, *TABLE_FORMATS]) if name != PLAIN]


def table_format(name: str | None) -> TableFormat:
    """The registered format of that name (None: `plain`), its module imported first when it is a built-in one."""
    name = name or PLAIN
    if name not in TABLE_FORMATS and name in DEFAULT_TABLE_FORMATS:
        importlib.import_module(DEFAULT_TABLE_FORMATS[name])  # registers it
    if name not in TABLE_FORMATS:
        raise ConfigurationError(
            f"Unknown table_format {name!r}; the filesystem destination supports "
            f"{', '.join(repr(n) for n in table_format_names())}."
        )
    return TABLE_FORMATS[name]


def table_format_of_hint(name: str | None) -> TableFormat:
    """The format a `table_format` hint loads with: its registered format; `plain` for no hint and for a name no
    format is registered under (see `format_name`).

    >>> table_format_of_hint("hudi").name
    'plain'
    """
    return table_format(name if name in table_format_names() else PLAIN)


def format_name(schema: Schema, table_name: str) -> str:
    """The format of a table: its root table's `table_format` hint; `plain` without one, for a table not in the
    schema, and for a hint no format is registered under (extract refuses those; a schema made elsewhere keeps
    loading its files as they are, as lakeload did before it had formats).

    >>> from lakeload.schema.schema import Schema
    >>> schema = Schema("crm")
    >>> schema.update_table({"name": "users", "table_format": "delta", "columns": {}})
    >>> schema.update_table({"name": "users__pets", "parent": "users", "columns": {}})
    >>> format_name(schema, "users__pets"), format_name(schema, "deals")
    ('delta', 'plain')
    """
    if table_name not in schema.tables:
        return PLAIN
    name = schema.root_table_of(table_name).get("table_format")
    return name if name in table_format_names() else PLAIN

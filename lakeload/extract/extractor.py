"""Extract: iterate resources on the driver and stream their items into a new load package.

Items go to typed-JSONL files (one root table per file, rotated by size so Spark can split the work, and by dlt's
`file_max_items` of each resource's source: `writer_settings`)
in constant memory; Arrow tables and pandas frames go to Parquet files; a Spark DataFrame is written
by Spark itself (executors), never collected: the files are `writer.PackageWriter`'s.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import pendulum

import lakeload.kernel.spark.working as wio
from lakeload.config.data_writer import DataWriterSettings
from lakeload.errors import ExtractError, LakeloadError
from lakeload.extract.context import ExtractContext
from lakeload.extract.contracts import RootContracts
from lakeload.extract.external import ExternalFiles
from lakeload.extract.graph import evaluate, extracted
from lakeload.extract.hints import TableHints
from lakeload.extract.incremental.binding import mark_cursor
from lakeload.extract.mark import MarkedItem, MaterializedEmptyList
from lakeload.extract.resource import Resource
from lakeload.extract.table_schema import check_merge_strategy, table_schemas_from_hints
from lakeload.extract.writer import FILE_MAX_BYTES, PackageWriter
from lakeload.kernel.filesystem.safe_paths import check_schema_name, check_table_name
from lakeload.schema.naming import NamingConvention
from lakeload.schema.typing import TTable
from lakeload.spark.errors import is_spark_error, summarize
from lakeload.storage.packages import EXTRACTED, EXTRACTING, PipelineStorage, new_load_id, write_json_atomic


@dataclass
class ExtractResult:
    """What one extract produced: the package id and counts per root table."""

    load_id: str
    schema_name: str
    items: dict[str, int] = field(default_factory=dict)
    files: int = 0
    elapsed: float = 0.0
    source_options: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)  # bucket_url -> fsspec options
    resource_items: dict[str, int] = field(default_factory=dict)  # items per resource (dlt's resource metrics)
    resource_tables: dict[str, list[str]] = field(default_factory=dict)  # the root tables each resource wrote

    def count(self, table: str, resource: str, items: int) -> None:
        """`items` written to `table` by `resource`."""
        self.items[table] = self.items.get(table, 0) + items
        self.resource_items[resource] = self.resource_items.get(resource, 0) + items
        tables = self.resource_tables.setdefault(resource, [])
        if table not in tables:
            tables.append(table)


class SplitListener(Protocol):
    """Hears of complete extracted files while extract runs (see `lakeload.normalize.early`)."""

    def filling(self) -> None: ...  # a JSONL file holds `FILLING_BYTES`: normalize will have work

    def submit(self, load_id: str, index: int, split: dict[str, Any], tables: dict[str, TTable]) -> None: ...

    def wait(self) -> None: ...


def table_name(naming: NamingConvention, given: object) -> str:
    """The table name ``given`` (a hint, a callable's result or a resource name) normalized, and checked to stay
    one safe path segment (raises :class:`~lakeload.errors.InvalidNameError` otherwise).

    >>> from lakeload.schema.naming import get_naming
    >>> table_name(get_naming("snake_case"), "a/b")
    'a_b'
    """
    if not isinstance(given, str):
        return check_table_name(given)
    return _normalized_table_name(naming, given)


@functools.lru_cache(maxsize=4096)
def _normalized_table_name(naming: NamingConvention, given: str) -> str:
    """`table_name` of a string, remembered: extract asks it for every item, with a handful of names."""
    return check_table_name(naming.normalize_tables_path(given), given, naming.name)


def check_extract_names(
    resources: list[Resource], schema_name: str, naming: NamingConvention, given_table_name: str | None = None
) -> None:
    """Reject, before anything is extracted, a schema name or a fixed table name that would leave the bucket.

    `given_table_name` is `run(table_name=...)`: an empty one is refused (it would fall back to the resource's name).
    Table names that callables give per item are checked as they come, before their item is written.
    """
    check_schema_name(schema_name)
    if given_table_name is not None:
        table_name(naming, given_table_name)
    for res in resources:
        if not callable(res.hints.table_name):
            table_name(naming, res.hints.table_name if res.hints.table_name is not None else res.name)


def extract_resources(
    storage: PipelineStorage,
    resources: list[Resource],
    schema_name: str,
    naming: NamingConvention,
    progress: Callable[[int], None] | None = None,
    extra_manifest: dict[str, Any] | Callable[[], dict[str, Any]] | None = None,
    file_max_bytes: int = FILE_MAX_BYTES,
    context: ExtractContext | None = None,
    listener: SplitListener | None = None,
    known_tables: frozenset[str] = frozenset(),
    contracts: RootContracts | None = None,
    writer_settings: Callable[[Resource], DataWriterSettings] | None = None,
) -> ExtractResult:
    """Stream every selected resource into a new package and move it to `extracted`.

    Resources that take a context get `context` (see `lakeload.extract.context`). A callable
    `extra_manifest` is called once every resource was extracted, so it can carry the state they changed.
    A `listener` hears of every complete JSONL file while extract goes on (normalize can start on it),
    and is waited for before the package is complete. As in dlt, a table that got no items enters the package
    only when it is in the schema already (`known_tables`: a `replace` then empties it).
    `contracts` checks each root table when it first appears. `writer_settings` gives the file rotation of a
    resource's items (dlt's `[sources.<section>.data_writer]`); without it files rotate at `file_max_bytes` only.
    """
    started = time.perf_counter()
    load_id = new_load_id()
    package = storage.package_dir(EXTRACTING, load_id)
    os.makedirs(package, exist_ok=True)  # marks the package (and its bucket data) for recovery
    data_base = storage.data_base(EXTRACTING, load_id)
    tables: dict[str, TTable] = {}
    on_closed = None
    if listener is not None:
        def on_closed(index: int, split: dict[str, Any]) -> None:
            listener.submit(load_id, index, split, tables)
    writer = PackageWriter(wio.join(data_base, "data"), file_max_bytes, on_closed, storage.working)
    writer.on_filling = listener.filling if listener is not None else None
    result = ExtractResult(load_id=load_id, schema_name=schema_name)
    pending = 0
    written: set[str] = set()
    materialized: set[str] = set()  # tables kept without rows (`mark.materialize_table_schema()`)
    try:
        for res in resources:
            static = res.hints.table_name if not callable(res.hints.table_name) else None
            if static is not None or res.hints.table_name is None:
                name = table_name(naming, static if static is not None else res.name)
                if name not in tables:
                    _declare(tables, _table_schemas(name, res, res.hints, naming), replace=False)
                    _admit(contracts, name, tables[name])

        for res in extracted(resources):
            if context is not None and res.hints.write_disposition == "replace":  # as dlt: a replaced table's
                context.reset_resource_state(res.name)  # resource starts its state afresh

        def context_for(res: Resource) -> ExtractContext | None:
            return context.for_resource(res.name) if context else None

        settings_of = _settings_cache(writer_settings)
        for res, item in evaluate(resources, context_for):
            settings = settings_of(res)
            marked = item if isinstance(item, MarkedItem) else None
            item = marked.data if marked is not None else item
            items = item if isinstance(item, (list, tuple)) else (item,)
            if isinstance(item, MaterializedEmptyList):  # no rows, but its table is created (dlt's mark)
                _materialize(tables, materialized, res, marked, naming, contracts)
                continue
            # a page of records of one table is written at once (its first record names the table)
            page = marked is None and len(items) > 1 and not callable(res.table_name) and all(type(one) is dict for one in items)
            for one in items[:1] if page else items:
                given = marked.table_name if marked is not None and marked.table_name is not None else res.table_name_for(one)
                name = table_name(naming, given)
                if name not in tables or (marked is not None and marked.hints):
                    hints = _marked_hints(res, marked)
                    _declare(tables, _table_schemas(name, res, hints, naming), replace=True)
                    _admit(contracts, name, tables[name])
                if contracts is not None and name in contracts.skipped:
                    continue  # a `discard_row` contract on new tables: the items are dropped
                if name not in written:
                    check_merge_strategy(tables[name], context.merge_strategies if context is not None else None)
                count = writer.write_items(name, items, settings) if page else _write_one(writer, name, one, settings)
                result.count(name, res.name, count)
                written.add(name)
                pending += count
                if progress is not None and pending >= 10_000:
                    progress(pending)
                    pending = 0
    except LakeloadError:
        _abandon(writer, storage, load_id)
        raise
    except Exception as exc:
        _abandon(writer, storage, load_id)
        cause = f"Spark: {summarize(exc)}" if is_spark_error(exc) else f"{type(exc).__name__}: {exc}"
        raise ExtractError(f"Resource failed during extract: {cause}") from exc
    writer.close()
    _drop_unwritten(tables, written | materialized | known_tables)
    if progress is not None and pending:
        progress(pending)
    extra = extra_manifest() if callable(extra_manifest) else extra_manifest
    manifest = {
        "load_id": load_id,
        "schema_name": schema_name,
        "created_at": pendulum.now("UTC").isoformat(),
        "tables": tables,
        "splits": [s if "source" in s else {**s, "path": wio.relative(s["path"], data_base)} for s in writer.splits],
        "materialized": sorted(materialized - written),
        **(extra or {}),
        **(contracts.manifest() if contracts is not None else {}),
    }
    write_json_atomic(os.path.join(package, "manifest.json"), manifest)
    if listener is not None:
        listener.wait()  # its tasks read files of the package, which moves now
    storage.move(load_id, EXTRACTING, EXTRACTED)
    result.files = len(writer.splits)
    result.source_options = writer.source_options
    result.elapsed = time.perf_counter() - started
    return result


def _table_schemas(name: str, res: Resource, hints: TableHints, naming: NamingConvention) -> list[TTable]:
    """The tables a resource's hints declare; the cursor column of its incremental gets dlt's `incremental` hint."""
    declared = table_schemas_from_hints(name, res.name, hints, naming)
    declared[0] = mark_cursor(declared[0], res, naming)
    return declared


def _declare(tables: dict[str, TTable], declared: list[TTable], replace: bool) -> None:
    """Add a resource's tables (its own, then its nested ones) to the package's; `replace` overwrites them."""
    for table in declared:
        if replace or table["name"] not in tables:
            tables[table["name"]] = table


def _marked_hints(res: Resource, marked: MarkedItem | None) -> TableHints:
    """The hints of a (marked) item's table; marks without `create_table_variant` change the resource, as in dlt."""
    if marked is None:
        return res.hints
    if marked.create_table_variant:
        return res.with_hints(**marked.hints).hints
    res.apply_hints(**{k: v for k, v in marked.hints.items() if k != "table_name"})
    return res.with_hints(table_name=marked.table_name).hints if marked.table_name else res.hints


def _materialize(
    tables: dict[str, TTable], materialized: set[str], res: Resource, marked: MarkedItem | None,
    naming: NamingConvention, contracts: RootContracts | None,
) -> None:
    """Keep the table of `res` (or of the mark) in the package though it gets no rows; a table name that is a
    function of the item names no table here, as in dlt."""
    given = marked.table_name if marked is not None and marked.table_name is not None else res.table_name
    if callable(given):
        return
    name = table_name(naming, given)
    if name not in tables or (marked is not None and marked.hints):
        _declare(tables, _table_schemas(name, res, _marked_hints(res, marked), naming), replace=True)
        _admit(contracts, name, tables[name])
    materialized.add(name)


def _drop_unwritten(tables: dict[str, TTable], kept: set[str] | frozenset[str]) -> None:
    """Forget declared tables (and their nested tables) that got no items and are not in the schema yet."""
    for name in list(tables):
        root = name
        while tables.get(root, {}).get("parent"):
            root = tables[root]["parent"]
        if root not in kept and name not in kept:
            del tables[name]


def _admit(contracts: RootContracts | None, name: str, table: TTable) -> None:
    if contracts is not None:
        contracts.admit(name, table)


def _abandon(writer: PackageWriter, storage: PipelineStorage, load_id: str) -> None:
    writer.on_closed = writer.on_filling = None  # nothing more for normalize: the package goes
    writer.abort()
    storage.discard(EXTRACTING, load_id)


def _settings_cache(
    writer_settings: Callable[[Resource], DataWriterSettings] | None,
) -> Callable[[Resource], DataWriterSettings]:
    """`writer_settings` asked once per resource name (its answer depends on the resource's source only)."""
    known: dict[str, DataWriterSettings] = {}

    def settings_of(res: Resource) -> DataWriterSettings:
        if res.name not in known:
            known[res.name] = writer_settings(res) if writer_settings is not None else DataWriterSettings()
        return known[res.name]

    return settings_of


def _write_one(writer: PackageWriter, table: str, item: Any, settings: DataWriterSettings) -> int:
    if isinstance(item, ExternalFiles):
        writer.write_external(table, item, settings)
        return 0
    module = type(item).__module__
    if module.startswith("pyspark"):
        writer.write_spark(table, item)
        return 0
    if module.startswith(("pyarrow", "pandas")):
        return writer.write_arrow(table, item)
    writer.write_item(table, item, settings)
    return 1

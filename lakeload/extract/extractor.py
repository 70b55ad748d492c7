"""Extract: iterate resources on the driver and stream their items into a new load package.

Items go to typed-JSONL files (one root table per file, rotated by size so Spark can split the work)
in constant memory; Arrow tables and pandas frames go to Parquet files; a Spark DataFrame is written
by Spark itself (executors), never collected.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol, TypeVar

import pendulum

import lakeload.kernel.spark.working as wio
from lakeload.errors import ExtractError, LakeloadError
from lakeload.extract.context import ExtractContext
from lakeload.extract.contracts import RootContracts
from lakeload.extract.external import ExternalFiles, split_entries
from lakeload.extract.graph import evaluate, extracted
from lakeload.extract.hints import TableHints
from lakeload.extract.incremental.binding import mark_cursor
from lakeload.extract.mark import MarkedItem, MaterializedEmptyList
from lakeload.extract.resource import Resource
from lakeload.extract.spark_parts import write_frame_parts
from lakeload.extract.table_schema import check_merge_strategy, table_schemas_from_hints
from lakeload.kernel.filesystem.safe_paths import check_schema_name, check_table_name
from lakeload.kernel.spark.working import WorkingStore
from lakeload.schema import typed_json
from lakeload.schema.naming import NamingConvention
from lakeload.schema.typing import TTable
from lakeload.spark.errors import is_spark_error, summarize
from lakeload.spark.local_paths import local_uri
from lakeload.storage.packages import EXTRACTED, EXTRACTING, PipelineStorage, new_load_id, write_json_atomic

FILE_MAX_BYTES = 64 * 1024 * 1024
BUFFER_BYTES = 4 * 1024 * 1024
FILLING_BYTES = 1024 * 1024  # written to a JSONL file: the listener hears that normalize will have work
_T = TypeVar("_T")


@dataclass
class _JsonlFile:
    path: str
    handle: IO[bytes]
    local: str = ""  # the executor-local file uploaded to `path` when it is a bucket URL
    items: int = 0
    bytes: int = 0
    may_have_tags: bool = False


@dataclass
class ExtractResult:
    """What one extract produced: the package id and counts per root table."""

    load_id: str
    schema_name: str
    items: dict[str, int] = field(default_factory=dict)
    files: int = 0
    elapsed: float = 0.0
    source_options: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)  # bucket_url -> fsspec options


class PackageWriter:
    """Writes the items of one package, rotating files per root table."""

    def __init__(
        self, data_dir: str, file_max_bytes: int = FILE_MAX_BYTES, on_closed: Callable[[int, dict[str, Any]], None] | None = None,
        working: WorkingStore | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.working = working  # the bucket of `data_dir` when it is a URL (`[spark] working_url`)
        self.file_max_bytes = file_max_bytes
        self.on_closed = on_closed  # hears of every complete JSONL file (split index, split entry)
        self.on_filling: Callable[[], None] | None = None  # hears once that `FILLING_BYTES` were written
        self.splits: list[dict[str, Any]] = []
        self.source_options: dict[str, dict[str, Any]] = {}  # of external files' buckets; never in the manifest
        self._open: dict[str, _JsonlFile] = {}
        wio.make_dirs(data_dir)

    def _new_path(self, table: str, ext: str) -> str:
        return wio.join(self.data_dir, f"{len(self.splits):06d}.{table}.{ext}")

    def _new_jsonl(self, path: str) -> _JsonlFile:
        local = wio.local_temp(path) if wio.is_remote(path) else ""
        return _JsonlFile(path, open(local or path, "wb", buffering=BUFFER_BYTES), local)  # noqa: SIM115

    def _current(self, table: str) -> _JsonlFile:
        current = self._open.get(table)
        if current is None:
            path = self._new_path(table, "jsonl")
            current = self._open[table] = self._new_jsonl(path)
            self.splits.append({"path": path, "root_table": table, "file_format": "jsonl"})
        return current

    def write_item(self, table: str, item: Any) -> None:
        """Write one item as a JSON line of the table's open file."""
        line, tagged = self._serialized(table, typed_json.dumps_tracked, item)
        self._write_lines(table, line + b"\n", [len(line) + 1], tagged)

    def write_items(self, table: str, items: Sequence[Any]) -> int:
        """Write `items` (one page of a resource) as JSON lines of the table's open file, rotated at `file_max_bytes`."""
        block, ends, tagged = self._serialized(table, typed_json.dumps_page, items)
        self._write_lines(table, block, ends, tagged)
        return len(items)

    @staticmethod
    def _serialized(table: str, dumps: Callable[[Any], _T], value: Any) -> _T:
        try:
            return dumps(value)
        except ExtractError as exc:
            raise ExtractError(f"Table '{table}': {exc}") from exc
        except Exception as exc:
            raise ExtractError(f"Item for table '{table}' cannot be serialized: {exc}") from exc

    def _write_lines(self, table: str, block: bytes, ends: list[int], tagged: bool) -> None:
        """Write lines (`block`; line i ends at `ends[i]`), closing a file after the line that makes it reach
        `file_max_bytes` (the next line starts a new file)."""
        done = 0  # lines written so far
        while done < len(ends):
            current = self._current(table)
            offset = ends[done - 1] if done else 0
            last = bisect_left(ends, offset + self.file_max_bytes - current.bytes, lo=done)
            upto = min(last + 1, len(ends))
            current.handle.write(memoryview(block)[offset : ends[upto - 1]])
            current.bytes += ends[upto - 1] - offset
            current.items += upto - done
            current.may_have_tags |= tagged
            done = upto
            filling = self.on_filling
            if filling is not None and current.bytes >= FILLING_BYTES:
                self.on_filling = None  # once
                filling()
            if current.bytes >= self.file_max_bytes:
                self._close(table)

    def write_arrow(self, table: str, data: Any) -> int:
        """Arrow tables/batches and pandas frames are stored as Parquet as they are (normalize keeps their schema)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not isinstance(data, (pa.Table, pa.RecordBatch)):
            data = pa.Table.from_pandas(data, preserve_index=False)
        path = self._new_path(table, "parquet")
        with wio.local_target(path, self.working) as local:
            # list fields keep their Arrow names (`item`): normalize reads the item's own schema back
            pq.write_table(pa.table(data) if isinstance(data, pa.RecordBatch) else data, local, use_compliant_nested_type=False)
        self.splits.append({"path": path, "root_table": table, "file_format": "parquet"})
        return data.num_rows

    def write_spark(self, table: str, frame: Any) -> None:
        """A Spark DataFrame is written by its executors as Parquet (its types kept): one split, normalized by Spark."""
        folder = self._new_path(table, "spark")
        if wio.is_remote(folder):
            write_frame_parts(frame, folder, self.working)
        else:
            frame.write.mode("overwrite").parquet(local_uri(folder))
        self.splits.append({"path": folder, "root_table": table, "file_format": "frame"})

    def write_external(self, table: str, external: ExternalFiles) -> None:
        """Files read in place by normalize: registered as splits (byte ranges of big plain files), not read here."""
        self.source_options[external.bucket_url] = external.options
        self.splits.extend(split_entries(external, table, self.file_max_bytes))

    def _close(self, table: str) -> None:
        current = self._open.pop(table)
        current.handle.close()
        if current.local:
            wio.upload(current.local, current.path, self.working)
            os.remove(current.local)
        for index, split in enumerate(self.splits):
            if split["path"] == current.path:
                split.update(items=current.items, may_have_tags=current.may_have_tags)
                if self.on_closed is not None:
                    self.on_closed(index, dict(split))

    def close(self) -> None:
        for table in list(self._open):
            self._close(table)

    def abort(self) -> None:
        """Close open files without publishing them (the package is discarded)."""
        for current in self._open.values():
            current.handle.close()
            if current.local:
                os.remove(current.local)
        self._open.clear()


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
) -> ExtractResult:
    """Stream every selected resource into a new package and move it to `extracted`.

    Resources that take a context get `context` (see `lakeload.extract.context`). A callable
    `extra_manifest` is called once every resource was extracted, so it can carry the state they changed.
    A `listener` hears of every complete JSONL file while extract goes on (normalize can start on it),
    and is waited for before the package is complete. As in dlt, a table that got no items enters the package
    only when it is in the schema already (`known_tables`: a `replace` then empties it).
    `contracts` checks each root table when it first appears.
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

        for res, item in evaluate(resources, context_for):
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
                    check_merge_strategy(tables[name])
                count = writer.write_items(name, items) if page else _write_one(writer, name, one)
                result.items[name] = result.items.get(name, 0) + count
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


def _write_one(writer: PackageWriter, table: str, item: Any) -> int:
    if isinstance(item, ExternalFiles):
        writer.write_external(table, item)
        return 0
    module = type(item).__module__
    if module.startswith("pyspark"):
        writer.write_spark(table, item)
        return 0
    if module.startswith(("pyarrow", "pandas")):
        return writer.write_arrow(table, item)
    writer.write_item(table, item)
    return 1

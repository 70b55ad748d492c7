"""Executor-safe: a vectorized (pyarrow) normalize of one plain JSONL split, exactly like the Python path.

`normalize_arrow` gives the same report and the same rows per table, in the same order, as
`kernel.normalize.tasks.normalize_split` (root `_dlt_id`s are random in both; child ids come from them through
`nested_row_id`), or None when it cannot be sure, and the caller runs the Python path instead:

1. The split's bytes are parsed by pyarrow's JSON reader in one block (`kernel.normalize.arrow_read`). A field's
   rare string or boolean values among numbers (or the like) are read under a renamed key, beside the
   usual ones (`kernel.normalize.arrow_alias`). Records pyarrow cannot read alike otherwise (other type changes,
   null list elements, ...) are left to the Python normalizer ("Python records").
2. Structs are flattened into `a__b` columns and lists exploded into child tables, column by column
   (`kernel.normalize.arrow_flatten`).
3. The schema is dlt's sequential inference: the Python path is replayed over the records where a
   table, a column or a variant appears first, plus the Python records (`kernel.normalize.arrow_replay`); then
   every column is converted into its dlt column (`kernel.normalize.arrow_convert`). A value that needs a
   column the replay did not make adds its record to the replay, until nothing is missing.
4. Rows get dlt's `_dlt_*` columns; the Python records' rows are merged in by record number; jsonl
   output is written as final files, parquet/csv as Arrow IPC chunks for `finalize_split`.

Set `LAKELOAD_ARROW_NORMALIZE=0` to always take the Python path (for A/B measurements).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import orjson
import pyarrow as pa

import lakeload.kernel.spark.working as wio
from lakeload.kernel.contracts import TPackageFile, TRow
from lakeload.kernel.filesystem.safe_paths import check_table_name
from lakeload.kernel.normalize.arrow_convert import Converter, key_ids
from lakeload.kernel.normalize.arrow_flatten import Flattener, Part, Tree, Unsupported, first_valid
from lakeload.kernel.normalize.arrow_jsonl import TYPES as JSONL_TYPES
from lakeload.kernel.normalize.arrow_jsonl import render_lines
from lakeload.kernel.normalize.arrow_lines import LineIndex
from lakeload.kernel.normalize.arrow_read import parse_records, scan_nulls
from lakeload.kernel.normalize.arrow_replay import Replay, replay, resolve_nulls
from lakeload.kernel.normalize.relational import (
    C_DLT_ID,
    C_DLT_LIST_IDX,
    C_DLT_LOAD_ID,
    C_DLT_PARENT_ID,
    C_DLT_ROOT_ID,
    C_OCCURRENCE,
    RootTableSettings,
)
from lakeload.kernel.normalize.report import SplitReport, split_report
from lakeload.kernel.normalize.row_ids import nested_ids, random_ids
from lakeload.kernel.normalize.writers import (
    TableFileWriter,
    arrow_schema,
    complete_columns,
    of_split,
    rows_to_arrow,
    schema_signature,
    write_ipc,
)
from lakeload.schema.datatypes import JSONL_OPTIONS, jsonl_default
from lakeload.schema.typing import TTable

if TYPE_CHECKING:
    from lakeload.kernel.normalize.plan import NormalizePlan, Split

logger = logging.getLogger("lakeload.normalize")
SWITCH = "LAKELOAD_ARROW_NORMALIZE"
MAX_PYTHON_SHARE = 0.2  # more Python records than that: the Python path is as fast
MAX_ROUNDS = 16
FILE_NAME = "_file_name"
Writer = Callable[[str, dict[str, TTable]], TableFileWriter]  # (table, tables) -> the writer of a final file


def enabled() -> bool:
    """The fast path is on unless `LAKELOAD_ARROW_NORMALIZE=0`."""
    return os.environ.get(SWITCH, "1").strip() != "0"


def plain_json(split: Split) -> bool:
    """Plain JSON lines (no typed-JSON tags): the splits the Arrow path is for (when `enabled()`)."""
    return split.file_format == "jsonl" and not split.may_have_tags


def normalize_arrow(
    plan: NormalizePlan, split: Split, data: bytes | bytearray, occurrence_base: int, file_name: str | None,
    new_writer: Writer,
) -> SplitReport | str:
    """The report of `normalize_split` for `split` whose bytes are `data`, or why the row path (Python, record by
    record) takes the split instead: the driver counts and logs those reasons (`row_path` of the report).

    A `bytearray` is changed in place (records left to Python are blanked); `bytes` are copied first if needed.
    """
    try:
        report = _Run(plan, split, data, occurrence_base, file_name).run(new_writer)
    except Unsupported as exc:
        return str(exc)
    except Exception as exc:  # anything unexpected: the Python path decides (and raises what it raises)
        logger.debug("split %s takes the Python path after an error", split.index, exc_info=True)
        return f"the Arrow path failed: {type(exc).__name__}: {str(exc)[:200]}"
    return report


class _Run:
    def __init__(
        self, plan: NormalizePlan, split: Split, data: bytes | bytearray, occurrence_base: int, file_name: str | None
    ) -> None:
        self.plan = plan
        self.split = split
        self.lines = LineIndex.build(data)
        self.base = occurrence_base
        self.file_name = file_name
        self.root = plan.normalizer.roots.get(split.root_table, RootTableSettings())
        self.replayed: set[int] = set()

    def run(self, new_writer: Writer) -> SplitReport:
        plan, lines = self.plan, self.lines
        if not len(lines):
            raise Unsupported("no records")
        if self.root.row_id == "row_hash":  # scd2: the hash of each whole record, as parsed by the Python path
            raise Unsupported("scd2 row hashes")
        scan = scan_nulls(lines)
        checked = self.split.source is None  # a package file: extract wrote it with orjson
        parsed = parse_records(lines, scan.list_nulls | set(lines.odd), int(len(lines) * MAX_PYTHON_SHARE), checked)
        if parsed is None:
            raise Unsupported(f"pyarrow could not parse over {MAX_PYTHON_SHARE:.0%} of the records")
        python = parsed.python
        extra = {FILE_NAME: pa.repeat(self.file_name, len(parsed.recs))} if self.file_name is not None else {}
        tree = Flattener(plan.naming, plan.normalizer.json_columns, parsed.aliases).flatten(
            self.split.root_table, parsed.table, parsed.recs, extra
        )
        if self.root.max_nesting <= tree.depth + 1:
            raise Unsupported("nesting limit")
        done, converted = self._infer(tree, python)
        null_only = resolve_nulls(plan.tables, tree, done, scan, lines, self.replayed)
        for table, columns in done.coercer.null_only.items():
            null_only.setdefault(table, set()).update(columns)
        row_counts = {}
        for table in done.coercer.row_counts:  # every table's first row was replayed: dlt's order
            part = tree.parts.get(table)
            row_counts[table] = (part.rows if part is not None else 0) + len(done.rows.get(table, ()))
        files = self._write(tree, done, converted, new_writer)
        coercer = done.coercer
        touched = set(coercer.added) | set(coercer.new_tables) | set(row_counts)
        return split_report(
            self.split.index, new_tables=coercer.new_tables, added=coercer.added,
            tables={name: done.tables[name] for name in touched}, row_counts=row_counts,
            null_only={t: sorted(c) for t, c in null_only.items()}, collisions=done.collisions, files=files,
        )

    def _infer(self, tree: Tree, python: set[int]) -> tuple[Replay, dict[str, dict[str, pa.Array]]]:
        """Replay until every column the converted values need was made by the replay, in place."""
        records = set(python)
        for part in tree.parts.values():
            if part.rows:
                records.add(int(part.rec[0]))
                for values in (*part.columns.values(), *part.alternates.values()):
                    first = first_valid(values)
                    if first is not None:
                        records.add(int(part.rec[first]))
        plan = self.plan
        for _ in range(MAX_ROUNDS):
            done = replay(plan, self.split, self.lines, sorted(records), python, self.base, self.file_name)
            converter = Converter(done.tables, plan.naming, plan.detections, plan.default_hints)
            converted = {name: converter.convert(part) for name, part in tree.parts.items() if part.rows}
            needs = set(converter.needs)
            for name, columns in converted.items():
                rec = tree.parts[name].rec
                for column, values in columns.items():
                    first = first_valid(values)
                    if first is not None and self._created(done, name, column) > int(rec[first]):
                        needs.add(int(rec[first]))
            if not needs:
                self._check_columns(done, converted)
                self.replayed = records
                return done, converted
            if needs <= records:
                raise Unsupported("replay does not converge")
            records |= needs
        raise Unsupported("replay does not converge")

    def _created(self, done: Replay, table: str, column: str) -> int:
        stored = self.plan.tables.get(table, {}).get("columns", {}).get(column)
        if stored is not None and stored.get("data_type"):
            return -1
        return done.created.get((table, column), 1 << 62)

    def _check_columns(self, done: Replay, converted: dict[str, dict[str, pa.Array]]) -> None:
        """Columns getting values whose Arrow type or jsonl rendering the fast path does not reproduce."""
        jsonl = self.plan.format_for(self.split.root_table) == "jsonl"
        for name in done.coercer.row_counts:
            columns = done.tables[name]["columns"]
            filled = set(converted.get(name, ())).union(*(row for _, row in done.rows.get(name, ())))
            for column in (columns[c] for c in filled if c in columns):
                data_type = column.get("data_type")
                sized = data_type in ("bigint", "timestamp", "time") and column.get("precision") is not None
                if sized or column.get("timezone") is False:
                    raise Unsupported(f"column '{column['name']}' has a precision or timezone hint")
                if jsonl and data_type not in JSONL_TYPES:
                    raise Unsupported(f"{data_type} columns in jsonl files")

    # -- rows ----------------------------------------------------------------------------------------
    def _system(self, tree: Tree) -> dict[str, dict[str, pa.Array]]:
        """The `_dlt_*` columns of the Arrow rows of every part."""
        root = self.root
        out: dict[str, dict[str, pa.Array]] = {}
        ids: dict[str, pa.Array] = {}
        root_part = tree.parts[self.split.root_table]
        for name, part in tree.parts.items():
            if not part.rows:
                continue
            columns: dict[str, pa.Array] = {}
            if part.parent is None:
                if root.row_id == "key_hash" and root.primary_key:
                    ids[name] = key_ids(part, root.primary_key)
                else:
                    ids[name] = random_ids(part.rows)
                columns[C_DLT_LOAD_ID] = pa.repeat(self.plan.load_id, part.rows)
            else:
                assert part.parent_row is not None and part.list_idx is not None
                parent_ids = ids[part.parent.name].take(pa.array(part.parent_row))
                ids[name] = nested_ids(parent_ids, name, part.list_idx)
                if root.propagate_root_key:
                    columns[C_DLT_ROOT_ID] = ids[root_part.name].take(pa.array(np.searchsorted(root_part.rec, part.rec)))
                columns[C_DLT_PARENT_ID] = parent_ids
                columns[C_DLT_LIST_IDX] = pa.array(part.list_idx, pa.int64())
            columns[C_DLT_ID] = ids[name]
            if root.occurrence:
                columns[C_OCCURRENCE] = pa.array(part.rec + self.base, pa.int64())
            out[name] = columns
        return out

    def _table(
        self, part: Part | None, columns: dict[str, pa.Array], python: list[tuple[int, TRow]], table: TTable
    ) -> pa.Table:
        """The rows of one table in dlt's order: the Arrow rows of `part` and the Python records' rows."""
        complete = complete_columns(table)
        schema = arrow_schema(complete)
        pieces: list[pa.Table] = []
        recs: list[np.ndarray] = []
        if part is not None:
            unknown = set(columns) - set(schema.names)
            if unknown:
                raise Unsupported(f"columns {sorted(unknown)} are not in the schema")
            arrays = []
            for f in schema:
                values = columns.get(f.name)
                if values is None:
                    values = pa.nulls(part.rows, f.type)
                elif values.type != f.type:
                    values = values.cast(f.type)
                arrays.append(values)
            pieces.append(pa.Table.from_arrays(arrays, schema=schema))
            recs.append(part.rec)
        if python:
            pieces.append(rows_to_arrow([row for _, row in python], complete, schema))
            recs.append(np.array([rec for rec, _ in python], np.int64))
        if len(pieces) == 1:
            return pieces[0]
        merged = pa.concat_tables(pieces)
        return merged.take(pa.array(np.argsort(np.concatenate(recs), kind="stable")))

    def _write(
        self, tree: Tree, done: Replay, converted: dict[str, dict[str, pa.Array]], new_writer: Writer
    ) -> list[TPackageFile]:
        system = self._system(tree)
        staged = self.plan.format_for(self.split.root_table) != "jsonl"
        files: list[TPackageFile] = []
        try:
            for name in done.coercer.row_counts:
                part = tree.parts.get(name) if name in converted else None
                columns = {**converted.get(name, {}), **system.get(name, {})}
                python = done.rows.get(name, [])
                if staged:
                    data = self._table(part, columns, python, done.tables[name])
                    files.extend(self._staged(name, data, done.tables, new_writer))
                else:
                    files.extend(self._jsonl(name, part, columns, python, done, new_writer))
        except BaseException:
            for meta in files:
                wio.remove(meta["path"])
            raise
        return files

    def _staged(self, name: str, data: pa.Table, tables: dict[str, TTable], new_writer: Writer) -> list[TPackageFile]:
        """The rows of one table for the driver's fold: draft Parquet files, or an Arrow IPC chunk (csv).

        A draft is a final file in the split's own columns; the driver keeps it when those are the table's
        final columns and types (their order may differ, as in dlt's files from parallel workers), else
        `finalize_split` rewrites it like a chunk.
        """
        split = self.split.index
        if self.plan.format_for(self.split.root_table) == "parquet":
            writer = new_writer(name, tables)
            try:
                writer.write_arrow(data)
                written = writer.close()
            except BaseException:
                writer.abort()
                raise
            return [{**meta, "split": split, "draft": schema_signature(data.schema)} for meta in written]
        stem = wio.join(self.plan.output_dir, f"_chunks.{split:06d}.{check_table_name(name)}")
        path = f"{stem}.0000.arrow"  # named and laid out like `ArrowChunkWriter`'s
        write_ipc(path, data)
        return [TPackageFile(table=name, path=path, rows=data.num_rows, chunk=True, split=split)]

    def _jsonl(
        self, name: str, part: Part | None, columns: dict[str, pa.Array], python: list[tuple[int, TRow]],
        done: Replay, new_writer: Writer,
    ) -> list[TPackageFile]:
        """One final jsonl file: Arrow rows rendered by Arrow, the Python records' rows by orjson, in order."""
        pieces: list[pa.Array] = []
        recs: list[np.ndarray] = []
        if part is not None:
            data = self._table(part, columns, [], done.tables[name])
            types = {n: c["data_type"] for n, c in complete_columns(done.tables[name]).items()}
            pieces.append(render_lines(data, types))
            recs.append(part.rec)
        if python:
            dumps = orjson.dumps
            lines = [dumps(row, default=jsonl_default, option=JSONL_OPTIONS) + b"\n" for _, row in python]
            pieces.append(pa.array(lines, pa.binary()).cast(pa.string()))
            recs.append(np.array([rec for rec, _ in python], np.int64))
        lines = pieces[0] if len(pieces) == 1 else pa.concat_arrays(pieces).take(pa.array(np.argsort(np.concatenate(recs), kind="stable")))
        _, offsets, payload = lines.buffers()
        bounds = np.frombuffer(offsets, np.int32)[lines.offset : lines.offset + len(lines) + 1]
        writer = new_writer(name, done.tables)
        try:
            writer.write_lines(payload[int(bounds[0]) : int(bounds[-1])].to_pybytes(), len(lines))
            return of_split(writer.close(), self.split.index)
        except BaseException:
            writer.abort()
            raise

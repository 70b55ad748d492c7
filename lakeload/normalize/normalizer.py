"""Normalize (driver side): plan the Spark jobs for one package and keep the schema.

The package's extracted files are the splits. Spark jobs run over them:

1. **normalize**: every split is parsed once; it runs dlt's sequential inference from the stored
   schema, writes its rows (jsonl: final files; parquet/csv: Arrow chunks) and returns only its
   schema additions, in order. The driver folds them in split order, which is the order a single
   sequential normalizer would have seen the records, so column order and first-seen types are
   exactly dlt's.
2. A split whose local guess disagrees with a type fixed by an earlier split (rare: its first value
   of a column had another type) is inferred again seeded with the folded schema, and rewritten from
   its source in step 3, so variant columns come out as a sequential run makes them.
3. **finalize**: Arrow chunks become parquet/csv files with the final table schema (Arrow only).

No table row reaches the driver.
"""

from __future__ import annotations

import copy
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import lakeload.kernel.spark.working as wio
from lakeload.destinations.impl.filesystem.table_format import table_format_of_hint
from lakeload.errors import NormalizeError
from lakeload.kernel.contracts import TPackageFile
from lakeload.kernel.normalize.contract import ContractSettings
from lakeload.kernel.normalize.plan import NormalizePlan, Split
from lakeload.kernel.normalize.relational import C_DLT_ID, C_OCCURRENCE, NormalizerSettings, RootTableSettings
from lakeload.kernel.normalize.report import SplitReport
from lakeload.kernel.normalize.tasks import FinalizeJob, finalize_split
from lakeload.kernel.normalize.writers import NO_LIMITS, FileLimits
from lakeload.normalize.fold import conflicts, contract_conflicts, fold, raise_violation, settle_drafts
from lakeload.normalize.kinds import ExecutorSplits, FrameSplits, SplitKind
from lakeload.normalize.materialize import write_materialized
from lakeload.normalize.source_splits import OptionsFor, plan_splits
from lakeload.schema.contract import any_contract
from lakeload.schema.naming import NamingConvention
from lakeload.schema.scd2 import is_scd2, row_version_column
from lakeload.schema.schema import (
    Schema,
    columns_with_hint,
    drop_replaced_compound_hints,
    record_root_key,
    requires_root_key,
    schema_max_nesting,
)
from lakeload.schema.schema_update import schema_update
from lakeload.schema.typing import TStoredSchema, TTable
from lakeload.spark.session import run_tasks
from lakeload.storage.manifest import NormalizedPackage
from lakeload.storage.packages import (
    EXTRACTED,
    NORMALIZED,
    NORMALIZING,
    PipelineStorage,
    write_json_atomic,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = logging.getLogger("lakeload.normalize")


@dataclass
class NormalizeResult:
    """What normalize made of one package."""

    load_id: str
    schema_name: str
    row_counts: dict[str, int] = field(default_factory=dict)
    files: int = 0
    schema_version: int = 0
    elapsed: float = 0.0
    schema_update: dict[str, TTable] = field(default_factory=dict)  # dlt's: the tables/columns it changed
    row_path_splits: dict[str, int] = field(default_factory=dict)  # why plain JSON splits left the Arrow path: count


def _apply_table_hints(schema: Schema, tables: dict[str, TTable]) -> None:
    for table in tables.values():
        existing = schema.tables.get(table["name"])
        if existing is None:
            schema.update_table(copy.deepcopy(table))
            continue
        drop_replaced_compound_hints(existing, table)  # a new key or partition replaces the stored one, as in dlt
        partial = cast(TTable, {k: v for k, v in table.items() if k != "columns"})
        partial["columns"] = {}
        for name, col in table.get("columns", {}).items():
            known = existing["columns"].get(name, {})
            # hints (partition, keys, hard_delete, ...) follow the resource; a known data type stays
            partial["columns"][name] = {**known, **col, "data_type": known["data_type"]} if known.get("data_type") else col
        schema.update_table(copy.deepcopy(partial))


def _root_settings(schema: Schema, tables: dict[str, TTable], max_nesting: int | None,
                   destination_merges: bool = False) -> dict[str, RootTableSettings]:
    """Each root table's settings; its nesting limit is its own, else the destination's (`max_nesting`, a sink's),
    else the source's (`schema_max_nesting`), dlt's order. A merge table of a table format that merges rows, or of
    a destination that merges them itself (`destination_merges`, a database), gets dlt's ids: a key hash as row id
    (on a database, for the strategies dlt gives one: upsert, insert-only, cdc) and `_dlt_root_id` in its nested
    tables (`requires_root_key`)."""
    roots = {}
    default_nesting = schema_max_nesting(schema) if max_nesting is None else max_nesting
    for name in tables:
        table = schema.tables[name]
        pk = tuple(columns_with_hint(table, "primary_key"))
        is_merge = table.get("write_disposition") == "merge"
        format_merges = table_format_of_hint(table.get("table_format")).capabilities.row_level_merge
        row_level = format_merges or destination_merges
        row_merge = is_merge and row_level
        keyed = format_merges or table.get("x-merge-strategy", "upsert") in KEY_HASH_STRATEGIES
        upsert = row_merge and bool(pk) and keyed
        nesting = table.get("x-normalizer", {}).get("max_nesting", default_nesting)
        propagate = requires_root_key(schema, table, row_level)
        if propagate:
            record_root_key(schema, name)
        row_id = "key_hash" if upsert else "random"
        if row_merge and is_scd2(table):  # dlt's scd2 ids: the hash of the record's data, unless a column versions it
            row_id = "row_hash" if row_version_column(table) == C_DLT_ID else "random"
        roots[name] = RootTableSettings(
            row_id=row_id, primary_key=pk, max_nesting=nesting,
            propagate_root_key=propagate,
            occurrence=is_merge and format_merges,  # (a table format's merge orders a package's rows by it)
        )
    return roots


def _without_occurrence(tables: dict[str, TTable]) -> dict[str, TTable]:
    """The tables without the package-only occurrence column of Delta merge tables."""
    for table in tables.values():
        table["columns"].pop(C_OCCURRENCE, None)
    return tables


TABLE_FILE_FORMATS = frozenset({"jsonl", "parquet", "csv"})
KEY_HASH_STRATEGIES = frozenset({"upsert", "insert-only", "cdc"})  # dlt's key-hash row ids on a database


def _root_formats(schema: Schema, tables: dict[str, TTable], file_format: str) -> dict[str, str]:
    """A table format that fixes its tables' file format (`TableFormatCapabilities.file_format`; Delta: parquet)
    has it whatever the package's file format; a table whose schema names a file format (`file_format`, where
    `run(loader_file_format=...)` leaves it) keeps it in later loads, as in dlt."""
    by_format: dict[tuple[str, str], list[str]] = {}  # (table format, its file format): tables
    for name in tables:
        table_format = table_format_of_hint(schema.tables[name].get("table_format"))
        if table_format.capabilities.file_format:
            by_format.setdefault((table_format.name, table_format.capabilities.file_format), []).append(name)
    for (format_name, fixed_format), names in by_format.items():
        if fixed_format != file_format:
            logger.info("%s tables %s are written as %s; loader_file_format=%r applies to the others.",
                        format_name.capitalize(), names, fixed_format, file_format)
    fixed = {name: fixed_format for (_, fixed_format), names in by_format.items() for name in names}
    formats = {name: schema.tables[name].get("file_format") for name in tables if name not in fixed}
    return {**{name: fmt for name, fmt in formats.items() if fmt in TABLE_FILE_FORMATS}, **fixed}


def arrow_item_formats(plan: NormalizePlan) -> dict[str, str]:
    """Parquet for the root tables that got Arrow items (their extracted files are Parquet), as dlt's default for
    Arrow tables and pandas frames; an explicit `loader_file_format` or a table's `file_format` hint wins."""
    return {split.root_table: "parquet" for split in plan.splits if split.file_format == "parquet"}


def _json_columns(schema: Schema) -> dict[str, frozenset[str]]:
    found = {}
    for name, table in schema.tables.items():
        cols = frozenset(c for c, col in table["columns"].items() if col.get("data_type") == "json")
        if cols:
            found[name] = cols
    return found


def _clean_evolve_once(tables: dict[str, TTable]) -> None:
    """A table's first normalize may add any column (`evolve-columns-once`); later ones follow its contract."""
    for table in tables.values():
        marks = table.get("x-normalizer")
        if marks and marks.pop("evolve-columns-once", None) and not marks:
            del table["x-normalizer"]


EarlyResults = dict[int, tuple[str, SplitReport]]  # split index -> (file name, pass-1 result)


def _matching(splits: list[Split], early: EarlyResults) -> dict[int, SplitReport]:
    """The early results that belong to these splits (same index and file), by split index."""
    names = {split.index: os.path.basename(split.path) for split in splits}
    return {index: result for index, (name, result) in early.items() if names.get(index) == name}


class Normalizer:
    """Runs the normalize step of packages on Spark."""

    def __init__(
        self,
        spark: SparkSession,
        storage: PipelineStorage,
        naming: NamingConvention,
        file_format: str = "jsonl",
        compressed: bool = True,
        max_nesting: int | None = None,
        on_progress: Callable[[int], None] | None = None,
        source_options: OptionsFor | None = None,
        destination_merges: bool = False,
        file_limits: FileLimits = NO_LIMITS,
    ) -> None:
        self.spark = spark
        self.file_limits = file_limits  # when a final file is full (`[normalize.data_writer]`)
        self.source_options = source_options  # bucket_url -> fsspec options, for files sources read in place
        self.storage = storage
        self.naming = naming
        self.file_format = file_format
        self.compressed = compressed
        self.max_nesting = max_nesting
        self.destination_merges = destination_merges  # a database merging rows itself (`merges_in_place`)
        self.on_progress = on_progress

    def normalize(self, load_id: str, schema: Schema, early: EarlyResults | None = None) -> NormalizeResult:
        """Normalize the extracted package `load_id`; `schema` is updated in place.

        `early` holds pass-1 results of splits normalized while extract ran (`early.EarlyNormalize`).
        """
        started = time.perf_counter()
        before = copy.deepcopy(schema.tables)
        manifest = self.storage.manifest_json(load_id)
        if manifest.get("schema_contract") is not None:  # a source's or run()'s contract: the schema's setting
            schema.settings["schema_contract"] = manifest["schema_contract"]
        data_base = self.storage.data_base(EXTRACTED, load_id)
        plan = self.plan(load_id, schema, manifest["tables"], plan_splits(data_base, manifest["splits"], self.source_options))
        if manifest.get("loader_file_format") is None:  # not chosen in run(): Arrow items are loaded as Parquet
            plan.root_formats = {**arrow_item_formats(plan), **plan.root_formats}
        out_dir, out_base = self.output(plan)
        written, jobs = self._first_pass(plan, _matching(plan.splits, early or {}))
        schema.tables = plan.tables
        self._warn_null_only(plan)
        self._log_row_path(plan)
        if jobs:
            description = f"lakeload normalize {load_id}: finalize"
            finalized = run_tasks(self.spark, finalize_split, plan, jobs, description, working=self.storage.working)
            written += [f for per_split in finalized for f in per_split]
        schema.tables = _without_occurrence(plan.tables)
        _clean_evolve_once(schema.tables)
        written += write_materialized(plan, schema, manifest.get("materialized", []), written)
        relative: list[TPackageFile] = [{**f, "path": wio.relative(f["path"], out_base)} for f in written]
        files = sorted(relative, key=lambda f: f.get("split", -1))
        version, _ = schema.bump_version()
        update = copy.deepcopy(schema_update(before, schema.tables))
        row_counts: dict[str, int] = {}
        for f in files:
            row_counts[f["table"]] = row_counts.get(f["table"], 0) + f["rows"]
        package: NormalizedPackage = {
            "load_id": load_id,
            "schema_name": schema.name,
            "created_at": manifest["created_at"],
            "file_format": self.file_format,
            "root_tables": list(manifest["tables"]),
            "files": files,
            "row_counts": row_counts,
            "schema": cast(TStoredSchema, schema.to_dict()),
            "state": manifest.get("state"),
            "destination": manifest.get("destination"),
            "refresh": manifest.get("refresh"),
            "schema_update": update,
        }
        write_json_atomic(os.path.join(out_dir, "package.json"), package)
        self.storage.move(load_id, NORMALIZING, NORMALIZED)
        self.storage.discard(EXTRACTED, load_id)
        return NormalizeResult(load_id, schema.name, row_counts, len(files), version, time.perf_counter() - started, update,
                               {reason: len(splits) for reason, splits in self.row_path.items()})

    def output(self, plan: NormalizePlan) -> tuple[str, str]:
        """Point `plan` at the package's `normalizing` output (created); returns its folder and its data base."""
        out_dir = self.storage.package_dir(NORMALIZING, plan.load_id)
        out_base = self.storage.data_base(NORMALIZING, plan.load_id)
        os.makedirs(out_dir, exist_ok=True)  # marks the package (and its bucket data) for recovery
        plan.output_dir = wio.join(out_base, "data")
        wio.make_dirs(plan.output_dir)
        plan.working = self.storage.working
        return out_dir, out_base

    def plan(self, load_id: str, schema: Schema, tables: dict[str, TTable], splits: list[Split]) -> NormalizePlan:
        """What the normalize tasks of `splits` need; the root `tables` (extract's hints) are applied to `schema`."""
        _apply_table_hints(schema, tables)
        settings = NormalizerSettings(
            load_id=load_id,
            naming=self.naming,
            roots=_root_settings(schema, tables, self.max_nesting, self.destination_merges),
            json_columns=_json_columns(schema),
        )
        return NormalizePlan(
            load_id=load_id,
            naming=self.naming,
            tables=copy.deepcopy(schema.tables),
            detections=tuple(schema.settings.get("detections", ())),
            default_hints=schema.settings.get("default_hints", {}),
            normalizer=settings,
            splits=splits,
            file_format=self.file_format,
            compressed=self.compressed,
            root_formats=_root_formats(schema, tables, self.file_format),
            file_limits=self.file_limits,
            contracts=(ContractSettings(schema.name, schema.settings.get("schema_contract"))
                       if any_contract(schema.tables, schema.settings.get("schema_contract")) else None),
        )

    def _first_pass(
        self, plan: NormalizePlan, early: dict[int, SplitReport]
    ) -> tuple[list[TPackageFile], list[FinalizeJob]]:
        """Run pass 1 (splits without an early result) and fold all results in split order.

        Returns the final files written and the finalize jobs.
        """
        kinds: tuple[SplitKind, ...] = (
            ExecutorSplits(self.spark, self.storage.working, early, self.on_progress),
            FrameSplits(self.spark, self.on_progress),
        )
        for kind in kinds:
            kind.start(plan, [s for s in plan.splits if kind.takes(s)])
        tables = plan.tables
        stored = set(tables)
        self.null_only: dict[str, set[str]] = {}
        self.row_path: dict[str, list[int]] = {}  # reason -> the plain JSON splits the Arrow path left to the row path
        self.collisions: dict[tuple[str, str], list[str]] = {}
        final_files: list[TPackageFile] = []
        jobs: list[FinalizeJob] = []
        drafts: list[tuple[Split, TPackageFile]] = []
        for split in plan.splits:
            kind = next(k for k in kinds if k.takes(split))
            result = kind.report(plan, split, tables)
            if conflicts(tables, result) or contract_conflicts(plan, stored, tables, result):
                for f in result["files"]:
                    wio.remove(f["path"], self.storage.working)
                seeded = copy.copy(plan)
                seeded.tables = copy.deepcopy(tables)
                logger.info("split %s starts with another type than earlier splits; normalizing it again", split.index)
                # pass 1 again, seeded with the schema of the splits before it: its types are the sequential ones
                result = kind.again(seeded, split)
                if clash := conflicts(tables, result):
                    raise NormalizeError(f"Schema inference did not converge for {clash}")
            raise_violation(plan, result)
            if result.get("row_path"):
                self.row_path.setdefault(result["row_path"], []).append(split.index)
            chunks = [f for f in result.get("files", ()) if f.get("chunk")]
            drafts += [(split, f) for f in result.get("files", ()) if f.get("draft")]
            final_files += [f for f in result.get("files", ()) if not f.get("chunk") and not f.get("draft")]
            if chunks:
                jobs.append({"split": split, "chunks": chunks})
            fold(tables, result)
            for table_name, cols in result["null_only"].items():
                self.null_only.setdefault(table_name, set()).update(cols)
            self._collect_collisions(result.get("collisions", {}))
        self._warn_collisions()
        settle_drafts(tables, drafts, final_files, jobs)
        for kind in kinds:
            final_files += kind.write(plan)
        return final_files, jobs

    def _log_row_path(self, plan: NormalizePlan) -> None:
        """One INFO line per package whose plain JSON splits were normalized row by row instead of with Arrow."""
        if not self.row_path:
            return
        reasons = "; ".join(f"{reason} (split{'s' if len(splits) > 1 else ''} {', '.join(map(str, splits[:10]))}"
                            f"{', ...' if len(splits) > 10 else ''})" for reason, splits in self.row_path.items())
        count = sum(len(splits) for splits in self.row_path.values())
        logger.info("normalize %s: %d of %d split(s) normalized row by row instead of with Arrow: %s", plan.load_id,
                    count, len(plan.splits), reasons)

    def _collect_collisions(self, collisions: dict[str, dict[str, list[str]]]) -> None:
        for table_name, columns in collisions.items():
            for column, keys in columns.items():
                known = self.collisions.setdefault((table_name, column), [])
                known.extend(k for k in keys if k not in known)

    def _warn_collisions(self) -> None:
        for (table_name, column), keys in self.collisions.items():
            logger.warning(
                "Keys %s of the same record all become column '%s' of table '%s' under the snake_case naming "
                "convention; the last value is kept, as dlt does. Rename the keys in the resource (e.g. with "
                "add_map) or load with a case-sensitive naming convention to keep every value.",
                keys, column, table_name,
            )

    def _warn_null_only(self, plan: NormalizePlan) -> None:
        for table_name, cols in self.null_only.items():
            known = plan.tables.get(table_name, {}).get("columns", {})
            missing = sorted(c for c in cols if not known.get(c, {}).get("data_type"))
            if missing:
                logger.warning(
                    "Columns %s of table '%s' only had null values and were not created; "
                    "give them a data_type in `columns` hints to create them anyway.",
                    missing,
                    table_name,
                )

"""Normalize a Spark DataFrame split natively in Spark: the driver plans, Spark flattens and writes.

A DataFrame's rows never become Python objects. Its schema is walked on the driver the way dlt's
relational normalizer walks a record (`kernel.normalize.relational`): struct fields flatten into
`parent__child` columns (plain fields first, nested structs after them, the last one first), arrays
become child tables `<table>__<field>` (arrays of scalars get a `value` column, arrays of arrays a
`<field>__list` table), with the same `_dlt_*` columns as JSON input:

- root `_dlt_id`: for tables dlt upserts (Delta `merge` with a primary key), dlt's digest of the primary
  key, as the Python path computes it (`kernel.normalize.row_ids`, run as an Arrow UDF on the executors); else a
  Spark-native hash of the load id, the split and the row's place in the extracted Parquet files (dlt's
  ids are random there; these are stable when the package is normalized again);
- child `_dlt_id`: of (parent id, table, list index), dlt's digest under upserted roots (Arrow UDF), the
  Spark-native hash of the same text under the others;
- `_dlt_root_id` and the package-only `_lakeload_seq` when the root table asks for them.

Columns keep their Spark types (`int` is `bigint` with precision 32, `decimal(p,s)` keeps p and s,
`timestamp_ntz` is a timestamp without time zone); maps, variants and nesting past the limit are
`json`. A column already typed otherwise gets a variant column, as dlt does for JSON values, except
integers into `double`/`decimal` columns, which are widened. Fields that are `NullType` create no
column (reported as null-only).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from lakeload.errors import NormalizeError
from lakeload.kernel.normalize.coerce import VARIANT_FORMAT, RowCoercer
from lakeload.kernel.normalize.contract import ContractViolation
from lakeload.kernel.normalize.relational import (
    C_DLT_ID,
    C_DLT_LIST_IDX,
    C_DLT_LOAD_ID,
    C_DLT_PARENT_ID,
    C_DLT_ROOT_ID,
    C_OCCURRENCE,
    C_VALUE,
    EMPTY_KEY,
    OCCURRENCE_SHIFT,
    NormalizerSettings,
    RootTableSettings,
)
from lakeload.kernel.normalize.report import SplitReport, split_report
from lakeload.kernel.normalize.row_ids import ID_LENGTH_BYTES, key_ids_array, nested_ids_array
from lakeload.normalize.spark_types import WIDENING, leaf_column, widen
from lakeload.schema.contract import is_new_table
from lakeload.schema.typing import TColumn, TTable

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType


ROW_ID, PARENT, POS, ELEM, FILE, ROW = "_ll_id", "_ll_parent", "_ll_pos", "_ll_elem", "_ll_file", "_ll_row"
# columns the planner adds to a split's frame; an incoming column of the same name is read under another name
_WORKING_COLUMNS = frozenset((ROW_ID, PARENT, POS, ELEM, C_DLT_ROOT_ID, C_OCCURRENCE))


def digest(value: Column) -> Column:
    """A Spark-native row id of a text (sha-256, first 10 bytes, base64 unpadded): for tables dlt gives random ids."""
    from pyspark.sql import functions as F

    raw = F.substring(F.unhex(F.sha2(value, 256)), 1, ID_LENGTH_BYTES)
    return F.regexp_replace(F.base64(raw), "=", "")


def dlt_key_id(keys: Column) -> Column:
    """dlt's `_dlt_id` of an upserted root row from a struct of its primary key columns, computed on executors
    (an Arrow UDF running `kernel.normalize.row_ids.key_ids_array`: Spark has no SHAKE-128)."""
    from pyspark.sql.functions import arrow_udf

    # the function's type hints make it a scalar Arrow UDF; pyspark's stubs only know the `functionType=` form
    return arrow_udf(key_ids_array, "string")(keys)  # type: ignore[call-overload,no-any-return]


def dlt_nested_id(parent_id: Column, table: str, position: Column) -> Column:
    """dlt's `_dlt_id` of a nested row (`kernel.normalize.row_ids.nested_ids_array` as an Arrow UDF on executors)."""
    from pyspark.sql import functions as F
    from pyspark.sql.functions import arrow_udf

    ids = arrow_udf(nested_ids_array, "string")  # type: ignore[call-overload]
    return ids(parent_id, F.lit(table), position.cast("long"))  # type: ignore[no-any-return]


def _field(parent: Column, name: str) -> Column:
    return parent.getField(name)


def _top(name: str) -> Column:
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


@dataclass
class _Leaf:
    name: str
    expr: Column
    data_type: DataType
    key: str = ""


@dataclass
class _List:
    path: tuple[str, ...]
    expr: Column
    element: DataType


@dataclass
class FrameTable:
    """One table of a DataFrame split: its DataFrame (final column names) once planned."""

    name: str
    frame: DataFrame


@dataclass
class FramePlan:
    """The schema additions of a DataFrame split (in the shape of a normalize task's report) and its tables."""

    report: SplitReport
    tables: list[FrameTable] = field(default_factory=list)


Entries = list[tuple[str, "DataType", "Column"]]


def _complete(column: TColumn, props: TColumn) -> None:
    """Precision, scale and time zone of the Spark type, unless the column's hints set them."""
    for key, value in props.items():
        cast(dict[str, Any], column).setdefault(key, value)


class FramePlanner:
    """Plans the tables of one DataFrame split against the schema folded so far."""

    def __init__(
        self, tables: dict[str, TTable], settings: NormalizerSettings, coercer: RowCoercer, split_index: int
    ) -> None:
        self.tables = tables
        self.settings = settings
        self.naming = settings.naming
        self.coercer = coercer
        self.split_index = split_index
        self.collisions: dict[str, dict[str, list[str]]] = {}
        self.null_only: dict[str, set[str]] = {}
        self.out: list[FrameTable] = []
        self._was_new = False  # the table being planned had no typed column before this split (dlt's new table)
        self._drop_when: list[Column] = []  # rows with a value in a `discard_row` column are dropped
        self._dlt_ids = False  # the tree's ids are dlt's digests (tables dlt upserts), not Spark-native hashes

    # -- schema walk -------------------------------------------------------------------------------
    def _flatten(self, table: str, entries: Entries, level: int) -> tuple[dict[str, _Leaf], list[_List]]:
        """dlt's `_flatten` over typed fields: leaves in dlt's column order, lists in order."""
        from pyspark.sql import types as T

        json_columns = self.settings.json_columns.get(table, frozenset())
        leaves: dict[str, _Leaf] = {}
        lists: dict[tuple[str, ...], _List] = {}
        stack: list[tuple[Entries, int, tuple[str, ...]]] = [(entries, level, ())]
        while stack:
            current, lvl, path = stack.pop()
            for key, data_type, expr in current:
                norm = self.naming.normalize_path(key) if key and not key.isspace() else EMPTY_KEY
                name = self.naming.shorten_fragments(*path, norm) if path else norm
                if isinstance(data_type, T.StructType) and lvl > 0 and name not in json_columns:
                    fields = [(f.name, f.dataType, _field(expr, f.name)) for f in data_type.fields]
                    stack.append((fields, lvl - 1, (*path, norm)))
                    continue
                if isinstance(data_type, T.ArrayType) and lvl > 0 and name not in json_columns:
                    list_path = (*path, self.naming.normalize_tables_path(key))
                    lists[list_path] = _List(list_path, expr, data_type.elementType)
                    continue
                if name in leaves:  # dlt keeps the later value in the earlier position
                    known = self.collisions.setdefault(table, {}).setdefault(name, [])
                    known.extend(k for k in (leaves[name].key, key) if k not in known)
                leaves[name] = _Leaf(name, expr, data_type, key)
        return leaves, list(lists.values())

    # -- columns -----------------------------------------------------------------------------------
    def _table(self, name: str, parent: str | None) -> TTable | None:
        """The table (created when new); None: a schema contract drops its rows."""
        table = self.tables.get(name)
        if table is None and self.coercer.contracts is not None and not self.coercer.contracts.new_table(name, parent):
            return None
        return table if table is not None else self.coercer._new_table(name, parent)

    def _contract(self, table_name: str, name: str, variant: bool) -> str:
        """What the schema contract says of a column the frame would add: evolve, discard_value or discard_row."""
        checker = self.coercer.contracts
        return "evolve" if checker is None else checker.new_column(table_name, name, variant, self._was_new)

    def _keep(self, frame: DataFrame) -> DataFrame:
        """`frame` without the rows a `discard_row` contract drops (their nested rows go with them)."""
        from functools import reduce

        if not self._drop_when:
            return frame
        dropped, self._drop_when = reduce(lambda a, b: a | b, self._drop_when), []
        return frame.filter(~dropped)

    def _ensure(self, table_name: str, name: str, props: TColumn, variant: bool = False) -> None:
        """Create the column (or complete a hints-only one) with the leaf's type, as dlt's coercer adds it."""
        columns = self.tables[table_name]["columns"]
        existing = columns.get(name)
        if existing is None or not existing.get("data_type"):
            self.coercer._add_column(table_name, columns, name, props["data_type"], existing, variant)
            _complete(columns[name], props)

    def _column(self, table_name: str, name: str, props: TColumn, expr: Column) -> tuple[str, Column]:
        """The column a leaf goes to (its own, a widened one or a variant) and the value expression."""
        existing = self.tables[table_name]["columns"].get(name)
        if existing is not None and existing.get("data_type"):
            if existing["data_type"] == props["data_type"]:
                return name, expr
            if (existing["data_type"], props["data_type"]) in WIDENING:
                return name, widen(existing["data_type"], expr)
            variant = self.naming.shorten_fragments(name, VARIANT_FORMAT % props["data_type"])
            known = self.tables[table_name]["columns"].get(variant, {}).get("data_type")
            if not known and (mode := self._contract(table_name, variant, True)) != "evolve":
                return mode, expr
            self._ensure(table_name, variant, props, variant=True)
            return variant, expr
        if (mode := self._contract(table_name, name, False)) != "evolve":
            return mode, expr
        self._ensure(table_name, name, props)
        return name, expr

    def _system(self, table_name: str, name: str, data_type: str, expr: Column) -> tuple[str, Column]:
        self._ensure(table_name, name, {"data_type": data_type})
        return name, expr

    @staticmethod
    def _put(selected: list[tuple[str, Column]], entry: tuple[str, Column]) -> None:
        """Add a `_dlt_*` column; one the data already has (a copied dataset) takes its value in its place, as in dlt."""
        for i, (name, _) in enumerate(selected):
            if name == entry[0]:
                selected[i] = entry
                return
        selected.append(entry)

    @staticmethod
    def _row_id(leaves: dict[str, _Leaf], generated: Column) -> Column:
        """An incoming non-empty `_dlt_id` is kept (dlt keeps it), else the generated id."""
        from pyspark.sql import functions as F

        incoming = leaves.get(C_DLT_ID)
        if incoming is None:
            return generated
        return F.coalesce(F.nullif(incoming.expr.cast("string"), F.lit("")), generated)

    def _leaf_columns(self, table_name: str, leaves: dict[str, _Leaf]) -> list[tuple[str, Column]]:
        selected: list[tuple[str, Column]] = []
        self._was_new = is_new_table(self.tables.get(table_name)) if self.coercer.contracts is not None else False
        for leaf in leaves.values():
            column = leaf_column(leaf.data_type, leaf.expr)
            if column is None:
                self.null_only.setdefault(table_name, set()).add(leaf.name)
                continue
            props, expr = column
            name, value = self._column(table_name, leaf.name, props, expr)
            if name == "discard_row":
                self._drop_when.append(leaf.expr.isNotNull())
            elif name != "discard_value":
                selected.append((name, value))
        return selected

    # -- tables ------------------------------------------------------------------------------------
    def plan_root(self, frame: DataFrame, table_name: str, load_id: str, offsets: dict[str, int]) -> None:
        from pyspark.sql import functions as F

        root = self.settings.roots.get(table_name, RootTableSettings())
        if self._table(table_name, None) is None:
            return
        fields = [f for f in frame.schema.fields if f.name not in (FILE, ROW)]
        renamed = {f.name: f"_ll_in{i}" for i, f in enumerate(fields) if f.name in _WORKING_COLUMNS}
        if renamed:
            frame = frame.withColumnsRenamed(renamed)
        entries = [(f.name, f.dataType, _top(renamed.get(f.name, f.name))) for f in fields]
        leaves, lists = self._flatten(table_name, entries, root.max_nesting)
        selected = self._leaf_columns(table_name, leaves)
        self._put(selected, self._system(table_name, C_DLT_LOAD_ID, "text", F.lit(load_id)))
        if root.row_id == "key_hash" and root.primary_key:
            missing = [k for k in root.primary_key if k not in leaves]
            if missing:
                raise NormalizeError(
                    f"Primary key columns {missing} are not columns of the DataFrame for table '{table_name}'. "
                    "Fix: name existing columns in `primary_key`, or add them to the DataFrame."
                )
            self._dlt_ids = True
            row_id = dlt_key_id(F.struct(*[leaves[k].expr.alias(k) for k in root.primary_key]))
        else:
            place = F.concat_ws("/", F.lit(load_id), F.lit(str(self.split_index)), F.col(FILE), F.col(ROW).cast("string"))
            row_id = digest(place)
        base = self._keep(frame.withColumn(ROW_ID, self._row_id(leaves, row_id)))
        carried: list[str] = []
        if root.propagate_root_key:
            base = base.withColumn(C_DLT_ROOT_ID, F.col(ROW_ID))
            carried.append(C_DLT_ROOT_ID)
        self._put(selected, self._system(table_name, C_DLT_ID, "text", F.col(ROW_ID)))
        if root.occurrence:
            offset = F.element_at(F.create_map(*[F.lit(x) for kv in offsets.items() for x in kv]), F.col(FILE))
            seq = F.lit(self.split_index << OCCURRENCE_SHIFT) + offset + F.col(ROW)
            base = base.withColumn(C_OCCURRENCE, seq)
            self._put(selected, self._system(table_name, C_OCCURRENCE, "bigint", F.col(C_OCCURRENCE)))
            carried.append(C_OCCURRENCE)
        self.out.append(FrameTable(table_name, base.select(*[expr.alias(name) for name, expr in selected])))
        self._plan_lists(base, table_name, lists, carried, root.max_nesting - 1)

    def _plan_lists(self, base: DataFrame, table: str, lists: list[_List], carried: list[str], level: int) -> None:
        for item in lists:
            child = self.naming.shorten_fragments(table, *item.path)
            self._plan_child(base, table, child, item, carried, level)

    def _plan_child(self, base: DataFrame, parent: str, child: str, item: _List, carried: list[str], level: int) -> None:
        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        if self._table(child, parent) is None:
            return
        exploded = base.select(
            F.col(ROW_ID).alias(PARENT), *[F.col(c) for c in carried], F.posexplode(item.expr).alias(POS, ELEM)
        )
        element, elem = item.element, F.col(ELEM)
        lists: list[_List] = []
        if isinstance(element, T.StructType):
            entries = [(f.name, f.dataType, _field(elem, f.name)) for f in element.fields]
            leaves, lists = self._flatten(child, entries, level)
        elif isinstance(element, T.ArrayType):
            leaves, lists = self._flatten(child, [("list", element, elem)], level - 1)
            level -= 1
        else:
            leaves = {C_VALUE: _Leaf(C_VALUE, elem, element)}
        if self._dlt_ids:
            generated = dlt_nested_id(F.col(PARENT), child, F.col(POS))
        else:
            generated = digest(F.concat_ws("_", F.col(PARENT), F.lit(child), F.col(POS).cast("string")))
        exploded = exploded.withColumn(ROW_ID, self._row_id(leaves, generated))
        selected = self._leaf_columns(child, leaves)
        exploded = self._keep(exploded)
        for c in carried:
            self._put(selected, self._system(child, c, "text" if c == C_DLT_ROOT_ID else "bigint", F.col(c)))
        self._put(selected, self._system(child, C_DLT_PARENT_ID, "text", F.col(PARENT)))
        self._put(selected, self._system(child, C_DLT_LIST_IDX, "bigint", F.col(POS).cast("long")))
        self._put(selected, self._system(child, C_DLT_ID, "text", F.col(ROW_ID)))
        self.out.append(FrameTable(child, exploded.select(*[expr.alias(name) for name, expr in selected])))
        self._plan_lists(exploded, child, lists, carried, level - 1)


def plan_frame(
    frame: DataFrame,
    table_name: str,
    tables: dict[str, TTable],
    settings: NormalizerSettings,
    make_coercer: Callable[[dict[str, TTable]], RowCoercer],
    split_index: int,
    offsets: dict[str, int],
) -> FramePlan:
    """Plan one DataFrame split against `tables` (the schema folded so far, not modified)."""
    local = copy.deepcopy(tables)
    coercer = make_coercer(local)
    planner = FramePlanner(local, settings, coercer, split_index)
    violation = None
    try:
        planner.plan_root(frame, table_name, settings.load_id, offsets)
    except ContractViolation as stop:  # the driver raises it: nothing of the package is written
        violation = stop.violation
    touched = set(coercer.added) | set(coercer.new_tables)
    report = split_report(
        split_index, new_tables=coercer.new_tables, added=coercer.added, tables={name: local[name] for name in touched},
        row_counts={}, null_only={t: sorted(c) for t, c in planner.null_only.items()}, collisions=planner.collisions,
        violation=violation,
    )
    return FramePlan(report, planner.out)

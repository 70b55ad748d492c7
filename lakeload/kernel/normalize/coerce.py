"""Executor-safe: fits normalized rows into a table schema, inferring new columns as dlt does.

Runs inside Spark executor Python workers. For every value of a row:
- `None` creates nothing (the column is remembered as null-only);
- a value whose type matches its column is kept (timestamps normalized to UTC);
- a value of another type is coerced to the column type when dlt would coerce it;
- otherwise it goes to the variant column `<name>__v_<type>`, created on first need;
- a value for an unknown (or hints-only) column creates it with the type inferred from the value,
  ISO timestamp detection included.

The same class serves the infer pass (schema grows, additions are recorded in order) and the write
pass (`frozen=True`: the schema is final and must not grow).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, cast

from lakeload.errors import SchemaError
from lakeload.kernel.contracts import TRow
from lakeload.kernel.normalize.contract import DISCARD, ContractChecker
from lakeload.schema import coercion, datatypes
from lakeload.schema.naming import NamingConvention
from lakeload.schema.typing import TColumn, TTable

VARIANT_FORMAT = "v_%s"
MAX_PLANS = 4096  # row shapes remembered per split; past that rows take the exact path


def _timestamp_converter(py_type: str) -> Any:
    if py_type == "timestamp":
        return lambda value: coercion.normalize_timezone(value, True)
    return lambda value: coercion.normalize_timezone(coercion.coerce_value("timestamp", py_type, value), True)


def _converter(col_type: str, py_type: str) -> Any:
    return lambda value: coercion.coerce_value(col_type, py_type, value)


class SchemaFrozenError(SchemaError):
    """The write pass met a column the infer pass did not see: the input changed between passes."""


_PY_TYPES: dict[Any, str | None] = {}


def _py_type(t: Any) -> str | None:
    """dlt type of a Python type, memoized in a plain dict (hot path)."""
    found = _PY_TYPES.get(t, 0)
    if found == 0:
        try:
            found = datatypes.py_type_to_data_type(t)
        except Exception:
            found = None
        _PY_TYPES[t] = found
    return found  # type: ignore[return-value]


def _compile_hints(default_hints: dict[str, list[str]]) -> list[tuple[str, list[re.Pattern[str] | str]]]:
    compiled: list[tuple[str, list[re.Pattern[str] | str]]] = []
    for hint, patterns in default_hints.items():
        compiled.append((hint, [re.compile(p[3:]) if p.startswith("re:") else p for p in patterns]))
    return compiled


def _matches(patterns: Iterable[re.Pattern[str] | str], name: str) -> bool:
    return any((p.search(name) is not None) if isinstance(p, re.Pattern) else p == name for p in patterns)


class RowCoercer:
    """Coerces rows into `tables` (a dlt-format `{table_name: table}` dict it owns and may grow)."""

    def __init__(
        self,
        tables: dict[str, TTable],
        naming: NamingConvention,
        detections: Iterable[str] = ("iso_timestamp",),
        default_hints: dict[str, list[str]] | None = None,
        frozen: bool = False,
        contracts: ContractChecker | None = None,
    ) -> None:
        self.tables = tables
        self.contracts = contracts  # schema contracts (None: everything evolves)
        self._row_was_new = False  # the row's table had no typed column before the row (dlt's new table)
        self._drop_row = False
        self.naming = naming
        self.detections = tuple(detections)
        self.hints = _compile_hints(default_hints or {})
        self.frozen = frozen
        self.added: dict[str, list[str]] = {}  # table -> columns added or completed, in order
        self.new_tables: list[str] = []
        self.null_only: dict[str, set[str]] = {}
        self.row_counts: dict[str, int] = {}
        self._types: dict[str, dict[str, str]] = {}  # table -> {column: data_type} of complete columns
        self._plans: dict[tuple[str, tuple[str, ...]], tuple[list[type], list[Any], list[str]]] = {}
        self._additions = 0  # grows with every column added: a row that added one gets no plan

    def _column_types(self, table_name: str, columns: dict[str, TColumn]) -> dict[str, str]:
        types = {n: c["data_type"] for n, c in columns.items() if c.get("data_type")}
        self._types[table_name] = types
        return types

    # -- public ------------------------------------------------------------------------------------
    def coerce_row(self, table_name: str, parent_table: str | None, row: TRow) -> TRow:
        """The row with coerced values and without nulls; unknown columns are added to the table.

        Rows of one table mostly repeat a shape (same keys, same value types). A shape seen before
        whose row needed no schema change has a plan (which values to convert, which nulls to drop),
        so such rows skip the per-value type checks; any surprise falls back to the exact path.
        """
        if self.contracts is not None and not self.contracts.pre_filter(table_name, parent_table, row):
            return {}
        key = (table_name, tuple(row))
        plan = self._plans.get(key)
        if plan is not None and list(map(type, row.values())) == plan[0]:
            try:
                converted = [(name, convert(row[name])) for name, convert in plan[1]]
            except (ValueError, SyntaxError, TypeError):
                pass  # a value of the same type that does not coerce: decide it the exact way below
            else:
                for name, value in converted:
                    row[name] = value
                for name in plan[2]:
                    del row[name]
                if row:
                    self.row_counts[table_name] += 1
                return row
        types_before = list(map(type, row.values())) if len(self._plans) < MAX_PLANS else None
        added_before = self._additions
        out = self._coerce_row(table_name, parent_table, row)
        if types_before is not None and self._additions == added_before and out:
            self._plans[key] = self._plan(table_name, key[1], types_before)
        return out

    def _plan(self, table_name: str, names: tuple[str, ...], types: list[type]) -> tuple[list[type], list[Any], list[str]]:
        """How to coerce rows of this shape: values that need converting, keys to drop (nulls)."""
        columns = self.tables[table_name]["columns"]
        converts: list[tuple[str, Any]] = []
        drops: list[str] = []
        for name, value_type in zip(names, types, strict=True):
            if value_type is type(None):
                drops.append(name)
                continue
            col_type = columns[name]["data_type"]
            py_type = _py_type(value_type) or col_type
            if col_type == "timestamp":
                converts.append((name, _timestamp_converter(py_type)))
            elif py_type != col_type:
                converts.append((name, _converter(col_type, py_type)))
        return types, converts, drops

    def _coerce_row(self, table_name: str, parent_table: str | None, row: TRow) -> TRow:
        table = self.tables.get(table_name)
        if self.contracts is not None:
            self._row_was_new = table is None or not any(c.get("data_type") for c in table["columns"].values())
            if table is None and not self.contracts.new_table(table_name, parent_table):
                self.contracts.drop(row)
                return {}
        if table is None:
            table = self._new_table(table_name, parent_table)
        columns = table["columns"]
        types = self._types.get(table_name)
        if types is None:
            types = self._column_types(table_name, columns)
        out: TRow = {}
        py_types = _PY_TYPES
        for name, value in row.items():
            if value is None:
                self._null_value(table_name, columns, name)
                continue
            col_type = types.get(name)
            if col_type is not None:
                py_type = py_types.get(type(value)) or _py_type(type(value))
                if py_type == col_type:
                    out[name] = coercion.normalize_timezone(value, True) if col_type == "timestamp" else value
                    continue
                if py_type and coercion.can_coerce(col_type, py_type):
                    try:
                        new_value = coercion.coerce_value(col_type, py_type, value)
                    except (ValueError, SyntaxError):
                        pass
                    else:
                        if col_type == "timestamp":
                            new_value = coercion.normalize_timezone(new_value, True)
                        out[name] = new_value
                        continue
            new_name, new_value = self._non_null_value(table_name, columns, name, value, False)
            if new_name is not DISCARD:
                out[new_name] = new_value
            types = self._types[table_name]
        if self._drop_row:  # a contract said `discard_row`; columns that may evolve were still added, as in dlt
            self._drop_row = False
            self.contracts.drop(row)  # type: ignore[union-attr]
            return {}
        if out:
            if table_name not in self.row_counts:
                self.row_counts[table_name] = 0
                table.setdefault("x-normalizer", {})["seen-data"] = True
            self.row_counts[table_name] += 1
        return out

    def add_typed_column(self, table_name: str, column: TColumn) -> None:
        """Add a column whose type is given (an Arrow item's field), not inferred; the table is created if new.
        Hints given for it beforehand (a hints-only column) are kept, and it moves to the end, as in dlt."""
        columns = (self.tables.get(table_name) or self._new_table(table_name, None))["columns"]
        existing = columns.get(column["name"])
        if existing is not None and existing.get("data_type"):
            return  # a stored column keeps its type
        self._add_column(table_name, columns, column["name"], column["data_type"], existing, False)
        cast(dict[str, Any], columns[column["name"]]).update({k: v for k, v in column.items() if existing is None or k not in existing})

    # -- internals ---------------------------------------------------------------------------------
    def _new_table(self, table_name: str, parent_table: str | None) -> TTable:
        if self.frozen:
            raise SchemaFrozenError(f"Table '{table_name}' appeared in the write pass but not in the infer pass.")
        self._additions += 1
        table: TTable = {"name": table_name, "columns": {}}
        if parent_table:
            table["parent"] = parent_table
        self.tables[table_name] = table
        self.new_tables.append(table_name)
        return table

    def _null_value(self, table_name: str, columns: dict[str, TColumn], name: str) -> None:
        column = columns.get(name)
        if column is not None and column.get("data_type"):
            if column.get("nullable") is False:
                raise SchemaError(
                    f"Column '{name}' of table '{table_name}' is not nullable but a record has null there. "
                    "Fix the data, or declare the column nullable in the `columns` hints."
                )
            return
        if column is None and self._hint("not_null", name):
            raise SchemaError(f"Column '{name}' of table '{table_name}' is not nullable but received null.")
        self.null_only.setdefault(table_name, set()).add(name)

    def _hint(self, hint: str, name: str) -> bool:
        for hint_name, patterns in self.hints:
            if hint_name == hint:
                return _matches(patterns, name)
        return False

    def _non_null_value(
        self, table_name: str, columns: dict[str, TColumn], name: str, value: Any, is_variant: bool
    ) -> tuple[str, Any]:
        existing = columns.get(name)
        incomplete = existing if existing is not None and not existing.get("data_type") else None
        if incomplete is not None:
            existing = None
        col_type = existing["data_type"] if existing else datatypes.infer_data_type(value, self.detections)
        py_type = _py_type(type(value)) or col_type
        try:
            coerced = coercion.coerce_value(col_type, py_type, value)
        except (ValueError, SyntaxError) as exc:
            if is_variant:
                raise SchemaError(
                    f"Cannot coerce a value of type '{py_type}' into column '{name}' of table '{table_name}' "
                    f"(type '{columns[name]['data_type']}'): {value!r}"
                ) from exc
            variant = self.naming.shorten_fragments(name, VARIANT_FORMAT % py_type)
            return self._non_null_value(table_name, columns, variant, value, True)
        if existing is None:
            if self.contracts is not None:
                decision = self.contracts.new_column(table_name, name, is_variant, self._row_was_new)
                if decision != "evolve":
                    self._additions += 1  # this row shape gets no plan: its values are decided one by one
                    self._drop_row |= decision == "discard_row"
                    return DISCARD, None
            self._add_column(table_name, columns, name, col_type, incomplete, is_variant)
        if col_type == "timestamp":
            coerced = coercion.normalize_timezone(coerced, True)
        return name, coerced

    def _add_column(
        self,
        table_name: str,
        columns: dict[str, TColumn],
        name: str,
        data_type: str,
        incomplete: TColumn | None,
        is_variant: bool,
    ) -> None:
        if self.frozen:
            raise SchemaFrozenError(
                f"Column '{name}' of table '{table_name}' appeared in the write pass but not in the infer pass."
            )
        column: TColumn = {"name": name, "data_type": data_type, "nullable": not self._hint("not_null", name)}
        for hint, patterns in self.hints:
            if hint != "not_null" and _matches(patterns, name):
                cast(dict[str, Any], column)[hint] = True
        if is_variant:
            column["variant"] = True
            column["description"] = f"Variant of column {name} generated by dlt"  # dlt's text: the schemas must be equal
        if incomplete is not None:
            merged = dict(incomplete)
            merged.update({k: v for k, v in column.items() if k not in incomplete or k == "data_type"})
            column = cast(TColumn, merged)
            columns.pop(name, None)  # a hints-only column moves to the end once it gets data, as in dlt
        columns[name] = column
        self._column_types(table_name, columns)
        self.added.setdefault(table_name, []).append(name)
        self._additions += 1

"""Executor-safe: Arrow columns of the fast path fitted into their dlt columns, and dlt's row ids.

Given the split's schema (from the replay), each parsed column is converted the way `RowCoercer`
converts its values: in bulk where Arrow's result is provably the same (a bigint column of JSON
integers, text of strings, ISO timestamps with `Z` or an offset, integral doubles into bigint ...),
value by value through a frozen `RowCoercer` otherwise (variants included). A value whose target
column the schema does not have yet names a record the replay must include (`needs`).

JSON numbers that pyarrow read as doubles may have been integers: they are only taken into columns
where both convert alike (`_FROM_ANY_NUMBER`), and never into a variant (`v_bigint` or `v_double`?)
unless they have a fraction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakeload.errors import SchemaError
from lakeload.kernel.normalize.arrow_flatten import Part, Unsupported
from lakeload.kernel.normalize.coerce import RowCoercer, SchemaFrozenError
from lakeload.kernel.normalize.row_ids import key_ids_rows
from lakeload.kernel.normalize.writers import arrow_schema, complete_columns
from lakeload.schema.naming import NamingConvention
from lakeload.schema.typing import TTable

_ISO_UTC = (
    r"^[1-9]\d{3}-\d{2}-\d{2}T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,6})?"
    r"(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$"
)
_MAX_EXACT_INT = float(2**53)
_MAX_JSON_INT = float(2**63)
# where a JSON integer and the double pyarrow made of it convert alike (when the conversion succeeds)
_FROM_ANY_NUMBER = frozenset(("double", "bigint", "timestamp", "date", "bool", "decimal", "wei"))
_KINDS = {pa.int64(): "bigint", pa.float64(): "double", pa.string(): "text", pa.bool_(): "bool"}


def key_ids(part: Part, primary_key: tuple[str, ...]) -> pa.Array:
    """`key_row_id` of every root row from the raw values of its primary key columns."""
    columns = []
    for name in primary_key:
        values = part.columns.get(name)
        if values is None or name in part.alternates or values.null_count or values.type not in (pa.int64(), pa.string(), pa.bool_()):
            raise Unsupported(f"primary key column '{name}' is missing, null or not exact in Arrow")
        columns.append(values.to_pylist())
    return key_ids_rows([dict(zip(primary_key, row, strict=True)) for row in zip(*columns, strict=True)], primary_key)


def _check_numbers(values: pa.Array) -> None:
    """Doubles the Python path would not read alike: NaN/inf (orjson rejects them), integers past 64 bits."""
    if values.null_count == len(values):
        return
    if not pc.all(pc.is_finite(values)).as_py() or pc.max(pc.abs(values)).as_py() >= _MAX_JSON_INT:
        raise Unsupported("non-finite or very large JSON numbers")


@dataclass
class Converter:
    """Converts the columns of parts into the columns of `tables` (the split's schema from the replay)."""

    tables: dict[str, TTable]
    naming: NamingConvention
    detections: tuple[str, ...]
    hints: dict[str, list[str]]
    needs: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.frozen = RowCoercer(self.tables, self.naming, self.detections, self.hints, frozen=True)
        self.schemas: dict[str, pa.Schema] = {}

    def schema(self, table: str) -> pa.Schema:
        found = self.schemas.get(table)
        if found is None:
            found = self.schemas[table] = arrow_schema(complete_columns(self.tables[table]))
        return found

    def convert(self, part: Part) -> dict[str, pa.Array]:
        """Target column -> values for every row of `part` (targets: the columns and their variants)."""
        out: dict[str, pa.Array] = {}
        for name, values in part.columns.items():
            columns = self._column(part, name, values)
            other = part.alternates.get(name)
            if other is not None:  # a renamed key's values: never in the same row as the usual ones
                for target, converted in self._column(part, name, other).items():
                    mine = columns.get(target)
                    columns[target] = converted if mine is None else pc.if_else(converted.is_valid(), converted, mine)
            for target, converted in columns.items():
                if target in out:  # a key that is also another column's variant name
                    raise Unsupported(f"column '{target}' of '{part.name}' gets values from two keys")
                out[target] = converted
        return out

    def _type(self, table: str, column: str) -> pa.DataType:
        schema = self.schema(table)
        index = schema.get_field_index(column)
        if index < 0:
            raise Unsupported(f"column '{column}' of '{table}' is not in the schema")
        return schema.field(index).type

    def _column(self, part: Part, name: str, values: pa.Array) -> dict[str, pa.Array]:
        if values.null_count == len(values):
            return {}
        kind = _KINDS.get(values.type)
        if kind is None:
            raise Unsupported(f"Arrow type {values.type}")
        column = self.tables[part.name]["columns"].get(name) or {}
        col_type = column.get("data_type")
        if kind == "double":
            _check_numbers(values)
            if col_type not in _FROM_ANY_NUMBER:
                raise Unsupported("JSON numbers read as doubles into a column where integers convert differently")
        if col_type is None:
            raise Unsupported(f"column '{name}' of '{part.name}' has no type")
        converted, done = self._bulk(values, kind, col_type, self._type(part.name, name))
        if done is None:
            assert converted is not None
            return {name: converted}
        rest = pc.and_(values.is_valid(), pc.invert(done))
        if not pc.any(rest).as_py():
            return {name: converted} if converted is not None else {}
        slow = self._one_by_one(part, name, values, np.flatnonzero(rest.to_numpy(zero_copy_only=False)))
        if kind == "double" and any(target != name for target in slow):
            variants = [mask for target, (_, mask) in slow.items() if target != name]
            if any(pc.any(pc.and_(mask, pc.equal(pc.floor(values), values))).as_py() for mask in variants):
                raise Unsupported("a JSON number that may be an integer goes to a variant column")  # v_bigint or v_double?
        result = {target: items for target, (items, _) in slow.items()}
        if converted is not None:
            mine = slow.get(name)
            result[name] = converted if mine is None else pc.if_else(mine[1], mine[0], converted)
        return result

    def _bulk(
        self, values: pa.Array, kind: str, col_type: str, target: pa.DataType
    ) -> tuple[pa.Array | None, pa.Array | None]:
        """Values converted in bulk, and which (None: all non-null ones); (None, all-false) when none."""
        if kind == col_type and kind != "timestamp":
            return values.cast(target), None
        if kind == "bigint" and col_type == "double":
            return values.cast(target, safe=False), None
        if kind == "bigint" and col_type == "text":
            return values.cast(target), None
        if kind == "double" and col_type == "bigint":
            if pc.max(pc.abs(values)).as_py() >= _MAX_EXACT_INT:  # the JSON integer may not be this double
                raise Unsupported("large integers read as doubles")
            exact = pc.fill_null(pc.equal(pc.floor(values), values), False)
            return pc.if_else(exact, values, pa.scalar(None, values.type)).cast(target), exact
        if kind == "text" and col_type == "timestamp":
            iso = pc.fill_null(pc.match_substring_regex(values, _ISO_UTC), False)
            try:
                return pc.if_else(iso, values, pa.scalar(None, pa.string())).cast(target), iso
            except pa.ArrowInvalid:  # an impossible date: value by value
                pass
        return None, pa.array(np.zeros(len(values), bool))

    def _one_by_one(
        self, part: Part, name: str, values: pa.Array, rows: np.ndarray
    ) -> dict[str, tuple[pa.Array, pa.Array]]:
        """Values at `rows` through the frozen coercer: target -> (values, mask of the rows it got)."""
        coerce = self.frozen.coerce_row
        parent = part.parent.name if part.parent is not None else None
        buckets: dict[str, tuple[list[int], list[Any]]] = {}
        for row, value in zip(rows.tolist(), values.take(pa.array(rows)).to_pylist(), strict=True):
            try:
                out = coerce(part.name, parent, {name: value})
            except SchemaFrozenError:  # the column or variant appears here first: the replay must see it
                self.needs.add(int(part.rec[row]))
                continue
            except (SchemaError, ValueError, TypeError) as exc:
                raise Unsupported(str(exc)) from exc
            for target, new in out.items():
                positions, items = buckets.setdefault(target, ([], []))
                positions.append(row)
                items.append(new)
        result: dict[str, tuple[pa.Array, pa.Array]] = {}
        count = len(values)
        for target, (positions, items) in buckets.items():
            full: list[Any] = [None] * count
            mask = np.zeros(count, bool)
            for row, value in zip(positions, items, strict=True):
                full[row] = value
            mask[positions] = True
            result[target] = (pa.array(full, self._type(part.name, target)), pa.array(mask))
        return result

"""The Arrow schema of an Iceberg table's data files, from lakeload's table schema, and its field ids.

Executors write each data file with the table's exact column names, its Iceberg field ids (`PARQUET:field_id`)
and types Iceberg stores: microsecond timestamps (UTC when the column has a zone; never INT96 or nanoseconds),
microsecond times; unsigned integers as signed ones, 256-bit decimals as text (Iceberg's decimals stop at
precision 38), fixed-size binaries as binaries.

>>> import pyarrow as pa
>>> iceberg_schema(pa.schema([("at", pa.timestamp("ns", tz="Europe/Berlin")), ("n", pa.uint32())]))
at: timestamp[us, tz=UTC]
n: int64
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from pyiceberg.schema import Schema as IcebergSchema

FIELD_ID = b"PARQUET:field_id"


def iceberg_type(arrow_type: pa.DataType) -> pa.DataType:
    """The Arrow type Iceberg stores for `arrow_type`."""
    if pa.types.is_timestamp(arrow_type):
        return pa.timestamp("us", tz="UTC" if arrow_type.tz else None)
    if pa.types.is_time(arrow_type):
        return pa.time64("us")
    if pa.types.is_unsigned_integer(arrow_type):
        return pa.int64() if arrow_type.bit_width >= 32 else pa.int32()
    if pa.types.is_int8(arrow_type) or pa.types.is_int16(arrow_type):
        return pa.int32()
    if pa.types.is_decimal256(arrow_type) or pa.types.is_null(arrow_type):
        return pa.string()
    if pa.types.is_decimal128(arrow_type) and arrow_type.precision > 38:
        return pa.string()
    if pa.types.is_fixed_size_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return pa.binary()
    if pa.types.is_large_string(arrow_type):
        return pa.string()
    if pa.types.is_float16(arrow_type):
        return pa.float32()
    return arrow_type


def iceberg_schema(schema: pa.Schema) -> pa.Schema:
    """`schema` with every type one Iceberg stores; all columns nullable (schema evolution adds optional ones)."""
    return pa.schema([pa.field(f.name, iceberg_type(f.type), nullable=True) for f in schema])


def with_field_ids(schema: pa.Schema, table_schema: IcebergSchema) -> pa.Schema:
    """`schema` whose fields carry the Iceberg table's field ids (by name), as the data files store them."""
    fields = []
    for f in schema:
        field_id = table_schema.find_field(f.name).field_id
        fields.append(f.with_metadata({FIELD_ID: str(field_id).encode()}))
    return pa.schema(fields)

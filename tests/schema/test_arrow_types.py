"""The dlt column an Arrow field makes (`data_type_of`), checked against dlt 1.31's own mapping, and the
`x-nested-type` text that keeps a nested field's Arrow type, byte for byte as dlt stores it."""

from __future__ import annotations

import pyarrow as pa
import pytest
from dlt.common.libs.pyarrow import deserialize_type, get_column_type_from_py_arrow

from lakeload.kernel.normalize.writers import arrow_schema
from lakeload.schema.arrow_types import data_type_of, nested_type

FIELD_TYPES = [
    pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint64(), pa.float32(), pa.float64(), pa.bool_(),
    pa.string(), pa.large_string(), pa.binary(), pa.large_binary(), pa.binary(16), pa.date32(), pa.date64(),
    pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns"), pa.timestamp("s"), pa.timestamp("ms", "UTC"),
    pa.timestamp("us", "Europe/Berlin"), pa.timestamp("ns"), pa.decimal128(10, 2), pa.decimal256(50, 5),
    pa.dictionary(pa.int32(), pa.string()), pa.struct([("x", pa.int64()), ("y", pa.list_(pa.string()))]),
    pa.list_(pa.int64()), pa.large_list(pa.float64()), pa.list_(pa.int32(), 3), pa.map_(pa.string(), pa.int64()),
]


@pytest.mark.parametrize("arrow_type", FIELD_TYPES, ids=str)
def test_arrow_field_types_make_dlts_columns(arrow_type: pa.DataType) -> None:
    assert data_type_of(arrow_type) == get_column_type_from_py_arrow(arrow_type)


def test_null_fields_make_no_column() -> None:
    assert data_type_of(pa.null()) is None and get_column_type_from_py_arrow(pa.null()) == {}


def test_nested_json_columns_keep_their_arrow_type() -> None:
    struct = pa.struct([("x", pa.int64()), ("tags", pa.list_(pa.string()))])
    hints = data_type_of(struct)
    assert hints is not None and deserialize_type(hints["x-nested-type"]) == nested_type(hints["x-nested-type"]) == struct
    schema = arrow_schema({"s": {"name": "s", **hints}, "j": {"name": "j", "data_type": "json"}})
    assert schema.field("s").type == struct and schema.field("j").type == pa.string()  # plain json stays text

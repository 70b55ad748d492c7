"""dlt column types of Spark leaf types, and the Spark expressions that produce their values.

Example (a column expression needs a Spark session)::

    from pyspark.sql import functions as F
    from pyspark.sql import types as T
    leaf_column(T.IntegerType(), F.col("age"))[0]   # {'data_type': 'bigint', 'precision': 32}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeload.schema.typing import TColumnSchema

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.types import DataType

# (column type, value type) pairs where a DataFrame's values fill an existing column (dlt coerces
# such values too); any other type difference makes a variant column
WIDENING = frozenset(
    {
        ("double", "bigint"),
        ("decimal", "bigint"),
        ("timestamp", "date"),
        ("text", "bigint"),
        ("text", "double"),
        ("text", "bool"),
        ("text", "decimal"),
    }
)
_INT_BITS = {"ByteType": 8, "ShortType": 16, "IntegerType": 32}


def widen(column_type: str, expr: Column) -> Column:
    """The value expression for a WIDENING pair (text is rendered by Spark, numbers cast in Arrow)."""
    return expr.cast("string") if column_type == "text" else expr


def _scalar(data_type: DataType) -> TColumnSchema | None:
    from pyspark.sql import types as T

    simple: list[tuple[type, TColumnSchema]] = [
        (T.BooleanType, {"data_type": "bool"}),
        (T.LongType, {"data_type": "bigint"}),
        (T.FloatType, {"data_type": "double"}),
        (T.DoubleType, {"data_type": "double"}),
        (T.StringType, {"data_type": "text"}),
        (T.BinaryType, {"data_type": "binary"}),
        (T.DateType, {"data_type": "date"}),
        (T.TimestampNTZType, {"data_type": "timestamp", "timezone": False}),
        (T.TimestampType, {"data_type": "timestamp"}),
    ]
    for spark_type, props in simple:
        if isinstance(data_type, spark_type):
            return TColumnSchema(**props)
    name = type(data_type).__name__
    if name in _INT_BITS:
        return {"data_type": "bigint", "precision": _INT_BITS[name]}
    if isinstance(data_type, T.DecimalType):
        return {"data_type": "decimal", "precision": data_type.precision, "scale": data_type.scale}
    return None


def leaf_column(data_type: DataType, expr: Column) -> tuple[TColumnSchema, Column] | None:
    """dlt column properties and value expression of a leaf; None for `NullType` (no column).

    Structs, arrays, maps and variants that stay whole (nesting limit, `json` hints) are `json`
    (Spark's `to_json`); types dlt has no name for (intervals, ...) are text.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(data_type, T.NullType):
        return None
    props = _scalar(data_type)
    if props is not None:
        return props, expr
    if isinstance(data_type, (T.StructType, T.ArrayType, T.MapType, T.VariantType)):
        return {"data_type": "json"}, F.to_json(expr)
    return {"data_type": "text"}, expr.cast("string")

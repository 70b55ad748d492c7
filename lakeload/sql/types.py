"""DuckDB and Spark types for lakeload (dlt) column types, as dlt's DuckDB type mapper maps them.

>>> duckdb_type({"name": "ts", "data_type": "timestamp"})
'TIMESTAMP WITH TIME ZONE'
>>> duckdb_type({"name": "amount", "data_type": "decimal", "precision": 10, "scale": 2})
'DECIMAL(10,2)'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeload.schema.typing import TColumn

if TYPE_CHECKING:
    from pyspark.sql.types import DataType as SparkDataType

DEFAULT_DECIMAL = (38, 9)
WEI_DUCKDB = "DECIMAL(38,0)"
_SIMPLE = {
    "text": "VARCHAR",
    "double": "DOUBLE",
    "bool": "BOOLEAN",
    "date": "DATE",
    "time": "TIME",
    "json": "JSON",
    "binary": "BLOB",
}


def _integer(precision: int | None) -> str:
    if precision is None:
        return "BIGINT"
    for bits, name in ((8, "TINYINT"), (16, "SMALLINT"), (32, "INTEGER"), (64, "BIGINT")):
        if precision <= bits:
            return name
    return "HUGEINT"


def _timestamp(column: TColumn) -> str:
    if column.get("timezone", True):
        return "TIMESTAMP WITH TIME ZONE"  # DuckDB has no precision for TIMESTAMPTZ
    precision = column.get("precision")
    if precision is None:
        return "TIMESTAMP"
    if precision == 0:
        return "TIMESTAMP_S"
    return "TIMESTAMP_MS" if precision <= 3 else "TIMESTAMP" if precision <= 6 else "TIMESTAMP_NS"


def _decimal(column: TColumn) -> str:
    precision, scale = column.get("precision"), column.get("scale")
    if precision is None:
        precision, scale = DEFAULT_DECIMAL
    precision = min(int(precision), 38)
    scale = min(int(scale or 0), precision)
    return f"DECIMAL({precision},{scale})"


def duckdb_type(column: TColumn) -> str:
    """The DuckDB type of a schema column (`wei` -> `DECIMAL(38,0)`, `bigint` by precision in bits).

    >>> duckdb_type({"name": "n", "data_type": "bigint", "precision": 32})
    'INTEGER'
    """
    data_type = column.get("data_type")
    if data_type in _SIMPLE:
        return _SIMPLE[data_type]
    if data_type == "bigint":
        return _integer(column.get("precision"))
    if data_type == "timestamp":
        return _timestamp(column)
    if data_type == "decimal":
        return _decimal(column)
    if data_type == "wei":
        return WEI_DUCKDB
    return "VARCHAR"  # unknown types are read as text rather than failing the view


def spark_type(column: TColumn) -> SparkDataType:
    """The Spark type of a schema column; `time` and `json` are strings, `wei` is DECIMAL(38,0).

    >>> spark_type({"name": "ts", "data_type": "timestamp"}).simpleString()
    'timestamp'
    """
    from pyspark.sql import types as T

    data_type = column.get("data_type")
    if data_type == "bigint":
        return T.LongType()
    if data_type == "double":
        return T.DoubleType()
    if data_type == "bool":
        return T.BooleanType()
    if data_type == "timestamp":
        return T.TimestampType() if column.get("timezone", True) else T.TimestampNTZType()
    if data_type == "date":
        return T.DateType()
    if data_type == "binary":
        return T.BinaryType()
    if data_type == "decimal":
        precision, scale = column.get("precision"), column.get("scale")
        if precision is None:
            precision, scale = DEFAULT_DECIMAL
        precision = min(int(precision), 38)
        return T.DecimalType(precision, min(int(scale or 0), precision))
    if data_type == "wei":
        return T.DecimalType(38, 0)
    return T.StringType()  # text, json, time and anything unknown

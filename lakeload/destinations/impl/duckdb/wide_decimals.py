"""Parquet decimals wider than DuckDB's, read exactly.

lakeload's Parquet files hold `wei` columns (and decimals hinted wider than 38 digits) as Arrow `decimal256`, which
DuckDB's Parquet reader turns into DOUBLE: `10**37` would land as `9999999999999999538762658202121142272`. The
columns of a DuckDB table hold at most 38 digits (`DECIMAL(38, s)`, dlt's `wei` there), so such files are read
through Arrow instead, each wide column cast to `decimal128(38, s)` as Arrow scans it (registered with the
connection: Arrow's C++ casts, DuckDB reads the batches; no row passes through Python). A value over 38 digits
stops the load with DuckDB's "does not fit in precision 38", named by the loader, as dlt's Parquet writer stops
on it.

>>> wide_columns_sql(["/p/a.parquet"])
"SELECT DISTINCT name FROM parquet_schema(['/p/a.parquet']) WHERE logical_type LIKE 'DecimalType%' AND precision > 38"
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING

from lakeload.destinations.impl.duckdb.sql import complete_columns, ident, literal
from lakeload.errors import DecimalOutOfRangeError, DestinationError

if TYPE_CHECKING:
    import duckdb

    from lakeload.schema.typing import TTable

MAX_DIGITS = 38
_NAMES = itertools.count(1)
# registered name -> (its connection, table, the wide columns); entries live while `wide_decimal_errors` runs
REGISTERED: dict[str, tuple[duckdb.DuckDBPyConnection, str, list[str]]] = {}


def wide_columns_sql(paths: list[str]) -> str:
    """The query of the top-level columns the files hold as decimals wider than DuckDB's."""
    files = ", ".join(literal(p) for p in paths)
    return (f"SELECT DISTINCT name FROM parquet_schema([{files}]) "
            f"WHERE logical_type LIKE 'DecimalType%' AND precision > {MAX_DIGITS}")


def wide_columns(connection: duckdb.DuckDBPyConnection, paths: list[str], table: TTable) -> list[str]:
    """The columns of `table` that the Parquet files `paths` hold wider than DuckDB's decimals."""
    if not paths:
        return []
    found = {str(row[0]) for row in connection.execute(wide_columns_sql(paths)).fetchall()}
    return [c["name"] for c in complete_columns(table) if c["name"] in found]


def arrow_source(connection: duckdb.DuckDBPyConnection, paths: list[str], table: TTable, wide: list[str]) -> str:
    """The files as an Arrow dataset registered with `connection`, the `wide` columns cast to `decimal128(38, s)`;
    returns the name to select from."""
    import pyarrow as pa
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq

    remote = [p for p in paths if "://" in p]
    if remote:
        raise DestinationError(
            f"Table '{table['name']}': the columns {wide} hold decimals wider than DuckDB's 38 digits in the staged "
            f"files {remote[:2]}, which DuckDB would read as DOUBLE (losing digits). Fix: load without staging= (the "
            "files are then read exactly), or with loader_file_format='jsonl'; then run again (the package is pending)."
        )
    columns = table["columns"]
    unified = pa.unify_schemas([pq.read_schema(p) for p in paths])
    fields = [
        pa.field(f.name, pa.decimal128(MAX_DIGITS, int(columns.get(f.name, {}).get("scale") or 0)), f.nullable)
        if f.name in wide else f
        for f in unified
    ]
    name = f"__lakeload_wide_{next(_NAMES)}"
    REGISTERED[name] = (connection, table["name"], wide)
    connection.register(name, pads.dataset(paths, schema=pa.schema(fields), format="parquet"))
    return ident(name)


@contextlib.contextmanager
def wide_decimal_errors() -> Iterator[None]:
    """A wide value that does not fit DuckDB's 38 digits, met while DuckDB reads a registered Arrow source, as a
    `DecimalOutOfRangeError` naming the table and its wide columns; the sources registered inside the block are
    unregistered after it (a connection the user gave keeps none of them)."""
    import duckdb

    before = set(REGISTERED)
    try:
        yield
    except duckdb.InvalidInputException as exc:
        found = next((seen for name, seen in REGISTERED.items() if f"'{name}'" in str(exc)), None)
        if found is None or "does not fit in precision" not in str(exc):
            raise
        _, table, columns = found
        raise DecimalOutOfRangeError(table, ", ".join(columns), f"DECIMAL({MAX_DIGITS}, s) of DuckDB") from None
    finally:
        for name in set(REGISTERED) - before:
            connection = REGISTERED.pop(name)[0]
            with contextlib.suppress(duckdb.Error):  # (a connection closed or rolled back already)
                connection.unregister(name)

"""Reading a dataset of a DuckDB database (dlt's or lakeload's DuckDB destination) into the conformance harness's
``CanonicalDataset``, so that ``canonicalize``/``diff`` compare a DuckDB load exactly as they compare a bucket.

* tables, parent links and column types in dlt's type names come from the newest schema in the dataset's
  ``_dlt_version`` table (both tools store their schema there);
* rows are read from the tables with DuckDB's Python client and typed by the harness's rules (``typed_row``);
  JSON columns arrive as JSON text, timestamps as datetimes, decimals as ``Decimal``;
* ``_dlt_loads`` gives the loads;
* a table of the dataset that is not a table of the schema (but dlt's ``_dlt*`` tables) is a problem.

DuckDB's own column types are a separate check (``duckdb_column_types``): they must be equal between the two
databases, as lists of ``(column, data_type, is_nullable)`` in column order, per table.

>>> expected = canonicalize(read_duckdb(tmp / "dlt.duckdb"))
>>> assert duckdb_column_types(tmp / "dlt.duckdb") == duckdb_column_types(tmp / "ll.duckdb")
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
from harness import DATASET, CanonicalDataset, schema_tables, typed_row

ColumnTypes = dict[str, list[tuple[str, str, str]]]


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _dicts(connection: duckdb.DuckDBPyConnection, sql: str, parameters: list[Any] | None = None) -> list[dict[str, Any]]:
    cursor = connection.execute(sql, parameters or [])
    names = [d[0] for d in cursor.description or []]
    return [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]


def _newest_schema(connection: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, Any]:
    row = connection.execute(
        f"SELECT schema FROM {_quoted(dataset)}._dlt_version ORDER BY inserted_at DESC, version DESC LIMIT 1"
    ).fetchone()
    if row is None:
        raise FileNotFoundError(f"no schema in {dataset}._dlt_version")
    schema = row[0]
    return json.loads(schema) if isinstance(schema, str) else dict(schema)


def _dataset_tables(connection: duckdb.DuckDBPyConnection, dataset: str) -> list[str]:
    rows = connection.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name", [dataset]
    ).fetchall()
    return [str(r[0]) for r in rows]


def read_duckdb(db_path: str | Path, dataset: str = DATASET) -> CanonicalDataset:
    """Read ``dataset`` (a DuckDB schema) of the database file ``db_path``. Example: ``read_duckdb(tmp / "x.duckdb")``."""
    with duckdb.connect(str(db_path), read_only=True) as connection:
        connection.execute("SET TimeZone = 'UTC'")
        present = _dataset_tables(connection, dataset)
        if "_dlt_version" not in present:
            raise FileNotFoundError(f"no dataset {dataset!r} with a _dlt_version table in {db_path}")
        schema = _newest_schema(connection, dataset)
        loads = _dicts(connection, f"SELECT * FROM {_quoted(dataset)}._dlt_loads") if "_dlt_loads" in present else []
        tables = schema_tables(schema)
        problems = [f"database table {name!r} is not a data table of the schema"
                    for name in present if not name.startswith("_dlt") and name not in tables]
        for table in tables.values():
            if table.name not in present:
                continue
            raw_rows = _dicts(connection, f"SELECT * FROM {_quoted(dataset)}.{_quoted(table.name)}")
            table.rows = [typed_row(raw, table, "duckdb", f"table {dataset}.{table.name}", problems) for raw in raw_rows]
    return CanonicalDataset(schema=schema, tables=tables, loads=loads, problems=problems)


def duckdb_column_types(db_path: str | Path, dataset: str = DATASET) -> ColumnTypes:
    """DuckDB's own types of every table of ``dataset`` (``_dlt*`` tables too): per table, ``(column, data_type,
    is_nullable)`` in column order, from ``information_schema.columns``."""
    with duckdb.connect(str(db_path), read_only=True) as connection:
        rows = connection.execute(
            "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
            "WHERE table_schema = ? ORDER BY table_name, ordinal_position", [dataset]
        ).fetchall()
    found: ColumnTypes = {}
    for table, column, data_type, nullable in rows:
        found.setdefault(str(table), []).append((str(column), str(data_type), str(nullable)))
    return found


def diff_column_types(expected: ColumnTypes, actual: ColumnTypes) -> list[str]:
    """Readable differences between two ``duckdb_column_types`` results; ``[]`` when equal."""
    out = [f"missing database table {name!r}" for name in expected if name not in actual]
    out += [f"extra database table {name!r}" for name in actual if name not in expected]
    for name in (n for n in expected if n in actual):
        if expected[name] != actual[name]:
            out.append(f"database table {name!r}: columns {actual[name]}, expected {expected[name]}")
    return out

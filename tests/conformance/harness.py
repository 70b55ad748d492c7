"""Conformance harness: load a case with dlt 1.31 and with lakeload, read both buckets, compare.

A *case* is a JSON file ``{"table_name": str, "runs": [[record, ...], ...]}`` in ``cases/shared/``
(the cases the project was specified with) or ``cases/local/`` (our own). Each run is one
``pipeline.run(records, table_name=...)`` on the same pipeline, in order. Our own cases may add
``"comment"`` (free text) and ``"known_divergence"`` (a reason string: the conformance test is then
marked xfail, because we decided not to copy dlt).

What "the same" means. Both loads go to a local filesystem bucket and are read back; they match when

* they hold the same data tables, with the same parent/child relations between them;
* each table has the same columns, in the same order, with the same data types in dlt's type names
  (``text``, ``bigint``, ``double``, ``bool``, ``timestamp``, ``date``, ``time``, ``decimal``,
  ``json``, ``binary``, ...);
* each table holds the same rows, compared as multisets. The values of ``_dlt_id``,
  ``_dlt_parent_id``, ``_dlt_root_id`` and ``_dlt_load_id`` are random, so they are not compared
  as such; instead every child row must hang under the parent row that held it, at the same
  ``_dlt_list_idx``.

The cases show the kind of input checked, not a list of answers to match: the rules must hold for
any case like them. Where dlt's behaviour looks like a bug (data lost silently, a surprising
coercion), a case pins it with a comment or declares a ``known_divergence``, so that copying a bug
is always a decision, never an accident.

API::

    case = load_case(path)                       # dict, with "name" set from the file stem
    run_dlt(case, bucket_dir, pipelines_dir)     # dlt 1.31, in-process, isolated config
    run_lakeload(case, bucket_dir, pipelines_dir)
    expected = canonicalize(read_bucket(dlt_bucket))
    actual = canonicalize(read_bucket(lakeload_bucket))
    assert diff(expected, actual) == []
    run_dlt(case, db_file, pipelines_dir, destination="duckdb")   # into a DuckDB database file instead;
    read_duckdb(db_file)                         # duckdb_reader.py reads it into the same CanonicalDataset

dlt 1.31 behaviour observed while writing the cases, that looks like a bug or is surprising.
The conformance cases pin these behaviours unless a case says ``known_divergence``:

* Silent data loss on name collisions: keys that normalize to the same column name keep only one
  value, no warning. Same-level keys: the last key wins (``{"a b": 1, "a_b": 2, "A_B": 3}`` gives
  ``a_b = 3``; with different types, ``{"a b": 1, "a_b": "s"}`` gives text ``a_b = "s"`` and no
  variant column). A flattened nested key beats a literal top-level key whatever the input order:
  ``{"nest": {"a b": 1}, "nest__a_b": 2}`` gives ``nest__a_b = 1``.
* Non-ASCII letters each become ``_`` and runs of ``_`` collapse, so whole-unicode keys collide:
  ``"ключ"`` and ``"日本語"`` both become ``x`` (a trailing ``_`` is replaced by ``x``) and one value is
  lost. ``"Straße": {"größe": 2}`` -> ``stra_e__gr_e``; ``"emoji😀"`` -> ``emojix``;
  table ``"Ünïcödé Tablé"`` -> ``_n_c_d_tablx``.
* Keys ``""``, ``" "``, ``"_"``, ``"__"`` give columns ``_empty`` (both ``""`` and ``" "``, so one
  value is lost), ``x`` and ``""`` (a column with an EMPTY name). Not turned into a case.
* Surprising coercions into an existing ``bool`` column: ``5``, ``2``, ``1.5``, ``"yes"``,
  ``"1"``, ``"TRUE"`` become ``true``; ``0``, ``"no"``, ``"0"``, ``"false"`` become ``false``
  (no variant column, the original value is lost). The reverse is NOT symmetric: ``False`` into a
  ``bigint`` column makes a variant ``i__v_bool``. A numeric string into ``bigint`` is coerced
  (``"7"`` -> ``7``, ``"3"`` -> ``3``), and an integral float into ``bigint`` is coerced
  (``0.0`` -> ``0``) while ``2.5`` makes ``score__v_double``. An int into ``double`` becomes a
  float (``2`` -> ``2.0``). A non-boolean string such as ``"x"`` into ``bool`` makes ``b__v_text``.
  An int into an existing ``text`` column becomes a string (``5`` -> ``"5"``), no variant.
* Integers: ``2**63 .. 2**64-1`` are accepted and written into a ``bigint`` column in jsonl even
  though they overflow int64 (any int64 reader fails or wraps); ``2**64`` or ``-2**63-1`` makes
  extract fail with ``TypeError: Integer exceeds 64-bit range`` (orjson).
* Timestamps: ISO strings with any offset are converted to UTC; naive ones
  (``"2024-05-02 11:30:00"``) are taken as UTC; a date-only string is ``text`` when it first
  creates the column but is coerced to midnight UTC when the column is already ``timestamp``.
  ``"10:00:00"`` and ``"2024-05-01"`` alone stay ``text`` (only ``iso_timestamp`` detection is on).
* Columns whose values are all ``null`` are not created (a warning only). A list of only
  ``None`` makes a child table with only ``_dlt_*`` columns; ``None`` and ``{}`` items in a list
  still make child rows (with only ``_dlt_*`` values), an empty dict makes no column at all.
* Column order is first-seen order, but the columns of a nested dict come after the scalar
  columns of the dict that holds it, and columns first seen in a later row come after
  ``_dlt_load_id``/``_dlt_id`` (which are added with the first row).
* csv files (``loader_file_format="csv"``) write ``null`` and ``""`` the same way (``""``), so an
  empty string cannot be told from a null when reading csv; parquet and jsonl keep them apart.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import datetime as dt
import decimal
import gzip
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATASET = "ds"
ID_COLUMNS = frozenset({"_dlt_id", "_dlt_parent_id", "_dlt_root_id", "_dlt_load_id"})
LIST_IDX = "_dlt_list_idx"
# column hints compared besides name/order/data_type; value is the default dropped from the canonical form
COMPARED_HINTS: dict[str, Any] = {
    "nullable": True,
    "primary_key": False,
    "merge_key": False,
    "unique": False,
    "row_key": False,
    "parent_key": False,
    "root_key": False,
    "variant": False,
    "partition": False,
    "cluster": False,
    "sort": False,
    "precision": None,
    "scale": None,
    "timezone": None,
}
# environment variables kept when dlt runs; everything else (e.g. DESTINATION__FILESYSTEM__BUCKET_URL,
# DATA_WRITER__*, NORMALIZE__*, bare BUCKET_URL/LAYOUT) is hidden from dlt's config resolution
_ENV_KEEP = frozenset({"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TMPDIR", "TEMP", "TMP", "TZ",
                       "SYSTEMROOT", "VIRTUAL_ENV"})
MAX_EXAMPLES = 3
_EXACT = decimal.Context(prec=200)  # wei and decimals compared digit for digit


# ---------------------------------------------------------------------------------------------- cases


def load_case(path: str | Path) -> dict[str, Any]:
    """Read one case file; ``name`` defaults to the file stem. Example: ``load_case("cases/local/01_x.json")``."""
    path = Path(path)
    case: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(case.get("table_name"), str) or not isinstance(case.get("runs"), list):
        raise ValueError(f"{path}: a case needs 'table_name' (str) and 'runs' (list of lists)")
    case.setdefault("name", path.stem)
    return case


def case_pipeline_name(case: dict[str, Any]) -> str:
    """Pipeline (and so schema) name used for both loaders: ``cf_<case name in snake case>``."""
    return "cf_" + re.sub(r"[^a-z0-9_]+", "_", str(case.get("name", "case")).lower())


def case_runs(case: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Fresh deep copies of the runs, so neither loader can see records the other mutated."""
    return copy.deepcopy(case["runs"])


# ------------------------------------------------------------------------------------------- loaders


@contextlib.contextmanager
def isolated_dlt_config(home: Path) -> Iterator[None]:
    """Run dlt with an environment and run context that see no outer config.

    Hides all environment variables but a few OS ones, points dlt's project dir (``.dlt/*.toml``)
    and global dir at the empty ``home`` and turns telemetry off. Restores the environment and the
    outer run context on exit (config providers read the environment at lookup time).
    """
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext
    from dlt.common.runtime.run_context import RunContext

    home.mkdir(parents=True, exist_ok=True)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update({k: v for k, v in saved.items() if k in _ENV_KEEP or k.startswith("LC_")})
    os.environ.update({
        "DLT_PROJECT_DIR": str(home),
        "DLT_DATA_DIR": str(home / "data"),
        "RUNTIME__DLTHUB_TELEMETRY": "false",
    })
    run_context = RunContext(str(home))
    run_context._global_dir = str(home / "global")
    pluggable = Container()[PluggableRunContext]
    cookie = pluggable.push_context()
    try:
        pluggable.reload(run_context)
        yield
    finally:
        # pop while still isolated: re-initializing the outer runtime under the outer environment
        # would turn telemetry back on and write an anonymous id into dlt's global dir (/var/dlt)
        pluggable.pop_context(cookie)
        os.environ.clear()
        os.environ.update(saved)


def _destination(lib: Any, destination: str, target: Path) -> Any:
    """``lib``'s (dlt's or lakeload's) destination: a local bucket folder, or a DuckDB database file."""
    if destination == "duckdb":
        return lib.destinations.duckdb(credentials=str(target))
    if destination != "filesystem":
        raise ValueError(f"the harness loads to 'filesystem' or 'duckdb', not {destination!r}")
    return lib.destinations.filesystem("file://" + str(target)) if lib.__name__ == "dlt" \
        else lib.destinations.filesystem(bucket_url=str(target))


def run_dlt(case: dict[str, Any], bucket_dir: str | Path, pipelines_dir: str | Path,
            loader_file_format: str | None = None, destination: str = "filesystem") -> None:
    """Load ``case`` with dlt 1.31 into a local bucket, or with ``destination="duckdb"`` into the database file
    ``bucket_dir``. Example: ``run_dlt(case, tmp / "b", tmp / "p")``."""
    import dlt

    target = Path(bucket_dir).resolve()
    pipelines = Path(pipelines_dir).resolve()
    with isolated_dlt_config(pipelines / "_dlt_home"):
        pipeline = dlt.pipeline(
            pipeline_name=case_pipeline_name(case),
            destination=_destination(dlt, destination, target),
            dataset_name=DATASET,
            pipelines_dir=str(pipelines),
        )
        for records in case_runs(case):
            if loader_file_format is None:
                pipeline.run(records, table_name=case["table_name"])
            else:
                pipeline.run(records, table_name=case["table_name"], loader_file_format=loader_file_format)


def run_lakeload(case: dict[str, Any], bucket_dir: str | Path, pipelines_dir: str | Path,
                 loader_file_format: str | None = None, destination: str = "filesystem") -> None:
    """Load ``case`` with lakeload's public API, the same way ``run_dlt`` does with dlt."""
    import lakeload

    pipeline = lakeload.pipeline(
        pipeline_name=case_pipeline_name(case),
        destination=_destination(lakeload, destination, Path(bucket_dir).resolve()),
        dataset_name=DATASET,
        pipelines_dir=str(Path(pipelines_dir).resolve()),
    )
    for records in case_runs(case):
        pipeline.run(records, table_name=case["table_name"], loader_file_format=loader_file_format)


# ------------------------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class BadValue:
    """A stored value that does not fit its column's data type (never equal to a good value)."""

    data_type: str
    raw: str


@dataclass
class TableData:
    name: str
    parent: str | None
    columns: dict[str, dict[str, Any]]  # complete columns (with data_type), in schema order
    table_hints: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)  # typed values, null = None


@dataclass
class CanonicalDataset:
    """What ``read_bucket`` found: the newest schema, typed data rows, ``_dlt_loads`` records."""

    schema: dict[str, Any]
    tables: dict[str, TableData]
    loads: list[dict[str, Any]]
    problems: list[str] = field(default_factory=list)


def _read_jsonl_lines(path: Path) -> list[Any]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _newest_schema(version_dir: Path) -> dict[str, Any]:
    files = sorted(version_dir.glob("*.jsonl")) + sorted(version_dir.glob("*.jsonl.gz"))
    if not files:
        raise FileNotFoundError(f"no schema files in {version_dir}")
    versions = [rec for f in files for rec in _read_jsonl_lines(f)]

    def newest_first(rec: dict[str, Any]) -> tuple[dt.datetime, int]:
        inserted = dt.datetime.fromisoformat(str(rec["inserted_at"]))
        if inserted.tzinfo is None:
            inserted = inserted.replace(tzinfo=dt.timezone.utc)
        return inserted, int(rec.get("version", 0))

    schema = max(versions, key=newest_first)["schema"]
    return json.loads(schema) if isinstance(schema, str) else schema


_ARROW_TYPE_PREFIX = {
    "text": ("string", "large_string"),
    "bigint": ("int64",),
    "double": ("double",),
    "bool": ("bool",),
    "timestamp": ("timestamp[",),
    "date": ("date32",),
    "time": ("time64",),
    "decimal": ("decimal",),
    "wei": ("decimal",),
    "json": ("string", "large_string"),
    "binary": ("binary", "large_binary"),
}

# what dlt writes for columns of Arrow items (the Arrow type kept): a `json` column with `x-nested-type` holds the
# nested Arrow type, a `bigint` with a precision a narrower integer
_NESTED_ARROW_PREFIX = ("struct<", "list<", "large_list<", "fixed_size_list<", "map<")
_NARROW_INT_PREFIX = {8: ("int8",), 16: ("int16",), 32: ("int32",)}


def arrow_type_prefixes(column: dict[str, Any]) -> tuple[str, ...]:
    """The Arrow type texts a Parquet column may have for the dlt `column` (by prefix)."""
    if column.get("data_type") == "json" and column.get("x-nested-type"):
        return _NESTED_ARROW_PREFIX
    if column.get("data_type") == "bigint" and column.get("precision") in _NARROW_INT_PREFIX:
        return _NARROW_INT_PREFIX[column["precision"]]
    return _ARROW_TYPE_PREFIX.get(column["data_type"], ())


def _read_parquet(path: Path, table: TableData, problems: list[str]) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    arrow_table = pq.read_table(path)
    for arrow_field in arrow_table.schema:
        column = table.columns.get(arrow_field.name)
        prefixes = arrow_type_prefixes(column) if column else ()
        if prefixes and not str(arrow_field.type).startswith(prefixes):
            problems.append(f"{path.name}: parquet column {table.name}.{arrow_field.name} is "
                            f"{arrow_field.type}, schema says {column['data_type']}")
    return arrow_table.to_pylist()


_CSV_ARROW_TYPE = {"bigint": "int64", "double": "float64", "bool": "bool_", "date": "date32"}


def _read_csv(path: Path, table: TableData) -> list[dict[str, Any]]:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    column_types: dict[str, Any] = {}
    for name, column in table.columns.items():
        data_type = column["data_type"]
        if data_type == "timestamp":
            column_types[name] = pa.timestamp("us", tz="UTC")
        elif data_type in _CSV_ARROW_TYPE:
            column_types[name] = getattr(pa, _CSV_ARROW_TYPE[data_type])()
        else:  # text, json, decimal, time, binary: parsed from the string by _coerce
            column_types[name] = pa.string()
    convert = pcsv.ConvertOptions(column_types=column_types, strings_can_be_null=True,
                                  quoted_strings_can_be_null=True)
    return pcsv.read_csv(path, convert_options=convert).to_pylist()


def _read_table_file(path: Path, table: TableData, problems: list[str]) -> tuple[str, list[dict[str, Any]]]:
    name = path.name
    if name.endswith((".jsonl", ".jsonl.gz")):
        return "jsonl", _read_jsonl_lines(path)
    if name.endswith(".parquet"):
        return "parquet", _read_parquet(path, table, problems)
    if name.endswith((".csv", ".csv.gz")):
        return "csv", _read_csv(path, table)
    raise ValueError(f"unsupported table file {path}")


def _to_utc(value: dt.datetime) -> dt.datetime:
    # naive datetimes stay naive: they never compare equal to the aware UTC values dlt stores
    return value.astimezone(dt.timezone.utc) if value.tzinfo is not None else value


def _coerce(raw: Any, data_type: str, file_format: str) -> Any:
    """Turn a stored value into a typed Python value for ``data_type``; BadValue if it does not fit."""
    if raw is None:
        return None
    try:
        if data_type == "text" and isinstance(raw, str):
            return raw
        if data_type == "bigint" and isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        if data_type == "double" and isinstance(raw, int | float) and not isinstance(raw, bool):
            return float(raw)
        if data_type == "bool" and isinstance(raw, bool):
            return raw
        if data_type == "timestamp":
            if isinstance(raw, dt.datetime):
                return _to_utc(raw)
            if isinstance(raw, str):
                return _to_utc(dt.datetime.fromisoformat(raw))
        if data_type == "date":
            if isinstance(raw, dt.date) and not isinstance(raw, dt.datetime):
                return raw
            if isinstance(raw, str):
                return dt.date.fromisoformat(raw)
        if data_type == "time":
            if isinstance(raw, dt.time):
                return raw
            if isinstance(raw, str):
                return dt.time.fromisoformat(raw)
        if data_type in ("decimal", "wei") and isinstance(raw, decimal.Decimal | str | int) \
                and not isinstance(raw, bool):
            return decimal.Decimal(raw).normalize(_EXACT)  # (the default context would round to 28 digits)
        if data_type == "json":
            value = json.loads(raw) if file_format != "jsonl" and isinstance(raw, str) else raw
            return json.dumps(value, sort_keys=True, ensure_ascii=False)
        if data_type == "binary":
            if isinstance(raw, bytes):
                return raw
            if isinstance(raw, str):
                return base64.b64decode(raw, validate=True)
    except (ValueError, TypeError, decimal.InvalidOperation, json.JSONDecodeError):
        pass
    return BadValue(data_type, repr(raw))


def schema_tables(schema: dict[str, Any]) -> dict[str, TableData]:
    """The data tables of a stored schema (no ``_dlt*`` tables), with their complete columns and no rows yet."""
    tables: dict[str, TableData] = {}
    for name, table_schema in schema.get("tables", {}).items():
        if name.startswith("_dlt"):
            continue
        columns = {c: col for c, col in table_schema.get("columns", {}).items() if col.get("data_type")}
        hints = {"write_disposition": table_schema.get("write_disposition")} \
            if not table_schema.get("parent") else {}
        tables[name] = TableData(name, table_schema.get("parent"), columns, hints)
    return tables


def typed_row(raw_row: dict[str, Any], table: TableData, file_format: str, origin: str,
              problems: list[str]) -> dict[str, Any]:
    """One stored row typed by its columns' data types (``_coerce``); what does not fit goes to ``problems``."""
    row: dict[str, Any] = {}
    for column_name, raw in raw_row.items():
        column = table.columns.get(column_name)
        if column is None:
            if raw is not None:
                problems.append(f"{table.name}: {origin} has column {column_name!r} that is not in the schema")
            continue
        value = _coerce(raw, column["data_type"], file_format)
        if isinstance(value, BadValue):
            problems.append(f"{table.name}.{column_name}: stored value {value.raw} does not fit "
                            f"type {value.data_type} ({origin})")
        row[column_name] = value
    return row


def read_bucket(bucket_dir: str | Path, dataset: str = DATASET) -> CanonicalDataset:
    """Read a dlt-format dataset from a local bucket. Example: ``read_bucket(tmp / "bucket")``."""
    dataset_dir = Path(bucket_dir) / dataset
    if not dataset_dir.is_dir():
        raise FileNotFoundError(f"no dataset folder {dataset_dir}")
    schema = _newest_schema(dataset_dir / "_dlt_version")
    problems: list[str] = []
    loads_dir = dataset_dir / "_dlt_loads"
    loads = [rec for f in sorted(loads_dir.glob("*.jsonl*")) for rec in _read_jsonl_lines(f)] \
        if loads_dir.is_dir() else []

    tables = schema_tables(schema)
    for entry in sorted(dataset_dir.iterdir()):
        if entry.name == "init" or entry.name.startswith(("_dlt", "_lakeload_")):  # lakeload's own folders: dlt never lists them
            continue
        if entry.name not in tables:
            problems.append(f"bucket entry {entry.name!r} is not a data table of the schema")
    for table in tables.values():
        table_dir = dataset_dir / table.name
        if not table_dir.is_dir():
            continue
        for path in sorted(table_dir.iterdir()):
            if path.is_dir():
                problems.append(f"{table.name}: unexpected folder {path.name!r} (only plain files are read)")
                continue
            file_format, raw_rows = _read_table_file(path, table, problems)
            table.rows += [typed_row(raw_row, table, file_format, f"file {path.name}", problems) for raw_row in raw_rows]
    return CanonicalDataset(schema=schema, tables=tables, loads=loads, problems=problems)


# ------------------------------------------------------------------------------------ canonical form

# A row key is (table, parent row key or None, _dlt_list_idx or None, values), values being the
# sorted (column, (data_type, value)) pairs of the non-null, non-id columns. _dlt_load_id is kept
# as ("load", n): the rank of the load among the _dlt_loads records.
RowKey = tuple[Any, ...]


def _load_rank(loads: list[dict[str, Any]]) -> dict[str, int]:
    def numeric(load_id: str) -> tuple[float, str]:
        try:
            return float(load_id), load_id
        except ValueError:
            return float("inf"), load_id

    ids = sorted({str(rec.get("load_id")) for rec in loads}, key=numeric)
    return {load_id: rank for rank, load_id in enumerate(ids)}


def _tables_parents_first(tables: dict[str, TableData]) -> list[str]:
    ordered: list[str] = []

    def visit(name: str, trail: tuple[str, ...]) -> None:
        if name in ordered or name in trail:
            return
        parent = tables[name].parent
        if parent in tables:
            visit(parent, trail + (name,))
        ordered.append(name)

    for name in tables:
        visit(name, ())
    return ordered


def _digest(obj: Any) -> str:
    return hashlib.sha256(repr(obj).encode("utf-8")).hexdigest()[:20]


def canonicalize(ds: CanonicalDataset) -> dict[str, Any]:
    """Id-free, comparable form of a dataset (see module docstring). Example: ``canonicalize(read_bucket(b))``."""
    problems = list(ds.problems)
    rank = _load_rank(ds.loads)
    out_tables: dict[str, dict[str, Any]] = {}
    key_by_id: dict[str, dict[str, RowKey]] = {}
    root_by_id: dict[str, dict[str, str]] = {}
    own_by_id: dict[str, dict[str, tuple[Any, ...]]] = {}
    children: dict[tuple[str, str], list[tuple[str, str]]] = {}
    order = _tables_parents_first(ds.tables)

    for name in order:
        table = ds.tables[name]
        if table.parent is not None and table.parent not in ds.tables:
            problems.append(f"{name}: parent table {table.parent!r} is not in the schema")
        keys: dict[str, RowKey] = {}
        roots: dict[str, str] = {}
        owns: dict[str, tuple[Any, ...]] = {}
        rows: Counter[RowKey] = Counter()
        for row in table.rows:
            values = []
            for column_name, value in row.items():
                if value is None or column_name == LIST_IDX or column_name in ID_COLUMNS - {"_dlt_load_id"}:
                    continue
                if column_name == "_dlt_load_id":
                    if value not in rank:
                        problems.append(f"{name}: _dlt_load_id {value!r} is not in _dlt_loads")
                    values.append((column_name, ("load", rank.get(value, f"? {value}"))))
                else:
                    values.append((column_name, (table.columns[column_name]["data_type"], value)))
            values.sort(key=lambda item: item[0])
            list_idx = row.get(LIST_IDX)
            row_id = row.get("_dlt_id")
            parent_key: RowKey | None = None
            root_id = row_id
            if table.parent is not None:
                parent_id = row.get("_dlt_parent_id")
                parent_key = key_by_id.get(table.parent, {}).get(parent_id)  # type: ignore[arg-type]
                if parent_key is None:
                    problems.append(f"{name}: row {row_id!r} points at missing parent row {parent_id!r}")
                    parent_key = ("<orphan>", table.parent)
                else:
                    root_id = root_by_id[table.parent][parent_id]  # type: ignore[index]
                    children.setdefault((table.parent, parent_id), []).append((name, row_id))  # type: ignore[arg-type]
                if list_idx is None:
                    problems.append(f"{name}: row {row_id!r} has no {LIST_IDX}")
            if "_dlt_root_id" in row and row["_dlt_root_id"] != root_id:
                problems.append(f"{name}: row {row_id!r} has _dlt_root_id {row['_dlt_root_id']!r}, "
                                f"its root row is {root_id!r}")
            key: RowKey = (name, parent_key, list_idx, tuple(values))
            rows[key] += 1
            if row_id is None:
                problems.append(f"{name}: a row has no _dlt_id")
                continue
            if row_id in keys:
                problems.append(f"{name}: _dlt_id {row_id!r} is not unique")
            keys[row_id] = key
            roots[row_id] = root_id  # type: ignore[assignment]
            owns[row_id] = (name, list_idx, tuple(values))
        key_by_id[name], root_by_id[name], own_by_id[name] = keys, roots, owns
        columns = [(c, col["data_type"]) for c, col in table.columns.items()]
        hints = {c: {h: col[h] for h, default in COMPARED_HINTS.items() if col.get(h, default) != default}
                 for c, col in table.columns.items()}
        out_tables[name] = {"parent": table.parent, "columns": columns, "hints": hints,
                            "table_hints": table.table_hints, "rows": rows}

    # bottom-up digests of whole record trees: catch children moved between identical parent rows
    digests: dict[tuple[str, str], str] = {}
    for name in reversed(order):
        for row_id, own in own_by_id[name].items():
            child_digests = sorted(digests[child] for child in children.get((name, row_id), []))
            digests[(name, row_id)] = _digest((own, child_digests))
    trees = {name: Counter(digests[(name, row_id)] for row_id in own_by_id[name])
             for name in order if ds.tables[name].parent is None}

    loads = [(rank[str(rec.get("load_id"))], rec.get("schema_name"), rec.get("status"))
             for rec in sorted(ds.loads, key=lambda rec: rank[str(rec.get("load_id"))])]
    return {"tables": out_tables, "trees": trees, "loads": loads, "problems": problems}


# ---------------------------------------------------------------------------------------------- diff


def _fmt_value(value: Any) -> str:
    kind, inner = value
    if kind == "load":
        return f"load#{inner}"
    if isinstance(inner, dt.datetime | dt.date | dt.time):
        return f"{kind}:{inner.isoformat()}"
    return f"{kind}:{inner!r}"


def format_row_key(key: RowKey) -> str:
    """``users{id=bigint:1} > users__pets[1]{name=text:'Spot'}``: a row and the path to its root row."""
    if key[0] == "<orphan>":
        return f"<orphan row of {key[1]}>"
    name, parent_key, list_idx, values = key
    text = name + (f"[{list_idx}]" if list_idx is not None else "")
    text += "{" + ", ".join(f"{c}={_fmt_value(v)}" for c, v in values) + "}"
    return text if parent_key is None else f"{format_row_key(parent_key)} > {text}"


def _diff_columns(name: str, exp: dict[str, Any], act: dict[str, Any]) -> list[str]:
    out: list[str] = []
    exp_types, act_types = dict(exp["columns"]), dict(act["columns"])
    missing = [c for c in exp_types if c not in act_types]
    extra = [c for c in act_types if c not in exp_types]
    if missing:
        out.append(f"table {name}: missing columns {missing}")
    if extra:
        out.append(f"table {name}: extra columns {extra}")
    for column, data_type in exp_types.items():
        if column in act_types and act_types[column] != data_type:
            out.append(f"table {name}: column {column!r} has type {act_types[column]!r}, expected {data_type!r}")
    exp_order = [c for c in exp_types if c in act_types]
    act_order = [c for c in act_types if c in exp_types]
    if exp_order != act_order:
        out.append(f"table {name}: column order {act_order}, expected {exp_order}")
    for column in exp_order:
        if exp["hints"].get(column, {}) != act["hints"].get(column, {}):
            out.append(f"table {name}: column {column!r} hints {act['hints'].get(column, {})}, "
                       f"expected {exp['hints'].get(column, {})}")
    if exp["table_hints"] != act["table_hints"]:
        out.append(f"table {name}: table hints {act['table_hints']}, expected {exp['table_hints']}")
    return out


def _diff_rows(name: str, exp_rows: Counter[RowKey], act_rows: Counter[RowKey]) -> list[str]:
    out: list[str] = []
    for label, left, right in (("missing", exp_rows, act_rows), ("extra", act_rows, exp_rows)):
        surplus = left - right
        if surplus:
            examples = sorted(surplus, key=repr)[:MAX_EXAMPLES]
            shown = "; ".join(f"{format_row_key(k)} x{surplus[k]}" for k in examples)
            out.append(f"table {name}: {sum(surplus.values())} {label} row(s) "
                       f"(expected {sum(exp_rows.values())} rows, got {sum(act_rows.values())}), e.g. {shown}")
    return out


def diff(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Human-readable differences between two ``canonicalize`` results; ``[]`` means the same tables."""
    out = [f"expected side problem: {p}" for p in expected["problems"]]
    out += [f"actual side problem: {p}" for p in actual["problems"]]
    if expected["loads"] != actual["loads"]:
        out.append(f"_dlt_loads (rank, schema_name, status): {actual['loads']}, expected {expected['loads']}")
    exp_tables, act_tables = expected["tables"], actual["tables"]
    missing = sorted(set(exp_tables) - set(act_tables))
    extra = sorted(set(act_tables) - set(exp_tables))
    if missing:
        out.append(f"missing tables {missing}")
    if extra:
        out.append(f"extra tables {extra}")
    row_differences = False
    for name in (t for t in exp_tables if t in act_tables):
        exp, act = exp_tables[name], act_tables[name]
        if exp["parent"] != act["parent"]:
            out.append(f"table {name}: parent {act['parent']!r}, expected {exp['parent']!r}")
        out += _diff_columns(name, exp, act)
        row_diff = _diff_rows(name, exp["rows"], act["rows"])
        row_differences = row_differences or bool(row_diff)
        out += row_diff
    if not row_differences and not missing and not extra:
        for name, exp_trees in expected["trees"].items():
            if exp_trees != actual["trees"].get(name, Counter()):
                out.append(f"table {name}: every table has the same rows, but child rows hang under "
                           "different (identical-looking) parent rows")
    return out

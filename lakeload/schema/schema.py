"""The lakeload schema: tables and columns in dlt's schema format (engine version 11).

The schema is plain JSON-able dicts so it can be shipped to Spark executors, stored in the pipeline
folder and written to `_dlt_version` exactly in the shape dlt users know.
"""

from __future__ import annotations

import base64
import copy
import hashlib
from collections.abc import Iterator
from typing import Any, cast

import orjson

from lakeload.errors import TableNotFoundError
from lakeload.schema.replace import replaces_partitions
from lakeload.schema.system_tables import system_tables
from lakeload.schema.typing import TColumn, TNormalizersConfig, TSchemaSettings, TStoredSchema, TTable

ENGINE_VERSION = 11
DLT_TABLE_PREFIX = "_dlt"


DEFAULT_HINTS: dict[str, list[str]] = {
    "not_null": ["_dlt_id", "_dlt_root_id", "_dlt_parent_id", "_dlt_list_idx", "_dlt_load_id"],
    "parent_key": ["_dlt_parent_id"],
    "root_key": ["_dlt_root_id"],
    "unique": ["_dlt_id"],
    "row_key": ["_dlt_id"],
}


# dlt imports the module named here when it attaches to a bucket (`sync_destination`): it must be dlt's own,
# which lakeload's normalizer reproduces; schemas stored by older lakeload versions named a lakeload module
DLT_JSON_NORMALIZER = "dlt.common.normalizers.json.relational"
OLD_JSON_NORMALIZER = "lakeload.normalize.relational"


def columns_with_hint(table: TTable, hint: str) -> list[str]:
    """Names of the table's columns that carry `hint` (e.g. `primary_key`, `partition`), in schema order.

    >>> columns_with_hint({"columns": {"id": {"primary_key": True}, "v": {}}}, "primary_key")
    ['id']
    """
    return [name for name, column in table["columns"].items() if column.get(hint)]


COMPOUND_HINTS = ("partition", "cluster", "primary_key", "merge_key")
"""Column hints that several columns make together (a compound key, the partition columns): a table's new hints
that set one replace the columns the stored table had it on, as dlt's extract does."""


def drop_replaced_compound_hints(stored: TTable, given: TTable) -> list[str]:
    """Remove from the columns of `stored` each compound hint that a column of `given` sets; returns those hints.
    A hint `given` does not set stays where it was.

    >>> stored = {"name": "t", "columns": {"id": {"name": "id", "primary_key": True, "partition": True}}}
    >>> drop_replaced_compound_hints(stored, {"name": "t", "columns": {"a": {"name": "a", "primary_key": True}}})
    ['primary_key']
    >>> stored["columns"]["id"]
    {'name': 'id', 'partition': True}
    """
    replaced = [hint for hint in COMPOUND_HINTS if any(c.get(hint) for c in given.get("columns", {}).values())]
    for column in stored["columns"].values():
        for hint in replaced:
            cast(dict[str, Any], column).pop(hint, None)
    return replaced


def table_write_disposition(tables: dict[str, TTable], table_name: str) -> str:
    """A table's write disposition: its own, else its nearest ancestor's (dlt's inherited hint; a nested table has
    one of its own when `make_nested_hints(write_disposition=...)` gave it), `append` when none has one.

    >>> tables = {"u": {"name": "u", "columns": {}, "write_disposition": "append"},
    ...           "u__p": {"name": "u__p", "columns": {}, "parent": "u", "write_disposition": "replace"},
    ...           "u__p__q": {"name": "u__p__q", "columns": {}, "parent": "u__p"}}
    >>> table_write_disposition(tables, "u__p__q"), table_write_disposition(tables, "u")
    ('replace', 'append')
    """
    table: dict[str, Any] = cast(dict[str, Any], tables.get(table_name, {}))
    while "write_disposition" not in table and table.get("parent"):
        table = cast(dict[str, Any], tables.get(table["parent"], {}))
    return str(table.get("write_disposition") or "append")


def is_complete_column(column: TColumn) -> bool:
    """A column is complete once it has a data type; hints-only columns wait for data."""
    return bool(column.get("data_type"))


ROOT_KEY_MERGE_STRATEGIES = frozenset({"upsert", "insert-only", "delete-insert", "cdc"})


def requires_root_key(schema: Schema, root: TTable, row_level_merge: bool = False) -> bool:
    """dlt's rule for `_dlt_root_id` in the nested tables of `root`: the source's `root_key` when given, else a
    merge table (or a replace of its loaded partitions) of a format that merges rows in place (`row_level_merge`:
    Delta's, Iceberg's; a merge into plain files is an append and has none); a chain that has it keeps it.

    >>> requires_root_key(Schema("s"), {"name": "users", "write_disposition": "merge", "columns": {}})
    False
    """
    explicit = schema.normalizers.get("json", {}).get("config", {}).get("root_key_propagation")
    if explicit is not None:
        needed = bool(explicit)
    else:
        needed = row_level_merge and (replaces_partitions(root) or (
            root.get("write_disposition") == "merge" and root.get("x-merge-strategy", "upsert") in ROOT_KEY_MERGE_STRATEGIES))
    return needed or any(columns_with_hint(t, "root_key") for t in schema.nested_tables_of(root["name"]))


def set_root_key_propagation(schema: Schema, value: bool) -> bool:
    """Store `root_key` as dlt does (`normalizers.json.config.root_key_propagation`); True when it changed."""
    config = schema.normalizers.setdefault("json", {"module": DLT_JSON_NORMALIZER}).setdefault("config", {})
    changed = config.get("root_key_propagation") != value
    config["root_key_propagation"] = value
    return changed


def set_max_nesting(schema: Schema, value: int | None) -> bool:
    """Store a source's `max_table_nesting` as dlt does (`normalizers.json.config.max_nesting`; None removes it,
    as a source without it gives dlt's pipeline schema its own normalizer config); True when it changed."""
    config = schema.normalizers.setdefault("json", {"module": DLT_JSON_NORMALIZER}).setdefault("config", {})
    changed = config.get("max_nesting") != value
    if value is None:
        config.pop("max_nesting", None)
    else:
        config["max_nesting"] = value
    if not config:
        del schema.normalizers["json"]["config"]
    return changed


def schema_max_nesting(schema: Schema, default: int = 1000) -> int:
    """The nesting limit of tables without their own (`x-normalizer.max_nesting`): the source's, else `default`."""
    value = schema.normalizers.get("json", {}).get("config", {}).get("max_nesting")
    return default if value is None else int(value)


def record_root_key(schema: Schema, root_name: str) -> None:
    """dlt's propagation entry of a root table whose row key goes to its nested tables as `_dlt_root_id`."""
    config = schema.normalizers.setdefault("json", {"module": DLT_JSON_NORMALIZER}).setdefault("config", {})
    config.setdefault("propagation", {}).setdefault("tables", {})[root_name] = {"_dlt_id": "_dlt_root_id"}


def merge_schema(target: Schema, given: Schema) -> bool:
    """The data tables (with their columns and hints) of `given` merged into `target`; True when `target` changed.

    >>> stored = Schema("crm")
    >>> stored.update_table({"name": "users", "columns": {"id": {"name": "id", "data_type": "bigint"}}})
    >>> merge_schema(stored, Schema("crm"))
    False
    >>> given = Schema("crm")
    >>> given.update_table({"name": "orders", "columns": {"id": {"name": "id", "data_type": "bigint"}}})
    >>> merge_schema(stored, given), stored.data_table_names()
    (True, ['users', 'orders'])
    """
    before = target.content_hash()
    for table in given.data_tables():
        target.update_table(copy.deepcopy(table))
    return target.content_hash() != before


class Schema:
    """A dlt-format schema with content hashing and version bumps.

    >>> s = Schema("quick_start")
    >>> s.update_table({"name": "users", "columns": {"id": {"name": "id", "data_type": "bigint", "nullable": True}}})
    >>> s.bump_version()[0]
    2
    """

    def __init__(self, name: str, naming: str = "snake_case") -> None:
        self.name = name
        self.version = 1
        self.version_hash = ""
        self.previous_hashes: list[str] = []
        self.tables: dict[str, TTable] = system_tables()
        self.settings: TSchemaSettings = {"detections": ["iso_timestamp"], "default_hints": copy.deepcopy(DEFAULT_HINTS)}
        self.normalizers: TNormalizersConfig = {"names": naming, "json": {"module": DLT_JSON_NORMALIZER}}
        self.version_hash = self.content_hash()

    # -- persistence -------------------------------------------------------------------------------
    def to_dict(self) -> TStoredSchema:
        """The schema as dlt stores it (key order as dlt's)."""
        return {
            "version": self.version,
            "version_hash": self.version_hash,
            "engine_version": ENGINE_VERSION,
            "name": self.name,
            "tables": self.tables,
            "settings": self.settings,
            "normalizers": self.normalizers,
            "previous_hashes": self.previous_hashes,
        }

    def to_json(self, pretty: bool = False) -> str:
        return orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2 if pretty else 0).decode()

    @classmethod
    def from_dict(cls, data: TStoredSchema) -> Schema:
        schema = cls.__new__(cls)
        schema.name = data["name"]
        schema.version = int(data.get("version", 1))
        schema.version_hash = data.get("version_hash", "")
        schema.previous_hashes = list(data.get("previous_hashes", []))
        schema.tables = copy.deepcopy(data.get("tables", {}))
        for name, table in system_tables().items():
            schema.tables.setdefault(name, table)
        schema.settings = copy.deepcopy(data.get("settings") or {"detections": ["iso_timestamp"]})
        schema.settings.setdefault("default_hints", copy.deepcopy(DEFAULT_HINTS))
        schema.normalizers = copy.deepcopy(data.get("normalizers") or {"names": "snake_case"})
        json_normalizer = schema.normalizers.setdefault("json", {})
        if json_normalizer.get("module") in (None, OLD_JSON_NORMALIZER):  # dlt imports the module it names
            json_normalizer["module"] = DLT_JSON_NORMALIZER
        if not schema.version_hash:
            schema.version_hash = schema.content_hash()
        return schema

    @classmethod
    def from_json(cls, text: str | bytes) -> Schema:
        return cls.from_dict(cast(TStoredSchema, orjson.loads(text)))

    def clone(self) -> Schema:
        return Schema.from_dict(copy.deepcopy(self.to_dict()))

    # -- hashing and versions ----------------------------------------------------------------------
    def content_hash(self) -> str:
        """dlt's schema version hash: base64 sha3-256 of the stored schema without its version fields (keys
        sorted), followed by every table name (sorted) and its column names in schema order, so that a
        column moved is a change. Equal to the hash dlt computes, so neither tool bumps the other's version."""
        content = {k: v for k, v in self.to_dict().items() if k not in ("version", "version_hash", "previous_hashes")}
        digest = hashlib.sha3_256(orjson.dumps(content, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS))
        for table_name in sorted(self.tables):
            digest.update(table_name.encode("utf-8"))
            for column_name in self.tables[table_name].get("columns") or {}:
                digest.update(column_name.encode("utf-8"))
        return base64.b64encode(digest.digest()).decode("ascii")

    def bump_version(self) -> tuple[int, str]:
        """Recompute the content hash; a changed hash increments `version` and records the old hash."""
        new_hash = self.content_hash()
        if new_hash != self.version_hash:
            if self.version_hash:
                self.previous_hashes.insert(0, self.version_hash)
                del self.previous_hashes[10:]
            self.version += 1
            self.version_hash = new_hash
        return self.version, self.version_hash

    @property
    def is_modified(self) -> bool:
        return self.content_hash() != self.version_hash

    # -- tables ------------------------------------------------------------------------------------
    def update_table(self, partial: TTable) -> None:
        """Merge a partial table: new columns are appended in order, known columns take new properties;
        a hints-only column that gets a data type moves to the end (dlt's column order)."""
        name = partial["name"]
        table = self.tables.get(name)
        if table is None:
            table = {"name": name, "columns": {}}
            self.tables[name] = table
        hints = cast(dict[str, Any], table)  # any of dlt's table hints, by name
        for key, value in partial.items():
            if key == "columns":
                continue
            if key == "x-normalizer":
                hints.setdefault(key, {}).update(value)
            else:
                hints[key] = value
        columns = table["columns"]
        for col_name, column in partial.get("columns", {}).items():
            if col_name in columns and not is_complete_column(columns[col_name]) and is_complete_column(column):
                columns[col_name] = cast(TColumn, {**columns.pop(col_name), **column})  # completed: moves to the end, as in dlt
            elif col_name in columns:
                columns[col_name].update(column)
            else:
                columns[col_name] = cast(TColumn, dict(column))

    def data_tables(self, seen_data_only: bool = False) -> list[TTable]:
        """Tables that hold user data (not `_dlt_*`), in schema order."""
        return [
            t
            for name, t in self.tables.items()
            if not name.startswith(DLT_TABLE_PREFIX)
            and (not seen_data_only or t.get("x-normalizer", {}).get("seen-data"))
        ]

    def data_table_names(self, seen_data_only: bool = False) -> list[str]:
        """Names of the tables that hold user data (dlt's `data_table_names()`)."""
        return [t["name"] for t in self.data_tables(seen_data_only)]

    def get_table(self, table_name: str) -> TTable:
        """The table `table_name` (dlt's `get_table`); a `TableNotFoundError` naming the known tables otherwise.

        >>> Schema("s").get_table("_dlt_loads")["write_disposition"]
        'skip'
        """
        try:
            return self.tables[table_name]
        except KeyError:
            raise TableNotFoundError(
                f"Schema '{self.name}' has no table '{table_name}'; its tables are {sorted(self.tables)}. "
                "Check the name (tables get their names normalized, e.g. snake_case) or load data into it first."
            ) from None

    def get_table_columns(self, table_name: str, include_incomplete: bool = False) -> dict[str, TColumn]:
        """The columns of `table_name`; those without a data type yet only with `include_incomplete`."""
        columns: dict[str, TColumn] = self.get_table(table_name)["columns"]
        return dict(columns) if include_incomplete else {n: c for n, c in columns.items() if is_complete_column(c)}

    def to_pretty_yaml(self) -> str:
        """The schema as YAML, as dlt's `to_pretty_yaml()` prints it for reading.

        >>> print(Schema("s").to_pretty_yaml()[:10])
        version: 1
        """
        import yaml

        return str(yaml.dump(self.to_dict(), allow_unicode=True, default_flow_style=False, sort_keys=False))

    def __repr__(self) -> str:
        return f"Schema {self.name} at {id(self)}"

    def root_table_of(self, table_name: str) -> TTable:
        table = self.tables[table_name]
        while table.get("parent"):
            table = self.tables[table["parent"]]
        return table

    def nested_tables_of(self, root_name: str) -> Iterator[TTable]:
        """The root table and all tables that descend from it."""
        for table in self.tables.values():
            if self.root_table_of(table["name"])["name"] == root_name:
                yield table

    def complete_columns(self, table_name: str) -> dict[str, TColumn]:
        return {n: c for n, c in self.tables[table_name]["columns"].items() if is_complete_column(c)}

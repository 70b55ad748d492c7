"""One root table's tree written into DuckDB as its write disposition says, from the package's Parquet files, inside
the package's transaction (`lakeload.load.duckdb_loader`), as dlt's DuckDB destination leaves the rows:

- `append`: every file inserted (`INSERT ... SELECT ... FROM read_parquet([...])`);
- `replace`: the tree's tables emptied, then every file inserted;
- `merge` with `delete-insert` (dlt's default there) or `upsert`: the loaded records deduplicated by primary key
  (`dedup_sort` decides, else the later record wins); the stored records whose primary key or `merge_key` arrives
  are deleted with their nested rows (followed down by `_dlt_parent_id`); the records are inserted, except those the
  `hard_delete` column flags, with the nested rows below them; `insert-only` inserts the records whose key is new;
  `cdc` is an `upsert` that also deletes the stored records (and their nested rows) whose primary key the load lacks
  (within the `destination_scope`, else the `merge_key`s the load holds; `lakeload.load.duckdb_merge_scope`);
- `merge` with `scd2`: the versioned merge of `lakeload.load.duckdb_scd2`.

A `source_filter` selects the loaded records merged (not for `insert-only`, as in dlt).

A tree that loads through the staging dataset (`lakeload.load.duckdb_staging`: merges, and `replace` with
`insert-from-staging`) is read from its tables there (`staging=`), which hold the package's rows; the others from
the package's files. Loaded and deleted ids are kept in temporary tables of the transaction; no row passes through
Python.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from lakeload.destinations.impl.duckdb.file_sources import file_source
from lakeload.destinations.impl.duckdb.sql import (
    complete_columns,
    ident,
    idents,
    insert_select,
    present_columns,
)
from lakeload.errors import DestinationError
from lakeload.kernel.normalize.relational import C_DLT_ID, C_DLT_PARENT_ID
from lakeload.load.duckdb_merge_scope import MergeScope
from lakeload.load.duckdb_scd2 import Scd2Write
from lakeload.schema.schema import columns_with_hint

if TYPE_CHECKING:
    import duckdb

    from lakeload.destinations.reference import LoadPackage
    from lakeload.schema.schema import Schema
    from lakeload.schema.typing import TTable

MERGES = ("delete-insert", "upsert", "insert-only", "scd2", "cdc")
ORDER = "__lakeload_order"


class TreeWrite:
    """The rows of one root table and its nested tables, written by the root's write disposition."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, dataset: str, schema: Schema, root: TTable,
                 package: LoadPackage, staging: str | None = None) -> None:
        self.connection, self.dataset, self.schema, self.root = connection, dataset, schema, root
        tree = [t for t in schema.nested_tables_of(root["name"]) if complete_columns(t)]
        self.tree = sorted(tree, key=self._depth)  # parents first
        self.files = {t["name"]: [j.path for j in package.jobs if j.table_name == t["name"]] for t in self.tree}
        self.sources = {  # where each table's loaded rows are read: the staging dataset's table, or the files
            name: f"{ident(staging)}.{ident(name)}" if staging else file_source(files, schema.tables[name], connection)
            for name, files in self.files.items()
        }
        self.temp = re.sub(r"\W", "_", f"__lakeload_{package.load_id}_{root['name']}")  # temporary tables' prefix
        self.created_at = package.created_at  # (scd2's boundary without `boundary_timestamp`)

    def _depth(self, table: TTable) -> int:
        depth, parent = 0, table.get("parent")
        while parent:
            depth, parent = depth + 1, self.schema.tables[parent].get("parent")
        return depth

    def run(self) -> None:
        disposition = self.root.get("write_disposition", "append")
        if disposition == "replace":
            for table in self.tree:
                self.connection.execute(f"DELETE FROM {self._table(table['name'])}")
        if disposition != "merge":
            for table in self.tree:
                self._insert(table["name"])
            return
        strategy = str(self.root.get("x-merge-strategy") or "delete-insert")
        if strategy not in MERGES:
            raise DestinationError(
                f"Table '{self.root['name']}': the DuckDB destination merges with {', '.join(MERGES)}; '{strategy}' is not "
                "supported yet. Load this table with one of them, or into a Delta or Iceberg table of the filesystem "
                "destination, which has every strategy. Then drop this package: pipeline.drop_pending_packages()."
            )
        if not self.files[self.root["name"]]:
            return  # (no rows of the root in the package: nothing merges, as in dlt)
        if strategy == "scd2":
            sources = {name: source for name, source in self.sources.items() if self.files[name]}
            Scd2Write(self.connection, self.tree, self._table, sources, self.created_at).run()
        else:
            self._merge(strategy)

    # -- parts -------------------------------------------------------------------------------------
    def _table(self, name: str) -> str:
        return f"{ident(self.dataset)}.{ident(name)}"

    def _columns(self, name: str) -> list[str]:
        return [c["name"] for c in complete_columns(self.schema.tables[name])]

    def _present(self, name: str) -> set[str]:
        """The columns the table's loaded rows have (the files' footers, or the staging table)."""
        return present_columns(self.connection, self.sources[name])

    def _insert(self, name: str, where: str = "") -> None:
        if not self.files[name]:
            return
        self.connection.execute(
            insert_select(self._table(name), self._columns(name), self._present(name), self.sources[name], where)
        )

    def _merge(self, strategy: str) -> None:
        root = self.root["name"]
        primary_key = columns_with_hint(self.root, "primary_key")
        merge_key = [] if strategy in ("upsert", "cdc") else columns_with_hint(self.root, "merge_key")
        present = self._present(root)
        incoming = f"{self.temp}_incoming"
        scope = MergeScope(self._table(root), self.sources[root], self.root)
        self._create_incoming(incoming, primary_key, present, self.sources[root] if strategy == "insert-only" else scope.filtered())
        flagged = self._deleted_flag(present)
        key_sets = [k for k in (primary_key, merge_key) if k and all(c in present for c in k)]
        if strategy == "insert-only":
            if primary_key:
                stored_keys = f"SELECT {idents(primary_key)} FROM {self._table(root)}"
                self.connection.execute(f"DELETE FROM {incoming} WHERE ({idents(primary_key)}) IN ({stored_keys})")
        else:  # (cdc: the stored records the load lacks go too)
            self._delete_stored(incoming, key_sets, scope.absent_in_scope(primary_key) if strategy == "cdc" and primary_key else "")
        winners = f"SELECT * FROM {incoming}" + (f" WHERE NOT ({flagged})" if flagged else "")
        self.connection.execute(insert_select(self._table(root), self._columns(root), present, f"({winners})"))
        self.connection.execute(f"CREATE TEMP TABLE {self.temp}_kept_{0} AS SELECT {ident(C_DLT_ID)} FROM ({winners})")
        kept = {root: f"{self.temp}_kept_0"}
        for position, table in enumerate(self.tree[1:], start=1):
            name, parent = table["name"], str(table.get("parent"))
            if not self.files[name] or parent not in kept:  # (no rows below a parent table without rows)
                continue
            # one nested row per row id: repeated keys in one load share their key-derived ids (upsert, insert-only,
            # cdc); the first loaded is kept, as dlt's DuckDB destination keeps one per row id
            below = (f"WHERE {ident(C_DLT_PARENT_ID)} IN (SELECT {ident(C_DLT_ID)} FROM {kept[parent]}) "
                     f"QUALIFY row_number() OVER (PARTITION BY {ident(C_DLT_ID)} ORDER BY rowid) = 1")
            self._insert(name, below)
            kept[name] = f"{self.temp}_kept_{position}"
            self.connection.execute(
                f"CREATE TEMP TABLE {kept[name]} AS SELECT {ident(C_DLT_ID)} FROM {self.sources[name]} {below}"
            )
        for name in [incoming, *kept.values()]:
            self.connection.execute(f"DROP TABLE IF EXISTS {name}")

    def _create_incoming(self, incoming: str, primary_key: list[str], present: set[str], source: str) -> None:
        """The loaded root records of `source`, one per primary key (`dedup_sort` decides, else the later one wins)."""
        rows = f"SELECT *, row_number() OVER () AS {ORDER} FROM {source}"
        if primary_key and all(c in present for c in primary_key):
            order = [f"{ORDER} DESC"]
            sort = next(((n, c["dedup_sort"]) for n, c in self.root["columns"].items() if c.get("dedup_sort") and n in present), None)
            if sort:
                order.insert(0, f"{ident(sort[0])} {'DESC' if sort[1] == 'desc' else 'ASC'} NULLS LAST")
            rows = f"SELECT * FROM ({rows}) QUALIFY row_number() OVER (PARTITION BY {idents(primary_key)} ORDER BY {', '.join(order)}) = 1"
        self.connection.execute(f"CREATE TEMP TABLE {incoming} AS {rows}")

    def _deleted_flag(self, present: set[str]) -> str:
        """The SQL condition of a record the `hard_delete` column deletes ('' without one)."""
        column = next(iter(columns_with_hint(self.root, "hard_delete")), None)
        if column is None or column not in present:
            return ""
        if self.root["columns"][column].get("data_type") == "bool":
            return f"coalesce({ident(column)}, false)"
        return f"{ident(column)} IS NOT NULL"

    def _delete_stored(self, incoming: str, key_sets: list[list[str]], absent: str = "") -> None:
        """The stored records whose primary key or merge key arrives (or that the `absent` condition selects), and
        the nested rows below them."""
        conditions = [f"({idents(keys)}) IN (SELECT {idents(keys)} FROM {incoming})" for keys in key_sets]
        if not conditions and not absent:
            return
        root = self.root["name"]
        condition = " OR ".join([*conditions, *([f"({absent})"] if absent else [])])
        gone = {root: f"{self.temp}_gone_0"}
        self.connection.execute(f"CREATE TEMP TABLE {gone[root]} AS SELECT {ident(C_DLT_ID)} FROM {self._table(root)} WHERE {condition}")
        for position, table in enumerate(self.tree[1:], start=1):
            name, parent = table["name"], str(table.get("parent"))
            if parent not in gone or not has_table(self.connection, self.dataset, name):
                continue
            gone[name] = f"{self.temp}_gone_{position}"
            self.connection.execute(
                f"CREATE TEMP TABLE {gone[name]} AS SELECT {ident(C_DLT_ID)} FROM {self._table(name)} "
                f"WHERE {ident(C_DLT_PARENT_ID)} IN (SELECT {ident(C_DLT_ID)} FROM {gone[parent]})"
            )
        for name, ids in gone.items():
            self.connection.execute(f"DELETE FROM {self._table(name)} WHERE {ident(C_DLT_ID)} IN (SELECT {ident(C_DLT_ID)} FROM {ids})")
            self.connection.execute(f"DROP TABLE {ids}")


def has_table(connection: duckdb.DuckDBPyConnection, dataset: str, name: str) -> bool:
    """Whether the database has the table `name` in the schema `dataset`."""
    found: Any = connection.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = ?", [dataset, name]
    ).fetchone()
    return found is not None

"""Write dispositions and merge strategies on the DuckDB destination beside dlt 1.31's own, cell by cell: the same
three loads (a nested list in every record, a changed record, a record flagged deleted, a duplicate key within one
load, records of a new key) into both databases, and every table of each cell's tree compared in the conformance
harness's canonical form (schema columns and dlt types, rows as multisets with their parent links, load order)
plus DuckDB's own column types.

Each cell is one table, so one pipeline run serves every cell of a group: the core group (each disposition and
strategy once, `truncate-and-insert`) and the variants (keys, `hard_delete`, `dedup_sort`, and `replace` by
`insert-from-staging`, which is a destination setting and so the whole group's): three lakeload runs per group, the
whole matrix ~10 s, so none of it is `slow`. The merge strategies come from the destination's capabilities, so a
strategy the DuckDB destination gains joins the matrix.

Deliberate differences (kept out of the data or adjusted, each named here):
* duplicate keys within one load without `dedup_sort`: dlt's `delete-insert` keeps an arbitrary record (documented
  so), lakeload the later one; dlt's `upsert`/`insert-only` need unique keys and insert every copy of a new key,
  lakeload keeps one. Those cells get an exact copy (delete-insert) or no duplicate (upsert, insert-only);
* `insert-only` nested rows: dlt also inserts the nested rows of a record whose key was stored (not inserted), below
  the stored root, mixing two versions of one record; lakeload keeps the stored record whole. dlt's extra rows
  (nested values of another version than their root row's) are dropped before comparing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from duckdb_side_by_side import (
    CanonicalDataset,
    diff_column_types,
    duckdb_column_types,
    load_side_by_side,
    tree_differences,
)

import lakeload

pytestmark = [pytest.mark.usefixtures("spark")]
STRATEGIES = lakeload.destinations.duckdb().capabilities().supported_merge_strategies
VALIDITY = ("_dlt_valid_from", "_dlt_valid_to")


@dataclass(frozen=True)
class Cell:
    """One table of the matrix: its write disposition, merge strategy and hints."""

    table: str
    disposition: str = "merge"
    strategy: str | None = None
    primary_key: bool = True
    merge_key: bool = False
    hard_delete: bool = False
    dedup_sort: bool = False

    @property
    def duplicates(self) -> str:
        """How the second load repeats a key: `sorted` (two versions), `copy` (the same record twice) or `none`."""
        if self.dedup_sort or not self.primary_key or self.disposition != "merge":
            return "sorted" if self.strategy != "scd2" else "none"
        return "copy" if self.strategy == "delete-insert" else "none"

    def resource(self, lib: Any, records: list[dict[str, Any]]) -> Any:
        columns: dict[str, Any] = {}
        if self.hard_delete:
            columns["deleted"] = {"hard_delete": True, "data_type": "bool"}
        if self.dedup_sort:
            columns["ts"] = {"dedup_sort": "desc"}
        disposition: Any = self.disposition if self.strategy is None else {"disposition": "merge", "strategy": self.strategy}
        keys = {"primary_key": "id"} if self.primary_key else {}
        if self.merge_key:
            keys["merge_key"] = "g"
        return lib.resource(records, name=self.table, write_disposition=disposition, columns=columns or None, **keys)


def record(i: int, version: int, g: str, ts: int, **extra: Any) -> dict[str, Any]:
    pets = [f"p{i}.{k}.v{version}" for k in range((i + version) % 3 + 1)]
    return {"id": i, "g": g, "v": version, "ts": ts, "name": f"n{i}.v{version}", "pets": pets, **extra}


def loads(cell: Cell) -> list[list[dict[str, Any]]]:
    """Three loads: four records; a change, a deletion, a repeated key and a new key; a change, a new key and a
    record flagged not deleted."""
    first = [record(i, 1, "a" if i <= 2 else "b", 1) for i in range(1, 5)]
    repeated = {"sorted": [record(3, 2, "c", 5), record(3, 3, "c", 4)], "copy": [record(3, 2, "c", 5)] * 2,
                "none": [record(3, 2, "c", 5)]}[cell.duplicates]
    second = [record(1, 2, "a", 2), {"id": 2, "g": "a", "v": 2, "ts": 2, "deleted": True}, *repeated, record(5, 2, "c", 2)]
    third = [record(4, 3, "b", 3), record(6, 3, "d", 3), record(5, 3, "c", 3, deleted=False)]
    return [first, second, third]


def merge_cells(suffix: str, **hints: Any) -> list[Cell]:
    """One cell per merge strategy the DuckDB destination has (scd2 tracks versions without keys)."""
    cells = []
    for strategy in STRATEGIES:
        if strategy == "scd2":
            cells.append(Cell(f"scd2{suffix}", strategy=strategy, primary_key=False))
        elif strategy == "cdc":
            cells.append(Cell(f"cdc{suffix}", strategy=strategy, hard_delete=True))
        else:
            cells.append(Cell(f"{strategy.replace('-', '_')}{suffix}", strategy=strategy, **hints))
    return cells


CORE = [Cell("app", "append", primary_key=False), Cell("rep", "replace", primary_key=False),
        *merge_cells("", hard_delete=True, dedup_sort=True)]
VARIANTS = [
    Cell("rep_staging", "replace", primary_key=False),
    *(c for c in merge_cells("_plain") if c.strategy not in ("scd2", "cdc")),
    *(c for c in merge_cells("_hard_delete", hard_delete=True) if c.strategy not in ("scd2", "cdc")),
    *(c for c in merge_cells("_dedup_sort", dedup_sort=True) if c.strategy not in ("scd2", "cdc")),
    Cell("di_merge_key", strategy="delete-insert", primary_key=False, merge_key=True),
    Cell("di_merge_key_hard_delete", strategy="delete-insert", primary_key=False, merge_key=True, hard_delete=True),
    Cell("di_both_keys", strategy="delete-insert", merge_key=True, hard_delete=True, dedup_sort=True),
]


def runs(cells: list[Cell]) -> Any:
    def per_lib(lib: Any) -> list[Any]:
        return [[cell.resource(lib, data[step]) for cell, data in ((c, loads(c)) for c in cells)] for step in range(3)]

    return per_lib


def adjust(cell: Cell) -> Any:
    """The deliberate differences of the module docstring, and the load-time values of scd2, made comparable."""
    def apply(dataset: CanonicalDataset) -> None:
        root = dataset.tables[cell.table]
        if cell.strategy == "insert-only":  # (a no-op on lakeload's side: no nested row of another version)
            version = {row["_dlt_id"]: row["v"] for row in root.rows}
            for table in (t for name, t in dataset.tables.items() if name != cell.table):
                table.rows = [r for r in table.rows if str(r.get("value", "")).endswith(f".v{version.get(r.get('_dlt_root_id'))}")]
        for column in VALIDITY:  # scd2: load times, compared by their order
            ordered = sorted({row[column] for row in root.rows if row.get(column) is not None})
            for row in root.rows:
                if row.get(column) is not None:
                    row[column] = ordered.index(row[column])
    return apply


def group(tmp_path_factory: pytest.TempPathFactory, name: str, cells: list[Cell], **settings: Any) -> tuple[Path, Path]:
    return load_side_by_side(tmp_path_factory.mktemp(name), name, runs(cells), **settings)


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return group(tmp_path_factory, "core", CORE)


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return group(tmp_path_factory, "variants", VARIANTS, replace_strategy="insert-from-staging")


@pytest.mark.parametrize("cell", CORE, ids=[c.table for c in CORE])
def test_core_cell(cell: Cell, core: tuple[Path, Path]) -> None:
    differences = tree_differences(*core, cell.table, adjust(cell))
    assert not differences, "\n".join(differences)


def test_core_system_tables(core: tuple[Path, Path]) -> None:
    """dlt's system tables and the staging dataset (the merge tables' staging copies) have dlt's columns and types."""
    for dataset in ("ds", "ds_staging"):
        differences = diff_column_types(*(duckdb_column_types(db, dataset) for db in core))
        assert not differences, "\n".join(differences)


@pytest.mark.parametrize("cell", VARIANTS, ids=[c.table for c in VARIANTS])
def test_variant_cell(cell: Cell, variants: tuple[Path, Path]) -> None:
    differences = tree_differences(*variants, cell.table, adjust(cell))
    assert not differences, "\n".join(differences)


def test_variant_staging_dataset(variants: tuple[Path, Path]) -> None:
    """With `insert-from-staging` the replace table has a staging copy too, as dlt's."""
    for dataset in ("ds", "ds_staging"):
        differences = diff_column_types(*(duckdb_column_types(db, dataset) for db in variants))
        assert not differences, "\n".join(differences)

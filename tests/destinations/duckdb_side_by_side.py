"""The same loads with dlt 1.31 and with lakeload, each into its own DuckDB database file, compared in the
conformance harness's canonical form (``tests/conformance/duckdb_reader.py``): per table tree, the schema's
columns and dlt types, the rows as multisets with their parent links (random ``_dlt_id``/``_dlt_load_id`` values
not compared), and DuckDB's own column types (``information_schema.columns``).

>>> dlt_db, ours_db = load_side_by_side(tmp_path, "types", lambda lib: [[lib.resource(rows, name="t")]])
>>> assert tree_differences(dlt_db, ours_db, "t") == []
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

_CONFORMANCE = str(Path(__file__).resolve().parent.parent / "conformance")
if _CONFORMANCE not in sys.path:
    sys.path.insert(0, _CONFORMANCE)

from duckdb_reader import diff_column_types, duckdb_column_types, read_duckdb  # noqa: E402
from harness import DATASET, CanonicalDataset, canonicalize, diff, isolated_dlt_config  # noqa: E402

__all__ = ["CanonicalDataset", "diff_column_types", "duckdb_column_types", "load_side_by_side", "read_duckdb",
           "tree_differences"]

# given the library (the `dlt` or the `lakeload` module), what each `pipeline.run(...)` loads, in order
Runs = Callable[[Any], list[Any]]


@contextlib.contextmanager
def isolated_lakeload(work: Path) -> Iterator[None]:
    """What the suite's `isolated_config` fixture gives a test, for module-scoped fixtures (set up before it): no
    lakeload/dlt settings from the environment, no warm engine, and HOME and the working directory under `work` (so no
    user configuration or running engine of the machine is picked up)."""
    from lakeload.config import memory

    prefixes = ("DESTINATION__", "NORMALIZE__", "DATA_WRITER__", "RUNTIME__", "SPARK__", "EXTRACT__", "SOURCES__",
                "SCHEMA__", "LOAD__")
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n.upper().startswith(prefixes)]:
            patch.delenv(name)
        patch.setenv("SPARK__WARM", "false")
        patch.setenv("HOME", str(work / "home"))
        (work / "cwd").mkdir(parents=True, exist_ok=True)
        patch.chdir(work / "cwd")
        memory.clear()
        yield


def load_side_by_side(work: Path, name: str, runs: Runs, lakeload_format: str | None = None,
                      dlt_format: str | None = None, **settings: Any) -> tuple[Path, Path]:
    """Run `runs` with dlt (isolated configuration; `dlt_format`, else its default file format) and with lakeload
    (`lakeload_format`, else its default), into `<name>_dlt.duckdb` and `<name>_lakeload.duckdb` under `work`;
    `settings` go to both DuckDB factories (e.g. `replace_strategy`)."""
    import dlt

    import lakeload

    dlt_db, ours_db = work / f"{name}_dlt.duckdb", work / f"{name}_lakeload.duckdb"
    with isolated_dlt_config(work / f"{name}_dlt_home"):
        theirs = dlt.pipeline(name, destination=dlt.destinations.duckdb(credentials=str(dlt_db), **settings),
                              dataset_name=DATASET, pipelines_dir=str(work / f"{name}_dlt_pipelines"))
        for data in runs(dlt):
            theirs.run(data, loader_file_format=dlt_format)
    with isolated_lakeload(work / f"{name}_lakeload_home"):
        ours = lakeload.pipeline(name, destination=lakeload.destinations.duckdb(credentials=str(ours_db), **settings),
                                 dataset_name=DATASET, pipelines_dir=str(work / f"{name}_lakeload_pipelines"))
        for data in runs(lakeload):
            ours.run(data, loader_file_format=lakeload_format)
    return dlt_db, ours_db


def in_tree(table: str, root: str) -> bool:
    return table == root or table.startswith(root + "__")


def only_tree(dataset: CanonicalDataset, root: str) -> CanonicalDataset:
    """The dataset with only the tables of `root`'s tree, and only the problems that name them."""
    tables = {name: t for name, t in dataset.tables.items() if in_tree(name, root)}
    problems = [p for p in dataset.problems if any(p.startswith((name + ":", name + ".")) for name in tables)]
    return CanonicalDataset(dataset.schema, tables, dataset.loads, problems)


def tree_differences(dlt_db: Path, ours_db: Path, root: str,
                     adjust: Callable[[CanonicalDataset], None] | None = None) -> list[str]:
    """Differences in `root`'s tree: canonical form and DuckDB column types; `adjust` may change both sides first
    (for a difference the caller names, or values that differ by nature, such as load times)."""
    expected, actual = only_tree(read_duckdb(dlt_db), root), only_tree(read_duckdb(ours_db), root)
    if adjust is not None:
        adjust(expected)
        adjust(actual)
    out = [] if expected.tables.get(root) and expected.tables[root].rows else [f"dlt's table {root} has no rows"]
    out += diff(canonicalize(expected), canonicalize(actual))
    return out + diff_column_types(*(trees(duckdb_column_types(db), [root]) for db in (dlt_db, ours_db)))


def trees(types: dict[str, Any], roots: Iterable[str]) -> dict[str, Any]:
    """`duckdb_column_types` of the tables of the `roots`' trees."""
    return {name: columns for name, columns in types.items() if any(in_tree(name, root) for root in roots)}

"""Names in the DuckDB destination as dlt 1.31's DuckDB destination gives them, for each naming convention dlt ships
(`snake_case`, `duck_case`, `direct`, `sql_cs_v1`, `sql_ci_v1`), chosen by the factory (`naming_convention=`) or by
`[schema] naming` (env `SCHEMA__NAMING`): the same data through both tools, then `information_schema.columns` of
both database files compared (the dataset's schema name included: dlt normalizes it, `MyData` -> `my_data`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dlt
import duckdb
import pytest

import lakeload

pytestmark = [pytest.mark.usefixtures("spark")]

DATA = [
    {"UserId": 1, "Full Name": "Ä b", "ÜberCount": 2, "café_über": "x", "e-mail@": "m", "Nested": {"InnerKey": 1, "x y": 2},
     "Pets List": [{"PetName": "Rex", "Toys": ["a", "b"]}], "tags": ["t"]},
    {"UserId": 2, "Full Name": "C", "Pets List": [], "tags": ["u", "v"]},
]


def catalog(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every column of every table (schema, table, column, type, nullable) and the rows of each table."""
    with duckdb.connect(str(path), read_only=True) as db:
        columns = db.execute(
            "SELECT table_schema, table_name, column_name, data_type, is_nullable FROM information_schema.columns "
            "WHERE table_schema NOT IN ('main', 'information_schema', 'pg_catalog') ORDER BY 1, 2, ordinal_position"
        ).fetchall()
        tables = sorted({(schema, table) for schema, table, *_ in columns})
        counts = [(s, t, db.execute(f'SELECT count(*) FROM "{s}"."{t}"').fetchone()[0]) for s, t in tables]  # type: ignore[index]
    return columns, counts


@pytest.mark.parametrize(("naming", "how"), [
    ("snake_case", "default"),
    ("duck_case", "factory"),
    ("direct", "config"),
    ("sql_cs_v1", "factory"),
    ("sql_ci_v1", "config"),
])
def test_names_in_the_database_are_dlts(naming: str, how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if how == "config":
        monkeypatch.setenv("SCHEMA__NAMING", naming)
    pipelines = {}
    for lib, name in ((lakeload, "ours"), (dlt, "theirs")):
        arguments = {"naming_convention": naming} if how == "factory" else {}
        destination = lib.destinations.duckdb(str(tmp_path / f"{name}.duckdb"), **arguments)
        pipelines[name] = lib.pipeline(pipeline_name=f"names_{name}", destination=destination, dataset_name="MyData",
                                       pipelines_dir=str(tmp_path / f"p_{name}"))
        pipelines[name].run(lib.resource(DATA, name="My Users"))
    ours, theirs = catalog(tmp_path / "ours.duckdb"), catalog(tmp_path / "theirs.duckdb")
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    (root,) = [t for _, t, _ in ours[1] if not t.startswith("_dlt") and "__" not in t and "\u25b6" not in t]
    with pipelines["ours"].sql_client() as client:  # read back through the dataset's schema as dlt names it
        assert client.execute_sql(f'SELECT count(*) FROM "{root}"') == [(2,)]

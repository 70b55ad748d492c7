"""The `scd2` merge strategy on Delta and Iceberg tables, compared with dlt 1.31's DuckDB destination (dlt's
reference SQL implementation of scd2) after the same loads: the root rows with their data, row hash (`_dlt_id`,
so dlt can continue lakeload's table) and validity columns, and every nested row with its root's data.

Each load gives a fixed `boundary_timestamp`, so both tools stamp the same validity times."""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.kernel.normalize.row_ids import row_hash_id
from lakeload.schema.scd2 import add_scd2_hints

pytestmark = [pytest.mark.usefixtures("spark")]
FORMATS = ("delta", "iceberg")
BOUNDARIES = ("2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z", "2024-04-01T00:00:00Z")
SINCE = datetime(2023, 5, 1, 12, 30, tzinfo=UTC)


def record(i: int, version: int, nested: bool, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"id": i, "name": f"n{i}.v{version}", "country": "de" if i % 2 else "fr", "since": SINCE, **extra}
    if nested:
        row["pets"] = [{"pet": f"p{i}.{k}.v{version}", "toys": [f"t{k}"]} for k in range(1 + (i + version) % 2)]
    return row


def scenario_loads(scenario: str, nested: bool) -> list[list[dict[str, Any]]]:
    """Four loads: new records; changes, an unchanged record, disappearing records, a new one, a hard delete
    flag; a record coming back as it was; and a load where a changed record comes back to its first version."""
    def r(i: int, version: int, **extra: Any) -> dict[str, Any]:
        return record(i, version, nested, **extra)

    first = [r(i, 0) for i in range(1, 6)]
    if scenario == "merge_key":  # the later loads hold records of one country only: the other's stay active
        return [first, [r(1, 1), r(3, 0), r(7, 0)], [r(1, 0), r(5, 0)], [r(2, 1)]]
    return [
        first,
        [r(1, 1), r(2, 0), r(4, 1), r(6, 0), r(5, 0, deleted=True)],  # 3 disappears, 5 flagged deleted
        [r(1, 1), r(2, 0), r(3, 0), r(6, 0)],  # 3 comes back unchanged, 4 and 5 disappear
        [r(1, 0), r(2, 2), r(3, 0), r(6, 0)],  # 1 comes back to its first version
    ]


def disposition(scenario: str, load: int) -> dict[str, Any]:
    wd: dict[str, Any] = {"disposition": "merge", "strategy": "scd2", "boundary_timestamp": BOUNDARIES[load]}
    if scenario == "options":
        wd.update(validity_column_names=["valid_from", "valid_to"], active_record_timestamp="9999-12-31T00:00:00Z")
    return wd


def resource(lib: Any, data: list[dict[str, Any]], scenario: str, load: int, fmt: str | None) -> Any:
    hints: dict[str, Any] = {"table_format": fmt} if fmt else {}
    if scenario == "merge_key":
        hints["merge_key"] = "country"
    columns = {"deleted": {"hard_delete": True, "data_type": "bool"}, "since": {"data_type": "timestamp"}}
    return lib.resource(data, name="users", write_disposition=disposition(scenario, load), columns=columns, **hints)


def iso(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC).isoformat()


def tables(sql_client: Any, scenario: str, nested: bool) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Root rows (data, row hash, validity) and nested rows with their root's data, both sorted."""
    from_, to = ("valid_from", "valid_to") if scenario == "options" else ("_dlt_valid_from", "_dlt_valid_to")
    with sql_client() as client:
        roots = client.execute_sql(
            f"SELECT id, name, country, deleted, _dlt_id, {from_}, {to}, since FROM users"
        )
        pets = client.execute_sql(
            f"SELECT u.id, u.name, u.{from_}, p.pet, t.value FROM users__pets p LEFT JOIN users u ON p._dlt_parent_id = u._dlt_id "
            "LEFT JOIN users__pets__toys t ON t._dlt_parent_id = p._dlt_id"
        ) if nested else []
    root_rows = sorted((r[0], r[1], r[2], bool(r[3]), r[4], iso(r[5]), iso(r[6]), iso(r[7])) for r in roots)
    nested_rows = sorted(((r[0], r[1], iso(r[2]), r[3], r[4]) for r in pets), key=repr)
    return root_rows, nested_rows


@functools.cache
def dlt_result(tmp_root: str, scenario: str, nested: bool) -> Any:
    import dlt

    name = f"ref_{scenario}_{int(nested)}"
    p = dlt.pipeline(name, destination=dlt.destinations.duckdb(f"{tmp_root}/{name}.duckdb"), dataset_name="ds",
                     pipelines_dir=f"{tmp_root}/{name}")
    for load, data in enumerate(scenario_loads(scenario, nested)):
        p.run(resource(dlt, data, scenario, load, None))
    return tables(p.sql_client, scenario, nested)


@pytest.fixture(scope="module")
def reference_root(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("dlt_duckdb_scd2"))


CASES = [("basic", False), ("basic", True), ("merge_key", True), ("options", False)]


@pytest.mark.slow
@pytest.mark.parametrize(("scenario", "nested"), CASES, ids=[f"{s}-{'nested' if n else 'flat'}" for s, n in CASES])
@pytest.mark.parametrize("fmt", FORMATS)
def test_scd2_leaves_the_rows_dlts_duckdb_destination_leaves(
    tmp_path: Path, reference_root: str, fmt: str, scenario: str, nested: bool
) -> None:
    if fmt == "iceberg":
        pytest.importorskip("pyiceberg")
    p = lakeload.pipeline("scd2", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                          dataset_name="ds", pipelines_dir=str(tmp_path / "p"))
    for load, data in enumerate(scenario_loads(scenario, nested)):
        p.run(resource(lakeload, data, scenario, load, fmt))
    ours = tables(p.sql_client, scenario, nested)
    theirs = dlt_result(reference_root, scenario, nested)
    assert ours == theirs
    roots, pets = ours
    assert len({r[4] for r in roots}) < len(roots)  # a record came back: two versions share a row hash
    assert any(r[6] is not None and not r[6].startswith("9999") for r in roots)  # records were retired
    assert all(r[0] is not None for r in pets)  # no nested row without its root


def test_row_hash_is_dlts() -> None:
    from dlt.common.normalizers.json.helpers import get_row_hash

    row = {"id": 1, "name": "a", "pets": [{"pet": "x"}], "nested": {"k": [1, 2]}, "_dlt_load_id": "1.2"}
    assert row_hash_id(row) == get_row_hash(row)


def test_scd2_hints_are_dlts() -> None:
    import dlt

    wd = {"disposition": "merge", "strategy": "scd2", "validity_column_names": ["f", "t"],
          "active_record_timestamp": "9999-12-31", "boundary_timestamp": "2024-01-01T00:00:00Z"}
    theirs = dlt.resource([{"id": 1}], name="u", write_disposition=wd).compute_table_schema()
    ours: dict[str, Any] = {"name": "u", "columns": {}}
    add_scd2_hints(ours, {k: v for k, v in wd.items() if k not in ("disposition", "strategy")})
    assert ours["columns"].keys() == theirs["columns"].keys()
    for name, column in ours["columns"].items():
        expected = {k: v for k, v in theirs["columns"][name].items() if k != "x-active-record-timestamp"}
        assert {k: v for k, v in column.items() if k != "x-active-record-timestamp"} == expected
    assert ours["columns"]["t"]["x-active-record-timestamp"] == "9999-12-31T00:00:00+00:00"

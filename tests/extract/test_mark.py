"""`lakeload.mark` against dlt 1.31: items routed to tables by name and hints; marked names stay in the bucket."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

import lakeload
from lakeload.errors import InvalidNameError

pytestmark = pytest.mark.usefixtures("spark")


def events(lib: Any) -> Any:
    @lib.resource(name="events")
    def generate() -> Any:
        yield {"id": 1, "kind": "plain"}
        yield lib.mark.with_table_name({"id": 2, "kind": "click"}, "Clicks")
        yield lib.mark.with_table_name([{"id": 3}, {"id": 4}], "clicks")
        hints = lib.mark.make_hints(table_name="views", write_disposition="replace", primary_key="id")
        yield lib.mark.with_hints([{"id": 5, "v": 1}], hints)

    return generate()


def _tables(bucket: Path) -> dict[str, list[str]]:
    tables: dict[str, list[str]] = {}
    for folder in sorted(glob.glob(str(bucket / "ds" / "*"))):
        files = sorted(glob.glob(f"{folder}/*.parquet"))
        if Path(folder).name.startswith("_dlt") or not files:
            continue
        rows = duckdb.sql(f"SELECT * EXCLUDE (_dlt_id, _dlt_load_id) FROM read_parquet({files!r})").to_arrow_table()
        tables[Path(folder).name] = sorted(json.dumps(r, sort_keys=True) for r in rows.to_pylist())
    return tables


def _run(lib: Any, tmp_path: Path, tag: str) -> Any:
    p = lib.pipeline(f"mark_{tag}", destination=lib.destinations.filesystem(str(tmp_path / tag)), dataset_name="ds",
                     pipelines_dir=str(tmp_path / f"{tag}_pipelines"))
    p.run(events(lib), loader_file_format="parquet")
    return p


def test_marks_route_items_and_hints_like_dlt(tmp_path: Path) -> None:
    import dlt

    theirs, ours = _run(dlt, tmp_path, "dlt"), _run(lakeload, tmp_path, "lakeload")
    assert _tables(tmp_path / "lakeload") == _tables(tmp_path / "dlt")
    assert set(_tables(tmp_path / "lakeload")) == {"events", "clicks", "views"}
    for table in ("events", "clicks", "views"):
        ours_table, theirs_table = ours.default_schema.tables[table], theirs.default_schema.tables[table]
        assert ours_table["write_disposition"] == theirs_table["write_disposition"], table
    assert ours.default_schema.tables["views"]["columns"]["id"].get("primary_key") is True


@pytest.mark.parametrize("name", ["", "..", "a/../../b"])
def test_marked_table_names_cannot_leave_the_bucket(tmp_path: Path, name: str) -> None:
    @lakeload.resource(name="bad")
    def bad() -> Any:
        yield lakeload.mark.with_table_name({"id": 1}, name)

    naming = "direct" if name else "snake_case"
    destination = lakeload.destinations.filesystem(str(tmp_path / "sandbox" / "bucket"), naming_convention=naming)
    p = lakeload.pipeline("mark_bad", destination=destination, dataset_name="ds", pipelines_dir=str(tmp_path / "pipes"))
    with pytest.raises(lakeload.PipelineStepFailed) as failed:
        p.run(bad())
    assert isinstance(failed.value.__cause__, InvalidNameError)
    outside = [f for f in (tmp_path / "sandbox").rglob("*") if f.is_file()]
    assert outside == []  # nothing written anywhere, not even inside the bucket


def test_every_source_return_form_dlt_accepts(tmp_path: Path) -> None:
    import dlt

    def forms(lib: Any) -> list[Any]:
        @lib.resource
        def users() -> Any:
            yield [{"id": 1}]

        @lib.resource
        def orders() -> Any:
            yield [{"id": 9}]

        @lib.source
        def one_uncalled() -> Any:
            return users

        @lib.source
        def generator_of() -> Any:
            yield users()
            yield orders

        @lib.source
        def a_tuple() -> Any:
            return (users, orders())

        return [one_uncalled(), generator_of(), a_tuple()]

    for ours, theirs in zip(forms(lakeload), forms(dlt), strict=True):
        assert sorted(ours.resources) == sorted(theirs.resources.keys())
        assert list(ours.selected_resources) == list(theirs.selected_resources.keys())
    p = lakeload.pipeline("forms", destination=lakeload.destinations.filesystem(str(tmp_path / "b")),
                          pipelines_dir=str(tmp_path / "p"))
    assert p.run(forms(lakeload)[0]).row_counts == {"users": 1}


def test_resource_properties_read_and_set_hints_like_dlt() -> None:
    import dlt

    def make(lib: Any) -> Any:
        @lib.resource(primary_key="id", write_disposition="merge", columns={"a": {"data_type": "text"}})
        def r() -> Any:
            yield {"id": 1}

        return r()

    ours, theirs = make(lakeload), make(dlt)
    for prop in ("table_name", "write_disposition", "columns", "max_table_nesting", "selected"):
        assert getattr(ours, prop) == getattr(theirs, prop), prop
    for res in (ours, theirs):
        res.table_name, res.write_disposition, res.max_table_nesting = "other", "append", 2
    for prop in ("table_name", "write_disposition", "max_table_nesting"):
        assert getattr(ours, prop) == getattr(theirs, prop), prop


def test_unknown_or_unsupported_hints_are_refused_clearly() -> None:
    import pytest as _pytest

    import lakeload

    r = lakeload.resource([{"a": 1}], name="r")
    with _pytest.raises(lakeload.LakeloadError, match="nested table directly is not supported"):
        r.apply_hints(parent_table_name="x")
    with _pytest.raises(lakeload.LakeloadError, match="create_table_variant=True"):
        r.apply_hints(table_name="t", create_table_variant=True)
    with _pytest.raises(lakeload.LakeloadError, match="Unknown hint 'nope'.*primary_key"):
        r.apply_hints(nope=1)
    assert r.apply_hints(create_table_variant=False, parent_table_name="", primary_key="a").primary_key == ["a"]

"""@source(schema=lakeload.Schema(...)) and @source(root_key=True) against dlt 1.31."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import lakeload

pytestmark = pytest.mark.usefixtures("spark")


def _stored(lib: Any, root: Path, root_key: bool | None) -> dict[str, Any]:
    @lib.source(schema=lib.Schema("crm"), root_key=root_key)
    def anything() -> Any:
        return lib.resource([{"id": 1, "pets": [{"name": "rex", "toys": [{"t": 1}]}]}], name="users")

    p = lib.pipeline("rk", destination=lib.destinations.filesystem(str(root / "bucket")), dataset_name="ds",
                     pipelines_dir=str(root / "pipelines"))
    p.run(anything(), loader_file_format="parquet")
    schema = p.default_schema
    rows = p.dataset(schema="crm").users__pets__toys.df() if lib is lakeload and root_key else None
    return {
        "schema": schema.name,
        "json_config": schema.to_dict()["normalizers"]["json"].get("config"),
        "toys": list(schema.tables["users__pets__toys"]["columns"]),
        "root_id": schema.tables["users__pets"]["columns"].get("_dlt_root_id"),
        "rows_root_id": None if rows is None else rows["_dlt_root_id"].notna().all(),
    }


@pytest.mark.parametrize("root_key", [True, False, None])
def test_source_schema_and_root_key_as_dlt(root_key: bool | None, tmp_path: Path) -> None:
    import dlt

    ours = _stored(lakeload, tmp_path / "lakeload", root_key)
    theirs = _stored(dlt, tmp_path / "dlt", root_key)
    assert {k: v for k, v in ours.items() if k != "rows_root_id"} == {k: v for k, v in theirs.items() if k != "rows_root_id"}
    assert ours["schema"] == "crm"
    if root_key:
        assert ours["rows_root_id"]


def test_a_source_name_other_than_its_schemas_is_refused() -> None:
    with pytest.raises(lakeload.LakeloadError, match="differs from the name of its schema"):
        lakeload.source(name="other", schema=lakeload.Schema("crm"))(lambda: [])

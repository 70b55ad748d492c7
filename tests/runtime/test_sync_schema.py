"""pipeline.sync_schema() and lakeload.Schema as dlt 1.31 has them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from compat._harness_pipeline_modes import bucket_view

import lakeload

pytestmark = pytest.mark.usefixtures("spark")


def _synced(lib: Any, root: Path) -> dict[str, Any]:
    p = lib.pipeline("sync", destination=lib.destinations.filesystem(str(root / "bucket")), dataset_name="ds",
                     pipelines_dir=str(root / "pipelines"))
    p.extract([{"id": 1, "pets": [{"name": "rex"}]}], table_name="users")
    p.normalize()
    p.sync_schema()
    p.sync_schema()  # the same version: nothing more
    dataset = root / "bucket" / "ds"
    before_load = {"init": (dataset / "init").exists(), "versions": len(os.listdir(dataset / "_dlt_version"))}
    p.load()
    view = bucket_view(dataset)
    return {"before_load": before_load, "schema_files": view["schema_files"], "tables": view["schema_tables"]}


def test_sync_schema_stores_the_schema_version_as_dlt(tmp_path: Path) -> None:
    import dlt

    ours = _synced(lakeload, tmp_path / "lakeload")
    assert ours == _synced(dlt, tmp_path / "dlt")
    assert ours == {"before_load": {"init": True, "versions": 1}, "schema_files": 1, "tables": ["users", "users__pets"]}


def test_sync_schema_without_a_schema_says_what_to_do(tmp_path: Path) -> None:
    p = lakeload.pipeline("nothing", destination=lakeload.destinations.filesystem(str(tmp_path / "b")),
                          pipelines_dir=str(tmp_path))
    with pytest.raises(lakeload.LakeloadError, match=r"extract data with extract\(\) or run\(\) first"):
        p.sync_schema()


def test_schema_surface() -> None:
    schema = lakeload.Schema("crm")
    schema.update_table({"name": "users", "resource": "users", "columns": {
        "id": {"name": "id", "data_type": "bigint", "nullable": False}, "later": {"name": "later"}}})
    assert (schema.name, schema.version, schema.data_table_names()) == ("crm", 1, ["users"])
    assert list(schema.get_table_columns("users")) == ["id"]
    assert list(schema.get_table_columns("users", include_incomplete=True)) == ["id", "later"]
    assert schema.to_dict()["tables"]["users"]["columns"]["id"]["data_type"] == "bigint"
    assert "name: crm" in schema.to_pretty_yaml()
    with pytest.raises(KeyError, match="has no table 'orders'"):
        schema.get_table("orders")


def test_run_takes_a_schema_object(tmp_path: Path) -> None:
    schema = lakeload.Schema("crm")
    schema.update_table({"name": "users", "columns": {"id": {"name": "id", "data_type": "text", "nullable": True}}})
    p = lakeload.pipeline("schema_obj", destination=lakeload.destinations.filesystem(str(tmp_path / "b")),
                          pipelines_dir=str(tmp_path))
    p.run([{"id": 1}], table_name="users", schema=schema)
    assert p.default_schema_name == "crm"
    assert p.default_schema.get_table("users")["columns"]["id"]["data_type"] == "text"  # its hints kept
    assert p.dataset().users.df()["id"].tolist() == ["1"]

"""Iceberg tables in the other buckets on loopback servers (Azure on Azurite, GCS on the emulator): the embedded
catalog reads and writes them through lakeload's filesystem; these buckets get no version claims (no create-only
write), so one writer at a time, as the README says. SFTP buckets are refused with a clear error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from servers.fixtures import fresh_prefix
from test_buckets import destination

import lakeload
from lakeload.iceberg import get_iceberg_tables

pytestmark = [pytest.mark.usefixtures("spark"), pytest.mark.slow]


@pytest.mark.parametrize("backend", ["az", "gs"])
def test_iceberg_merge_and_replace_on_bucket(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    p = lakeload.pipeline("ice_" + backend, destination=destination(backend, request, fresh_prefix()), dataset_name="ds",
                          pipelines_dir=str(tmp_path / "pipes"))

    def users(rows: list[dict[str, Any]], disposition: str = "merge") -> Any:
        return lakeload.resource(rows, name="users", write_disposition=disposition, primary_key="id", table_format="iceberg")

    p.run(users([{"id": 1, "pets": ["a", "b"]}, {"id": 2, "pets": ["c"]}]))
    p.run(users([{"id": 2, "pets": ["d"]}, {"id": 3}]))
    with p.sql_client() as client:
        assert client.execute_sql("SELECT id FROM users ORDER BY id") == [(1,), (2,), (3,)]
        assert client.execute_sql("SELECT value FROM users__pets ORDER BY value") == [("a",), ("b",), ("d",)]
    p.run(users([{"id": 9}], "replace"))
    assert sorted(get_iceberg_tables(p)["users"].scan().to_arrow()["id"].to_pylist()) == [9]
    assert p.dataset()["users"].spark().count() == 1


def test_iceberg_on_sftp_is_refused_and_the_package_stays(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    p = lakeload.pipeline("ice_sftp", destination=destination("sftp", request, fresh_prefix()), dataset_name="ds",
                          pipelines_dir=str(tmp_path / "pipes"))
    with pytest.raises(lakeload.errors.PipelineStepFailed, match="cannot hold Iceberg tables"):
        p.run([{"id": 1}], table_name="users", table_format="iceberg")
    assert p.list_normalized_load_packages()

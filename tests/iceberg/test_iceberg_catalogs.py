"""The Iceberg catalogs: dlt's `[iceberg_catalog]` keys, a SQL catalog on a real PostgreSQL server shared by two
working folders, a table the catalog does not know yet (registered from the bucket), and errors that name the
catalog without its password."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy

import lakeload
from lakeload.errors import IcebergCatalogError, PipelineStepFailed
from lakeload.iceberg.catalog import CatalogSettings, resolve_catalog_settings

pytestmark = pytest.mark.usefixtures("spark")


def make_pipeline(bucket: Path, folder: Path, name: str = "ip") -> lakeload.Pipeline:
    return lakeload.pipeline(name, destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                             pipelines_dir=str(folder))


def use_catalog(monkeypatch: pytest.MonkeyPatch, config: dict[str, Any]) -> None:
    monkeypatch.setenv("ICEBERG_CATALOG__ICEBERG_CATALOG_NAME", "team")
    monkeypatch.setenv("ICEBERG_CATALOG__ICEBERG_CATALOG_CONFIG", json.dumps(config))


def test_settings_take_dlts_keys_and_refuse_other_catalog_types(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_catalog_settings() == CatalogSettings("default", "sql", None)
    use_catalog(monkeypatch, {"type": "sql", "uri": "sqlite:///x.db", "password": "hunter2"})
    settings = resolve_catalog_settings()
    assert settings.name == "team" and settings.config == {"type": "sql", "uri": "sqlite:///x.db", "password": "hunter2"}
    assert "hunter2" not in repr(settings)
    monkeypatch.setenv("ICEBERG_CATALOG__ICEBERG_CATALOG_TYPE", "glue")
    with pytest.raises(lakeload.errors.ConfigurationError, match="'sql' or 'rest'"):
        resolve_catalog_settings()


@pytest.mark.slow  # a PostgreSQL server
def test_a_postgresql_catalog_is_shared_by_two_working_folders(
    bucket: Path, tmp_path: Path, catalog_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_catalog(monkeypatch, {"type": "sql", "uri": catalog_database, "warehouse": f"file://{bucket}"})
    def users(rows: list[dict[str, Any]]) -> Any:
        return lakeload.resource(rows, name="users", write_disposition="merge", primary_key="id", table_format="iceberg")

    first, second = make_pipeline(bucket, tmp_path / "a"), make_pipeline(bucket, tmp_path / "b")
    first.run(users([{"id": 1, "v": "a", "pets": ["x"]}, {"id": 2, "v": "a"}]))
    second.run(users([{"id": 2, "v": "b", "pets": ["y", "z"]}, {"id": 3, "v": "b"}]))
    with first.sql_client() as client:
        assert client.execute_sql("SELECT id, v FROM users ORDER BY id") == [(1, "a"), (2, "b"), (3, "b")]
        assert client.execute_sql("SELECT value FROM users__pets ORDER BY value") == [("x",), ("y",), ("z",)]
    engine = sqlalchemy.create_engine(catalog_database)
    with engine.connect() as connection:
        found = connection.execute(sqlalchemy.text(
            "SELECT table_name, metadata_location FROM iceberg_tables WHERE catalog_name = 'team' ORDER BY table_name"
        )).all()
    engine.dispose()
    assert [name for name, _ in found] == ["users", "users__pets"]
    newest = max((bucket / "ds" / "users" / "metadata").glob("*.metadata.json"), key=lambda p: int(p.name.split("-")[0]))
    assert found[0][1].endswith(newest.name)  # the catalog holds the newest commit


@pytest.mark.slow  # a PostgreSQL server
def test_a_table_written_under_the_embedded_catalog_is_registered_in_a_configured_one(
    bucket: Path, tmp_path: Path, catalog_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = make_pipeline(bucket, tmp_path / "a")
    p.run([{"id": 1}], table_name="ev", table_format="iceberg")
    use_catalog(monkeypatch, {"type": "sql", "uri": catalog_database, "warehouse": f"file://{bucket}"})
    p.run([{"id": 2}], table_name="ev", table_format="iceberg")
    with p.sql_client() as client:
        assert client.execute_sql("SELECT id FROM ev ORDER BY id") == [(1,), (2,)]


def test_an_unreachable_catalog_fails_naming_it_without_its_password(
    bucket: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once the socket is closed
    use_catalog(monkeypatch, {"type": "sql", "uri": f"postgresql+psycopg2://lake:s3cr3t-pw@127.0.0.1:{port}/x",
                              "warehouse": f"file://{bucket}"})
    p = make_pipeline(bucket, tmp_path / "a")
    with pytest.raises(PipelineStepFailed) as failed:
        p.run([{"id": 1}], table_name="ev", table_format="iceberg")
    error = failed.value
    while error.__cause__ is not None and not isinstance(error, IcebergCatalogError):
        error = error.__cause__  # type: ignore[assignment]
    assert isinstance(error, IcebergCatalogError) and "'team'" in str(error) and "[iceberg_catalog]" in str(error)
    assert "s3cr3t-pw" not in str(failed.value) and "s3cr3t-pw" not in repr(failed.value.__cause__)
    assert p.list_normalized_load_packages()  # the package stays pending: nothing lost

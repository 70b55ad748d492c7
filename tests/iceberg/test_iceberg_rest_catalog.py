"""pyiceberg's REST catalog as dlt configures it (`iceberg_catalog_type = "rest"`, the client's properties in
`iceberg_catalog_config`), against a REST catalog server on 127.0.0.1 (`tests/servers/iceberg_rest_server.py`, the
REST API over a SQL catalog) that asks for a bearer token: two working folders share its tables, the catalog holds
every commit, and neither the token nor the server's answers leak into errors or the working folder."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from servers.iceberg_rest import RestCatalogServer

import lakeload
from lakeload.errors import PipelineStepFailed

pytestmark = [pytest.mark.usefixtures("spark"), pytest.mark.slow]
pytest.importorskip("pyiceberg")


def use_rest_catalog(monkeypatch: pytest.MonkeyPatch, config: dict[str, str]) -> None:
    monkeypatch.setenv("ICEBERG_CATALOG__ICEBERG_CATALOG_NAME", "lake")
    monkeypatch.setenv("ICEBERG_CATALOG__ICEBERG_CATALOG_TYPE", "rest")
    monkeypatch.setenv("ICEBERG_CATALOG__ICEBERG_CATALOG_CONFIG", json.dumps(config))


def make_pipeline(bucket: Path, folder: Path) -> lakeload.Pipeline:
    return lakeload.pipeline("rest", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                             pipelines_dir=str(folder))


def users(rows: list[dict[str, Any]]) -> Any:
    return lakeload.resource(rows, name="users", write_disposition="merge", primary_key="id", table_format="iceberg")


def test_a_rest_catalog_is_shared_by_two_working_folders(
    bucket: Path, tmp_path: Path, iceberg_rest_catalog: RestCatalogServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_rest_catalog(monkeypatch, iceberg_rest_catalog.config())
    first, second = make_pipeline(bucket, tmp_path / "a"), make_pipeline(bucket, tmp_path / "b")
    first.run(users([{"id": 1, "v": "a", "pets": ["x"]}, {"id": 2, "v": "a"}]))
    second.run(users([{"id": 2, "v": "b", "pets": ["y", "z"]}, {"id": 3, "v": "b"}]))
    first.run([{"n": 1}, {"n": 2}], table_name="events", table_format="iceberg", write_disposition="replace")
    with first.sql_client() as client:
        assert client.execute_sql("SELECT id, v FROM users ORDER BY id") == [(1, "a"), (2, "b"), (3, "b")]
        assert client.execute_sql("SELECT value FROM users__pets ORDER BY value") == [("x",), ("y",), ("z",)]
        assert client.execute_sql("SELECT count(*) FROM events") == [(2,)]
    with sqlite3.connect(iceberg_rest_catalog.database) as catalog:
        found = catalog.execute(
            "SELECT table_name, metadata_location FROM iceberg_tables WHERE table_namespace = 'ds' ORDER BY table_name"
        ).fetchall()
    assert [name for name, _ in found] == ["events", "users", "users__pets"]
    newest = max((bucket / "ds" / "users" / "metadata").glob("*.metadata.json"), key=lambda p: int(p.name.split("-")[0]))
    assert dict(found)["users"].endswith(newest.name)  # the catalog holds the newest commit, made through REST
    written = [p.read_bytes() for folder in (tmp_path / "a", tmp_path / "b") for p in folder.rglob("*") if p.is_file()]
    assert not any(iceberg_rest_catalog.token.encode() in data for data in written)
    assert lakeload.iceberg.get_iceberg_tables(second, "users")["users"].scan().to_arrow().num_rows == 3


def test_a_refused_token_fails_the_load_naming_the_catalog_without_the_token(
    bucket: Path, tmp_path: Path, iceberg_rest_catalog: RestCatalogServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "not-the-token-" + iceberg_rest_catalog.token
    use_rest_catalog(monkeypatch, {**iceberg_rest_catalog.config(), "token": wrong})
    p = make_pipeline(bucket, tmp_path / "a")
    with pytest.raises(PipelineStepFailed) as failed:
        p.run(users([{"id": 1}]))
    text = "".join(f"{type(e).__name__}: {e}\n" for e in _chain(failed.value))
    assert "IcebergCatalogError" in text and "rest" in text.lower(), text
    assert wrong not in text and iceberg_rest_catalog.token not in text
    assert not any(wrong.encode() in f.read_bytes() for f in (tmp_path / "a").rglob("*") if f.is_file())


def _chain(error: BaseException | None) -> list[BaseException]:
    found = []
    while error is not None:
        found.append(error)
        error = error.__cause__ or error.__context__
    return found

"""`lakeload.delta.get_delta_tables(pipeline, ...)` over Delta tables written with delta-rs (no Spark: the
pipeline only carries the destination, the dataset name and a stored schema)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from delta_utils import DATASET, delta_schema, pets, users, write, write_users_history
from servers.fixtures import fresh_prefix

import lakeload
from lakeload.config.credentials import Credentials
from lakeload.delta import get_delta_tables
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.errors import DeltaTableNotFoundError, DestinationError, LakeloadError, MissingDependencyError
from lakeload.schema.schema import Schema


def make_pipeline(destination: Any, pipelines_dir: Path, *schemas: Schema) -> Any:
    pipeline = lakeload.pipeline("delta_p", destination=destination, dataset_name=DATASET,
                                 pipelines_dir=str(pipelines_dir))
    for schema in schemas:
        pipeline.storage.save_schema(schema)
    pipeline.state["default_schema_name"] = schemas[0].name if schemas else None
    return pipeline


@pytest.fixture
def local(bucket: Path, pipelines_dir: Path) -> Any:
    config = FilesystemConfiguration(bucket_url=f"file://{bucket}")
    write_users_history(config)
    return make_pipeline(lakeload.destinations.filesystem(str(bucket)), pipelines_dir, delta_schema())


def test_all_delta_tables_of_the_default_schema(local: Any) -> None:
    from deltalake import DeltaTable

    tables = get_delta_tables(local)
    assert list(tables) == ["users", "users__pets"]  # not `events` (plain), not `later` (not written yet)
    assert all(isinstance(t, DeltaTable) for t in tables.values())
    assert tables["users"].version() == 2 and tables["users"].metadata().partition_columns == ["region"]
    assert sorted(tables["users"].to_pyarrow_table()["id"].to_pylist()) == [10, 11, 12]
    assert tables["users__pets"].to_pyarrow_table().num_rows == 2
    assert tables["users"].table_uri.rstrip("/").endswith(f"/{DATASET}/users")


def test_named_tables(local: Any) -> None:
    assert list(get_delta_tables(local, "users__pets")) == ["users__pets"]
    assert list(get_delta_tables(local, "users__pets", "users")) == ["users__pets", "users"]


@pytest.mark.parametrize(("name", "why"), [("nope", "not in the schema"), ("events", "not a Delta table")])
def test_unknown_or_plain_table_is_a_value_error(local: Any, name: str, why: str) -> None:
    with pytest.raises(ValueError, match=f"'{name}' \\({why}\\)") as info:
        get_delta_tables(local, "users", name)
    assert isinstance(info.value, DeltaTableNotFoundError) and isinstance(info.value, LakeloadError)
    assert "['users', 'users__pets', 'later']" in str(info.value) and "schema_name=" in str(info.value)


def test_named_table_not_created_yet(local: Any) -> None:
    with pytest.raises(DeltaTableNotFoundError, match="'later' has not been created yet: no _delta_log at .*/ds/later"):
        get_delta_tables(local, "later")


def test_other_schema_and_dlt_tables(bucket: Path, pipelines_dir: Path) -> None:
    config = FilesystemConfiguration(bucket_url=f"file://{bucket}")
    other = Schema("other")
    other.update_table({"name": "accounts", "table_format": "delta", "columns": {}})
    write(config, "accounts", users(range(3)))
    pipeline = make_pipeline(lakeload.destinations.filesystem(str(bucket)), pipelines_dir, delta_schema(), other)
    assert get_delta_tables(pipeline) == {}  # nothing of the default schema is written
    assert list(get_delta_tables(pipeline, schema_name="other")) == ["accounts"]
    other.tables["_dlt_loads"]["table_format"] = "delta"  # only to see include_dlt_tables select it
    write(config, "_dlt_loads", pets(range(1)))
    pipeline.storage.save_schema(other)
    assert list(get_delta_tables(pipeline, schema_name="other")) == ["accounts"]
    assert list(get_delta_tables(pipeline, schema_name="other", include_dlt_tables=True)) == ["_dlt_loads", "accounts"]


def test_missing_deltalake_names_the_extra(local: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "deltalake", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "lakeload\[deltalake\]"') as info:
        get_delta_tables(local)
    assert isinstance(info.value, ImportError)


def test_memory_bucket_is_refused(pipelines_dir: Path) -> None:
    pipeline = make_pipeline(lakeload.destinations.filesystem("memory://lake"), pipelines_dir, delta_schema())
    with pytest.raises(DestinationError, match=r"\(memory://\) cannot hold Delta tables.*Use a local path or an object store"):
        get_delta_tables(pipeline)


def test_s3_bucket_with_configured_credentials(s3_server: Any, pipelines_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = fresh_prefix("delta-get-tables")
    creds = s3_server.credentials()
    config = FilesystemConfiguration(bucket_url=s3_server.url(prefix), credentials=Credentials(creds))
    write_users_history(config)
    for name, value in creds.items():
        monkeypatch.setenv(f"DESTINATION__FILESYSTEM__CREDENTIALS__{name.upper()}", value)
    monkeypatch.setenv("DESTINATION__FILESYSTEM__DELTALAKE_STORAGE_OPTIONS", '{"AWS_REGION": "us-east-1"}')
    pipeline = make_pipeline(lakeload.destinations.filesystem(s3_server.url(prefix)), pipelines_dir, delta_schema())
    tables = get_delta_tables(pipeline, "users")
    assert tables["users"].table_uri.startswith(f"s3://{s3_server.bucket}/{prefix}/{DATASET}/users")
    assert sorted(tables["users"].to_pyarrow_table()["id"].to_pylist()) == [10, 11, 12]
    assert [h["operation"] for h in tables["users"].history()][:1] == ["WRITE"]
    assert s3_server.secret_key not in repr(vars(tables["users"]))  # the options it keeps are masked when shown

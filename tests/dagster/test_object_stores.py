"""The Delta Lake I/O manager on real object-store servers on 127.0.0.1: moto (S3, keys enforced) and
Azurite. Arrow and Spark planes, partitions, credentials from lakeload's secrets.toml, concurrent writers."""

# no `from __future__ import annotations`: Dagster reads the assets' type annotations at definition time

import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from dagster import AssetExecutionContext, StaticPartitionsDefinition, asset, materialize
from deltalake import DeltaTable
from servers.fixtures import fresh_prefix

from lakeload.dagster import (
    AzureConfig,
    ClientConfig,
    DeltaLakeIOManager,
    LakeloadConfig,
    S3Config,
)
from lakeload.dagster.connection import DeltaConnection
from lakeload.dagster.delta_arrow import read_arrow, write_arrow
from lakeload.dagster.delta_spark import write_spark
from lakeload.dagster.location import resolve_location
from lakeload.dagster.slices import TableSlice

SPECIES = StaticPartitionsDefinition(["setosa", "virginica"])


def _s3(s3_server: Any, **extra: Any) -> S3Config:
    return S3Config(access_key_id=s3_server.access_key, secret_access_key=s3_server.secret_key,
                    endpoint=s3_server.endpoint_url, region=s3_server.region, **extra)


def _graph(spark: Any) -> tuple[list[Any], dict[str, Any]]:
    """A partitioned Spark asset, a pandas asset, and a downstream reading both."""
    from pyspark.sql import DataFrame

    seen: dict[str, Any] = {}

    @asset(key_prefix="iris", partitions_def=SPECIES, metadata={"partition_expr": "species"})
    def by_species(context: AssetExecutionContext) -> DataFrame:
        return spark.createDataFrame([(context.partition_key, i) for i in range(3)], "species string, n int")

    @asset(key_prefix="iris")
    def summary() -> pd.DataFrame:
        return pd.DataFrame({"name": ["a", "b"], "size": [1.5, 2.5]})

    @asset(key_prefix="iris", partitions_def=SPECIES)
    def report(by_species: DataFrame, summary: pa.Table) -> None:
        seen.setdefault("rows", []).append(sorted(tuple(r) for r in by_species.collect()))
        seen["summary"] = summary.to_pydict()

    return [by_species, summary, report], seen


def _run_graph(io: DeltaLakeIOManager, spark: Any) -> dict[str, Any]:
    assets, seen = _graph(spark)
    for key in ["setosa", "virginica", "setosa"]:
        assert materialize(assets, partition_key=key, resources={"io_manager": io}).success
    return seen


def test_s3_server_assets_arrow_and_spark(s3_server: Any, spark: Any) -> None:
    root = s3_server.url(fresh_prefix("dagster-s3"))
    io = DeltaLakeIOManager(root_uri=root, storage_options=_s3(s3_server), client_options=ClientConfig(allow_http=True))
    seen = _run_graph(io, spark)
    assert seen["rows"][1] == [("virginica", i) for i in range(3)] and seen["rows"][2] == [("setosa", i) for i in range(3)]
    assert seen["summary"] == {"name": ["a", "b"], "size": [1.5, 2.5]}
    options = resolve_location(root, _s3(s3_server)).storage_options
    table = DeltaTable(f"{root}/iris/by_species", storage_options=dict(options))
    assert table.metadata().partition_columns == ["species"] and table.version() == 2
    assert sorted(table.to_pyarrow_table().to_pydict()["species"]) == ["setosa"] * 3 + ["virginica"] * 3


def test_s3_unsafe_rename_config_of_the_seed(s3_server: Any) -> None:
    root = s3_server.url(fresh_prefix("dagster-s3-unsafe"))
    location = resolve_location(root, _s3(s3_server, allow_unsafe_rename=True))
    assert location.storage_options["AWS_S3_ALLOW_UNSAFE_RENAME"] == "true"
    assert "AWS_CONDITIONAL_PUT" not in location.storage_options
    connection = DeltaConnection(location, TableSlice("iris", "t"))
    write_arrow(connection, pa.table({"a": [1, 2]}))
    assert read_arrow(DeltaConnection(location, TableSlice("iris", "t"))).to_pydict() == {"a": [1, 2]}


def test_s3_credentials_from_lakeload_secrets_toml(s3_server: Any, spark: Any) -> None:
    """One .lakeload/secrets.toml serves pipelines and assets: the I/O manager needs no credentials of its own."""
    lakeload_dir = Path(".lakeload")
    lakeload_dir.mkdir()
    (lakeload_dir / "secrets.toml").write_text(
        "[destination.filesystem.credentials]\n"
        f'aws_access_key_id = "{s3_server.access_key}"\naws_secret_access_key = "{s3_server.secret_key}"\n'
        f'endpoint_url = "{s3_server.endpoint_url}"\nregion_name = "{s3_server.region}"\n'
    )
    root = s3_server.url(fresh_prefix("dagster-s3-toml"))
    (lakeload_dir / "config.toml").write_text(f'[destination.filesystem]\nbucket_url = "{root}"\n')
    io = DeltaLakeIOManager(storage_options=LakeloadConfig())  # root_uri and keys from lakeload's config
    seen = _run_graph(io, spark)
    assert seen["rows"][-1] == [("setosa", i) for i in range(3)]


def test_s3_wrong_secret_is_a_clear_error_without_the_secret(s3_server: Any) -> None:
    root = s3_server.url(fresh_prefix("dagster-s3-bad"))
    location = resolve_location(root, S3Config(access_key_id=s3_server.access_key, secret_access_key="wrong-s3cr3t",
                                               endpoint=s3_server.endpoint_url, region=s3_server.region))
    with pytest.raises(Exception) as info:
        write_arrow(DeltaConnection(location, TableSlice("iris", "t")), pa.table({"a": [1]}))
    assert "wrong-s3cr3t" not in str(info.value) and "wrong-s3cr3t" not in repr(info.value.__cause__)
    assert "dagster-s3-bad" in str(info.value)


def test_s3_concurrent_partition_writers_all_land(s3_server: Any) -> None:
    """Four writers materialize different partitions of one table at once: with conditional-put commits
    (also what locking_provider="dynamodb" maps to) every partition is committed once."""
    root = s3_server.url(fresh_prefix("dagster-s3-race"))
    with pytest.warns(UserWarning, match="conditional puts"):
        location = resolve_location(root, _s3(s3_server, locking_provider="dynamodb", lock_table_name="delta_rs_lock_table"))
    assert location.storage_options["AWS_CONDITIONAL_PUT"] == "etag"
    write_arrow(DeltaConnection(location, _partition_slice("p0")), pa.table({"p": ["p0"], "v": [0]}))
    errors: list[BaseException] = []

    def write(key: str) -> None:
        try:
            write_arrow(DeltaConnection(location, _partition_slice(key)), pa.table({"p": [key] * 2, "v": [1, 2]}))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(f"p{i}",)) for i in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    table = DeltaTable(f"{root}/s/t", storage_options=dict(location.storage_options))
    assert sorted(table.to_pyarrow_table().to_pydict()["p"]) == ["p0"] + sorted(f"p{i}" for i in range(1, 5) for _ in "ab")
    assert table.version() == 4


def _partition_slice(key: str) -> TableSlice:
    from lakeload.dagster.slices import PartitionSlice

    return TableSlice("s", "t", partitions=(PartitionSlice("p", keys=(key,)),))


def test_azurite_with_use_emulator_as_in_the_seed(azure_server: Any, spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`AzureConfig(use_emulator=True, client=ClientConfig(allow_http=True))`: Azurite at AZURITE_BLOB_STORAGE_URL."""
    monkeypatch.setenv("AZURITE_BLOB_STORAGE_URL", azure_server.blob_endpoint.rsplit("/", 1)[0])
    root = azure_server.url(fresh_prefix("dagster-az"))
    io = DeltaLakeIOManager(root_uri=root, storage_options=AzureConfig(use_emulator=True),
                            client_options=ClientConfig(allow_http=True))
    seen = _run_graph(io, spark)
    assert seen["rows"][1] == [("virginica", i) for i in range(3)] and seen["rows"][2] == [("setosa", i) for i in range(3)]
    location = resolve_location(root, AzureConfig(use_emulator=True))
    table = DeltaTable(f"{root}/iris/by_species", storage_options=dict(location.storage_options))
    assert table.version() == 2 and table.to_pyarrow_table().num_rows == 6
    assert azure_server.account_key not in repr(location) + repr(AzureConfig(use_emulator=True, account_key="k3y"))


def test_azurite_with_account_key_and_endpoint(azure_server: Any, spark: Any) -> None:
    """An http:// endpoint with the account path (as Azurite's) reaches adlfs and delta-rs alike."""
    config = AzureConfig(account_name=azure_server.account_name, account_key=azure_server.account_key,
                         endpoint=azure_server.blob_endpoint)
    root = azure_server.url(fresh_prefix("dagster-az-key"))
    location = resolve_location(root, config)
    write_spark(DeltaConnection(location, TableSlice("s", "t")), spark.createDataFrame([(1, "a")], "id int, v string"))
    assert read_arrow(DeltaConnection(location, TableSlice("s", "t"))).to_pydict() == {"id": [1], "v": ["a"]}
    assert azure_server.account_key not in repr(location) + repr(config)

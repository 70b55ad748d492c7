"""delta-rs with lakeload's table URIs and storage options on real servers: moto (S3, auth enforced) and
Azurite. Tables are written and read with `deltalake` directly (no Spark)."""

from __future__ import annotations

import threading
from typing import Any

import pyarrow as pa
import pytest
from servers.fixtures import fresh_prefix

from lakeload.config.credentials import Credentials
from lakeload.delta.storage import storage_options, table_uri
from lakeload.delta.tables import open_delta_table
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.errors import DestinationError


def s3_config(s3_server: Any, prefix: str, secret: str | None = None, **kwargs: Any) -> FilesystemConfiguration:
    creds = Credentials(s3_server.credentials(secret))
    return FilesystemConfiguration(bucket_url=s3_server.url(prefix), credentials=creds, **kwargs)


def roundtrip(config: FilesystemConfiguration) -> None:
    """Create a partitioned table, append a version, and read it back through `open_delta_table`."""
    from deltalake import write_deltalake

    client = FilesystemClient(config, "ds")
    uri, options = table_uri(config, client.dataset_path, "t"), storage_options(config)
    assert open_delta_table(client, "t") is None  # no _delta_log yet
    write_deltalake(uri, pa.table({"id": [1, 2], "p": ["a", "b"]}), partition_by=["p"], storage_options=options)
    write_deltalake(uri, pa.table({"id": [3], "p": ["a"]}), mode="append", storage_options=options)
    table = open_delta_table(client, "t")
    assert table is not None and table.version() == 1
    assert sorted(table.to_pyarrow_table()["id"].to_pylist()) == [1, 2, 3]
    assert table.metadata().partition_columns == ["p"]
    assert any("/ds/t/p=a/" in uri for uri in table.file_uris())


def test_s3_roundtrip_with_credentials(s3_server: Any) -> None:
    config = s3_config(s3_server, fresh_prefix("delta-s3"))
    options = storage_options(config)
    assert options["AWS_ENDPOINT_URL"] == s3_server.endpoint_url and options["AWS_ALLOW_HTTP"] == "true"
    assert options["AWS_CONDITIONAL_PUT"] == "etag"
    roundtrip(config)


def test_s3_roundtrip_with_fsspec_kwargs_only(s3_server: Any) -> None:
    kwargs = {"key": s3_server.access_key, "secret": s3_server.secret_key, "endpoint_url": s3_server.endpoint_url}
    roundtrip(FilesystemConfiguration(bucket_url=s3_server.url(fresh_prefix("delta-s3-kw")), kwargs=kwargs))


def test_s3_concurrent_appends_with_the_default_commit_options(s3_server: Any) -> None:
    """Six writers race to commit on a table they all loaded at version 0: with conditional puts every
    commit lands once, in its own version."""
    from deltalake import DeltaTable, write_deltalake

    config = s3_config(s3_server, fresh_prefix("delta-s3-race"))
    client = FilesystemClient(config, "ds")
    uri, options = table_uri(config, client.dataset_path, "t"), storage_options(config)
    write_deltalake(uri, pa.table({"id": [0]}), storage_options=options)
    writers = [DeltaTable(uri, storage_options=options) for _ in range(6)]
    barrier, errors = threading.Barrier(len(writers)), []

    def append(table: DeltaTable, value: int) -> None:
        barrier.wait()
        try:
            write_deltalake(table, pa.table({"id": [value]}), mode="append")
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=append, args=(t, i + 1)) for i, t in enumerate(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    final = DeltaTable(uri, storage_options=options)
    assert final.version() == 6 and sorted(final.to_pyarrow_table()["id"].to_pylist()) == list(range(7))


def test_s3_wrong_secret_is_a_destination_error_without_the_secret(s3_server: Any) -> None:
    from deltalake import write_deltalake

    good = s3_config(s3_server, fresh_prefix("delta-s3-auth"))
    client = FilesystemClient(good, "ds")
    write_deltalake(table_uri(good, client.dataset_path, "t"), pa.table({"id": [1]}), storage_options=storage_options(good))
    bad = s3_config(s3_server, good.bucket_url.rsplit("/", 1)[1], secret="wrong-secret-value-123")
    with pytest.raises(DestinationError) as info:
        open_delta_table(FilesystemClient(bad, "ds"), "t")
    text = str(info.value)
    assert s3_server.url() in text and "wrong-secret-value-123" not in text and s3_server.secret_key not in text


def test_s3_user_options_reach_delta_rs(s3_server: Any) -> None:
    """A user option replaces the derived one: a wrong endpoint in `deltalake_storage_options` is used."""
    config = s3_config(s3_server, fresh_prefix("delta-s3-user"),
                       deltalake_storage_options={"endpoint": "http://127.0.0.1:9", "AWS_MAX_RETRIES": "0",
                                                  "timeout": "2s"})
    options = storage_options(config)
    assert "AWS_ENDPOINT_URL" not in options and options["endpoint"] == "http://127.0.0.1:9"
    with pytest.raises(DestinationError, match="127.0.0.1:9"):
        open_delta_table(FilesystemClient(config, "ds"), "t")


def test_azure_roundtrip_with_connection_string(azure_server: Any) -> None:
    config = FilesystemConfiguration(bucket_url=azure_server.url(fresh_prefix("delta-az")),
                                     credentials=Credentials(native=azure_server.connection_string))
    options = storage_options(config)
    assert options["AZURE_STORAGE_ENDPOINT"] == azure_server.blob_endpoint and options["AZURE_ALLOW_HTTP"] == "true"
    roundtrip(config)


@pytest.mark.parametrize("scheme", ["abfs", "abfss"])
def test_azure_roundtrip_with_sas_token_and_endpoint_option(azure_server: Any, scheme: str) -> None:
    import datetime as dt

    from azure.storage.blob import AccountSasPermissions, ResourceTypes, generate_account_sas

    sas = generate_account_sas(
        azure_server.account_name, azure_server.account_key, ResourceTypes(service=True, container=True, object=True),
        AccountSasPermissions(read=True, write=True, delete=True, list=True, add=True, create=True),
        expiry=dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1),
    )
    creds = Credentials({"azure_storage_account_name": azure_server.account_name, "azure_storage_sas_token": sas})
    url = azure_server.url(fresh_prefix("delta-az-sas")).replace("az://", f"{scheme}://")
    config = FilesystemConfiguration(bucket_url=url, credentials=creds,
                                     deltalake_storage_options={"AZURE_STORAGE_ENDPOINT": azure_server.blob_endpoint})
    assert storage_options(config)["AZURE_ALLOW_HTTP"] == "true"  # added for the user's http:// endpoint
    from deltalake import write_deltalake

    uri = table_uri(config, f"{azure_server.container}/{url.split('/', 3)[3]}/ds", "t")
    assert uri.startswith(f"{scheme}://{azure_server.container}/")
    write_deltalake(uri, pa.table({"id": [1, 2]}), storage_options=storage_options(config))
    from deltalake import DeltaTable

    assert DeltaTable(uri, storage_options=storage_options(config)).to_pyarrow_table().num_rows == 2

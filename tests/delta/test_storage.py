"""Delta table URIs and delta-rs storage options per backend: mapping, merge with user options, refusals,
masking, and `deltalake_storage_options` configuration (no servers, no Spark)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import lakeload
from lakeload.config.credentials import Credentials
from lakeload.delta.storage import (
    StorageOptions,
    canonical_option,
    delta_error,
    storage_options,
    table_uri,
)
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.errors import ConfigurationError, DestinationError
from lakeload.runtime.config_report import show_configuration

AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
PRIVATE_KEY = "-----BEGIN PRIVATE KEY-----\\nMIIEsecretpart\\n-----END PRIVATE KEY-----"


def config(bucket_url: str, credentials: object = None, **kwargs: object) -> FilesystemConfiguration:
    creds = None if credentials is None else Credentials.from_value(credentials)
    return FilesystemConfiguration(bucket_url=bucket_url, credentials=creds, **kwargs)  # type: ignore[arg-type]


# -- table URIs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("bucket_url", "dataset_path", "expected"), [
    ("s3://bucket/lake", "bucket/lake/ds", "s3://bucket/lake/ds/users"),
    ("s3a://bucket", "bucket/ds", "s3a://bucket/ds/users"),
    ("gs://bucket/lake", "bucket/lake/ds", "gs://bucket/lake/ds/users"),
    ("gcs://bucket/lake", "bucket/lake/ds", "gs://bucket/lake/ds/users"),
    ("az://container/lake", "container/lake/ds", "az://container/lake/ds/users"),
    ("abfs://container/lake", "container/lake/ds", "abfs://container/lake/ds/users"),
    ("adl://container", "container/ds", "adl://container/ds/users"),
    ("abfss://container@acc.dfs.core.windows.net/lake", "container/lake/ds",
     "abfss://container@acc.dfs.core.windows.net/lake/ds/users"),
])
def test_table_uri_per_object_store(bucket_url: str, dataset_path: str, expected: str) -> None:
    assert table_uri(config(bucket_url), dataset_path, "users") == expected
    assert table_uri(config(bucket_url), dataset_path + "/", "users") == expected


def test_table_uri_local_is_an_absolute_os_path(tmp_path: Path) -> None:
    uri = table_uri(config(f"file://{tmp_path}"), f"{tmp_path}/ds", "users__pets")
    assert uri == os.path.join(str(tmp_path), "ds", "users__pets") and os.path.isabs(uri)


@pytest.mark.parametrize(("bucket_url", "why"), [
    ("memory://bucket/lake", "lives inside this Python process"),
    ("sftp://user:hunter22@127.0.0.1:2222/data", "no SFTP object store"),
])
def test_sftp_and_memory_buckets_are_refused(bucket_url: str, why: str) -> None:
    for call in (lambda c: table_uri(c, "bucket/lake/ds", "users"), storage_options):
        with pytest.raises(DestinationError) as info:
            call(config(bucket_url))
        text = str(info.value)
        scheme = bucket_url.split("://")[0]
        assert f"({scheme}://)" in text and why in text
        assert "Use a local path or an object store" in text and 'table_format="delta"' in text
        assert "hunter22" not in text


# -- S3 -------------------------------------------------------------------------------------------------


def test_s3_credentials_map_to_delta_rs_options() -> None:
    creds = {"aws_access_key_id": "AKIA1", "aws_secret_access_key": "s3cret", "aws_session_token": "tok3n",
             "region_name": "eu-central-1", "endpoint_url": "http://127.0.0.1:9000", "s3_url_style": "path"}
    assert storage_options(config("s3://b/lake", creds)) == {
        "AWS_ACCESS_KEY_ID": "AKIA1", "AWS_SECRET_ACCESS_KEY": "s3cret", "AWS_SESSION_TOKEN": "tok3n",
        "AWS_REGION": "eu-central-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ALLOW_HTTP": "true",
        "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false", "AWS_CONDITIONAL_PUT": "etag",
    }


def test_s3_profile_https_endpoint_and_default_chain() -> None:
    options = storage_options(config("s3://b", {"profile_name": "ci", "endpoint_url": "https://s3.example.com",
                                                 "s3_url_style": "vhost"}))
    assert options == {"AWS_PROFILE": "ci", "AWS_ENDPOINT_URL": "https://s3.example.com",
                       "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "true", "AWS_CONDITIONAL_PUT": "etag"}
    assert storage_options(config("s3://b")) == {"AWS_CONDITIONAL_PUT": "etag"}  # botocore-style default chain


def test_s3_fsspec_kwargs_are_used_and_credentials_win() -> None:
    kwargs = {"key": "KW", "secret": "kw-secret", "endpoint_url": "http://127.0.0.1:1", "anon": False}
    options = storage_options(config("s3://b", kwargs=kwargs, client_kwargs={"region_name": "us-west-2"}))
    assert options["AWS_ACCESS_KEY_ID"] == "KW" and options["AWS_REGION"] == "us-west-2"
    assert options["AWS_ENDPOINT_URL"] == "http://127.0.0.1:1" and options["AWS_ALLOW_HTTP"] == "true"
    both = storage_options(config("s3://b", {"aws_access_key_id": "CR", "aws_secret_access_key": "cr"}, kwargs=kwargs))
    assert both["AWS_ACCESS_KEY_ID"] == "CR" and both["AWS_SECRET_ACCESS_KEY"] == "cr"
    assert storage_options(config("s3://b", kwargs={"anon": True}))["AWS_SKIP_SIGNATURE"] == "true"


@pytest.mark.parametrize("commit_option", [
    {"AWS_S3_LOCKING_PROVIDER": "dynamodb", "DELTA_DYNAMO_TABLE_NAME": "locks"},
    {"AWS_S3_ALLOW_UNSAFE_RENAME": "true"},
    {"aws_conditional_put": "etag"},
    {"conditional_put": "disabled"},
    {"copy_if_not_exists": "header: cf-copy-destination-if-none-match: *"},
])
def test_s3_commit_default_only_without_a_user_choice(commit_option: dict[str, str]) -> None:
    options = storage_options(config("s3://b", deltalake_storage_options=commit_option))
    assert "AWS_CONDITIONAL_PUT" not in options and options == commit_option


def test_user_options_win_whatever_the_spelling() -> None:
    creds = {"aws_access_key_id": "AKIA1", "aws_secret_access_key": "s", "region_name": "eu-central-1",
             "endpoint_url": "http://127.0.0.1:9000"}
    user = {"region": "us-east-2", "AWS_ENDPOINT": "https://minio.example.com", "aws_allow_http": False,
            "AWS_MAX_RETRIES": 3}
    options = storage_options(config("s3://b", creds, deltalake_storage_options=user))
    assert options == {"AWS_ACCESS_KEY_ID": "AKIA1", "AWS_SECRET_ACCESS_KEY": "s", "region": "us-east-2",
                       "AWS_ENDPOINT": "https://minio.example.com", "aws_allow_http": "false",
                       "AWS_MAX_RETRIES": "3", "AWS_CONDITIONAL_PUT": "etag"}
    assert all(isinstance(v, str) for v in options.values())


def test_user_http_endpoint_gets_allow_http_unless_given() -> None:
    options = storage_options(config("s3://b", deltalake_storage_options={"AWS_ENDPOINT_URL": "http://h:1"}))
    assert options["AWS_ALLOW_HTTP"] == "true"
    options = storage_options(config("az://c", deltalake_storage_options={"endpoint": "http://h:1/acc",
                                                                          "allow_http": "false"}))
    assert options == {"endpoint": "http://h:1/acc", "allow_http": "false"}


def test_nested_user_option_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"deltalake_storage_options\['x'\] must be a string"):
        storage_options(config("s3://b", deltalake_storage_options={"x": {"y": 1}}))


def test_canonical_option_names() -> None:
    assert canonical_option("AWS_ACCESS_KEY_ID") == canonical_option("access_key_id") == "aws_access_key_id"
    assert canonical_option("endpoint", "az") == "azure_storage_endpoint"
    assert canonical_option("AZURE_ALLOW_HTTP") == canonical_option("allow_http") == "allow_http"
    assert canonical_option("SOMETHING_ELSE") == "something_else"


# -- Azure ----------------------------------------------------------------------------------------------


def test_azure_account_key_sas_and_service_principal() -> None:
    key = storage_options(config("az://c", {"azure_storage_account_name": "acc", "azure_storage_account_key": "k"}))
    assert key == {"AZURE_STORAGE_ACCOUNT_NAME": "acc", "AZURE_STORAGE_ACCOUNT_KEY": "k"}
    sas = storage_options(config("abfss://c", {"azure_storage_account_name": "acc", "azure_storage_sas_token": "sv=1&sig=x"}))
    assert sas == {"AZURE_STORAGE_ACCOUNT_NAME": "acc", "AZURE_STORAGE_SAS_TOKEN": "sv=1&sig=x"}
    principal = storage_options(config("az://c", {"azure_storage_account_name": "acc", "azure_tenant_id": "t",
                                                  "azure_client_id": "id", "azure_client_secret": "cs"}))
    assert principal == {"AZURE_STORAGE_ACCOUNT_NAME": "acc", "AZURE_CLIENT_ID": "id", "AZURE_CLIENT_SECRET": "cs",
                         "AZURE_TENANT_ID": "t"}
    default = storage_options(config("az://c", {"azure_storage_account_name": "acc"}))
    assert default == {"AZURE_STORAGE_ACCOUNT_NAME": "acc"}  # object_store's default credential chain
    host = storage_options(config("az://c", {"azure_storage_account_name": "acc", "azure_account_host": "acc.blob.core.chinacloudapi.cn"}))
    assert host["AZURE_STORAGE_ENDPOINT"] == "https://acc.blob.core.chinacloudapi.cn"


def test_azure_connection_strings() -> None:
    azurite = (f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={AZURITE_KEY};"
               "BlobEndpoint=http://127.0.0.1:10999/devstoreaccount1;")
    assert storage_options(config("az://c", azurite)) == {
        "AZURE_STORAGE_ACCOUNT_NAME": "devstoreaccount1", "AZURE_STORAGE_ACCOUNT_KEY": AZURITE_KEY,
        "AZURE_STORAGE_ENDPOINT": "http://127.0.0.1:10999/devstoreaccount1", "AZURE_ALLOW_HTTP": "true",
    }
    sas = "BlobEndpoint=https://acc.blob.core.windows.net/;SharedAccessSignature=sv=2022&sig=abc%3D"
    assert storage_options(config("az://c", sas)) == {"AZURE_STORAGE_SAS_TOKEN": "sv=2022&sig=abc%3D",
                                                      "AZURE_STORAGE_ENDPOINT": "https://acc.blob.core.windows.net"}
    sovereign = "DefaultEndpointsProtocol=https;AccountName=acc;AccountKey=k;EndpointSuffix=core.usgovcloudapi.net"
    assert storage_options(config("az://c", sovereign))["AZURE_STORAGE_ENDPOINT"] == "https://acc.blob.core.usgovcloudapi.net"
    assert storage_options(config("az://c", "UseDevelopmentStorage=true")) == {"AZURE_STORAGE_USE_EMULATOR": "true"}


# -- GCS ------------------------------------------------------------------------------------------------


def test_gcs_service_account_becomes_its_json_key() -> None:
    creds = {"project_id": "p", "client_email": "sa@p.iam.gserviceaccount.com", "private_key": PRIVATE_KEY,
             "private_key_id": "kid"}
    options = storage_options(config("gs://b/lake", creds))
    assert set(options) == {"GOOGLE_SERVICE_ACCOUNT_KEY"}
    key = json.loads(options["GOOGLE_SERVICE_ACCOUNT_KEY"])
    assert key["type"] == "service_account" and key["client_email"] == creds["client_email"]
    assert key["private_key"] == PRIVATE_KEY.replace("\\n", "\n") + "\n"  # real newlines, as google-auth wants
    assert key["token_uri"] == "https://oauth2.googleapis.com/token" and key["project_id"] == "p"


def test_gcs_default_anon_emulator_and_key_file(tmp_path: Path) -> None:
    assert storage_options(config("gs://b", {"project_id": "p"})) == {}  # Google's default credentials
    emulator = storage_options(config("gcs://b", kwargs={"token": "anon", "endpoint_url": "http://127.0.0.1:4443"}))
    assert emulator == {"GOOGLE_SKIP_SIGNATURE": "true", "GOOGLE_BASE_URL": "http://127.0.0.1:4443", "ALLOW_HTTP": "true"}
    key_file = tmp_path / "key.json"
    key_file.write_text("{}")
    assert storage_options(config("gs://b", kwargs={"token": str(key_file)})) == {
        "GOOGLE_APPLICATION_CREDENTIALS": str(key_file)}


def test_gcs_oauth_needs_a_credentials_option_from_the_user() -> None:
    oauth = {"client_id": "cid", "client_secret": "csecret", "refresh_token": "rtoken"}
    with pytest.raises(DestinationError, match="cannot use GCP OAuth user credentials") as info:
        storage_options(config("gs://b", oauth))
    assert "csecret" not in str(info.value) and "rtoken" not in str(info.value)
    user = {"GOOGLE_APPLICATION_CREDENTIALS": "/home/me/.config/gcloud/application_default_credentials.json"}
    assert storage_options(config("gs://b", oauth, deltalake_storage_options=user)) == user
    with pytest.raises(DestinationError):
        storage_options(config("gs://b", {"token": "ya29.access"}))


# -- local, masking, errors -----------------------------------------------------------------------------


def test_local_buckets_pass_user_options_only(tmp_path: Path) -> None:
    assert storage_options(config(f"file://{tmp_path}")) == {}
    assert storage_options(config(f"file://{tmp_path}", deltalake_storage_options={"timeout": 30})) == {"timeout": "30"}


def test_storage_options_mask_secrets_when_shown() -> None:
    creds = {"aws_access_key_id": "AKIAVISIBLE", "aws_secret_access_key": "very-secret", "region_name": "eu-west-1"}
    options = storage_options(config("s3://b", creds))
    assert isinstance(options, dict) and isinstance(options, StorageOptions)
    for text in (repr(options), str(options), f"{options}", str([options])):
        assert "very-secret" not in text and "AKIAVISIBLE" not in text and "eu-west-1" in text
    assert options.masked()["AWS_SECRET_ACCESS_KEY"] == "***"
    assert dict(options)["AWS_SECRET_ACCESS_KEY"] == "very-secret"


def test_delta_error_names_the_bucket_and_hides_secrets() -> None:
    cfg = config("s3://b/lake", {"aws_access_key_id": "AKIAX", "aws_secret_access_key": "very-secret"})
    options = storage_options(cfg)
    error = delta_error(OSError("403 Forbidden: signature for very-secret mismatch"), cfg, options, "open Delta table in")
    text = str(error)
    assert "s3://b/lake" in text and "access refused" in text and "very-secret" not in text
    assert error.__cause__ is None  # the original message held the secret: not chained


# -- configuration --------------------------------------------------------------------------------------


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_deltalake_storage_options_from_toml_string_and_table() -> None:
    write(Path(".lakeload/config.toml"), "[destination.filesystem]\nbucket_url = 's3://b'\n"
          "deltalake_storage_options = '{\"AWS_S3_LOCKING_PROVIDER\": \"dynamodb\", \"DELTA_DYNAMO_TABLE_NAME\": \"t\"}'\n")
    expected = {"AWS_S3_LOCKING_PROVIDER": "dynamodb", "DELTA_DYNAMO_TABLE_NAME": "t"}
    assert lakeload.destinations.filesystem().configuration().deltalake_storage_options == expected
    write(Path(".lakeload/config.toml"), "[destination.filesystem]\nbucket_url = 's3://b'\n"
          "[destination.filesystem.deltalake_storage_options]\nAWS_S3_ALLOW_UNSAFE_RENAME = true\ntimeout = '120s'\n")
    config_ = lakeload.destinations.filesystem().configuration()
    assert config_.deltalake_storage_options == {"AWS_S3_ALLOW_UNSAFE_RENAME": True, "timeout": "120s"}
    assert storage_options(config_) == {"AWS_S3_ALLOW_UNSAFE_RENAME": "true", "timeout": "120s"}


def test_deltalake_storage_options_from_env_and_factory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__FILESYSTEM__DELTALAKE_STORAGE_OPTIONS", '{"AWS_REGION": "eu-west-1"}')
    assert lakeload.destinations.filesystem("s3://b").configuration().deltalake_storage_options == {"AWS_REGION": "eu-west-1"}
    explicit = lakeload.destinations.filesystem("s3://b", deltalake_storage_options={"AWS_REGION": "us-east-2"})
    assert explicit.configuration().deltalake_storage_options == {"AWS_REGION": "us-east-2"}
    assert lakeload.destinations.filesystem("s3://b", deltalake_storage_options='{"a": 1}').configuration(
    ).deltalake_storage_options == {"a": 1}
    monkeypatch.setenv("DESTINATION__FILESYSTEM__DELTALAKE_STORAGE_OPTIONS", "{not json")
    with pytest.raises(ConfigurationError, match="DELTALAKE_STORAGE_OPTIONS .* is not a JSON object"):
        lakeload.destinations.filesystem("s3://b").configuration()
    monkeypatch.setenv("DESTINATION__FILESYSTEM__DELTALAKE_STORAGE_OPTIONS", "[1]")
    with pytest.raises(ConfigurationError, match="must be a dict"):
        lakeload.destinations.filesystem("s3://b").configuration()


def test_config_show_lists_and_masks_deltalake_storage_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__FILESYSTEM__DELTALAKE_STORAGE_OPTIONS",
                       '{"AWS_SECRET_ACCESS_KEY": "opt-secret", "AWS_S3_LOCKING_PROVIDER": "dynamodb"}')
    lines = {line.key: line for line in show_configuration()}
    line = lines["destination.filesystem.deltalake_storage_options"]
    assert line.value == {"AWS_SECRET_ACCESS_KEY": "***", "AWS_S3_LOCKING_PROVIDER": "dynamodb"}
    assert "opt-secret" not in str(line)
    assert repr(lakeload.destinations.filesystem("s3://b").configuration()).count("opt-secret") == 0

"""Storage configs of the Delta Lake I/O manager: credential fields, delta-rs options, fsspec arguments,
GCS key files and masking (no servers, no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lakeload.dagster.config import AZURITE_KEY, AzureConfig, ClientConfig, GcsConfig, S3Config
from lakeload.errors import ConfigurationError

SA_KEY = {"type": "service_account", "project_id": "proj", "private_key_id": "kid",
          "private_key": "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n",
          "client_email": "sa@proj.iam.gserviceaccount.com", "client_id": "123"}


# -- S3 -----------------------------------------------------------------------------------------------


def test_s3_credentials_map_to_lakeload_fields() -> None:
    config = S3Config(access_key_id="AKIA", secret_access_key="s", session_token="t", region="eu-west-1",
                      endpoint="http://127.0.0.1:9000", profile="dev", virtual_hosted_style_request=False)
    assert config.credentials() == {
        "aws_access_key_id": "AKIA", "aws_secret_access_key": "s", "aws_session_token": "t",
        "region_name": "eu-west-1", "endpoint_url": "http://127.0.0.1:9000", "profile_name": "dev",
        "s3_url_style": "path",
    }
    assert S3Config(virtual_hosted_style_request=True).credentials() == {"s3_url_style": "vhost"}
    assert S3Config().credentials() == {}
    assert S3Config(endpoint="http://127.0.0.1:9000").delta_options() == {}


@pytest.mark.parametrize(("fields", "expected"), [
    ({"allow_unsafe_rename": True}, {"AWS_S3_ALLOW_UNSAFE_RENAME": "true"}),
    ({"allow_unsafe_rename": False}, {"AWS_S3_ALLOW_UNSAFE_RENAME": "false"}),
    ({"copy_if_not_exists": "header: cf-copy-destination-if-none-match: *"},
     {"AWS_COPY_IF_NOT_EXISTS": "header: cf-copy-destination-if-none-match: *"}),
    ({"conditional_put": "etag"}, {"AWS_CONDITIONAL_PUT": "etag"}),
])
def test_s3_commit_options(fields: dict[str, object], expected: dict[str, str]) -> None:
    assert S3Config(access_key_id="AKIA", **fields).delta_options() == expected  # type: ignore[arg-type]


def test_s3_dynamodb_locking_means_conditional_puts() -> None:
    config = S3Config(locking_provider="DynamoDB", lock_table_name="delta_log", dynamodb_endpoint="http://127.0.0.1:8000")
    with pytest.warns(UserWarning, match="conditional puts"):
        assert config.delta_options() == {"AWS_CONDITIONAL_PUT": "etag"}  # delta-rs 1.x has no DynamoDB log store
    with pytest.raises(ConfigurationError, match="'zookeeper'"):
        S3Config(locking_provider="zookeeper").delta_options()


# -- Azure --------------------------------------------------------------------------------------------


def test_azure_credentials_and_options() -> None:
    config = AzureConfig(account_name="acct", account_key="k", sas_key="sas", client_id="cid", client_secret="cs",
                         tenant_id="tid", endpoint="acct.blob.core.windows.net", use_azure_cli=True,
                         use_fabric_endpoint=False)
    assert config.credentials() == {
        "azure_storage_account_name": "acct", "azure_storage_account_key": "k", "azure_storage_sas_token": "sas",
        "azure_client_id": "cid", "azure_client_secret": "cs", "azure_tenant_id": "tid",
        "azure_account_host": "acct.blob.core.windows.net",
    }
    assert config.delta_options() == {"AZURE_USE_AZURE_CLI": "true", "AZURE_USE_FABRIC_ENDPOINT": "false"}


def _blob_endpoint(config: AzureConfig) -> str:
    creds = config.credentials()
    assert creds["azure_storage_account_name"] == "devstoreaccount1"
    assert creds["azure_storage_account_key"] == AZURITE_KEY
    parts = dict(p.split("=", 1) for p in creds["azure_connection_string"].rstrip(";").split(";"))
    assert parts["AccountName"] == "devstoreaccount1" and parts["AccountKey"] == AZURITE_KEY
    return parts["BlobEndpoint"]


def test_azure_emulator_default_env_and_explicit_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZURITE_BLOB_STORAGE_URL", raising=False)
    assert _blob_endpoint(AzureConfig(use_emulator=True)) == "http://127.0.0.1:10000/devstoreaccount1"
    monkeypatch.setenv("AZURITE_BLOB_STORAGE_URL", "http://azurite.local:11000/")
    assert _blob_endpoint(AzureConfig(use_emulator=True)) == "http://azurite.local:11000/devstoreaccount1"
    explicit = AzureConfig(use_emulator=True, endpoint="http://127.0.0.1:12000/devstoreaccount1")
    assert _blob_endpoint(explicit) == "http://127.0.0.1:12000/devstoreaccount1"  # wins over the env var


# -- GCS ----------------------------------------------------------------------------------------------


def test_gcs_key_text_and_key_file_give_the_same_fields(tmp_path: Path) -> None:
    from_text = GcsConfig(service_account_key=json.dumps({**SA_KEY, "ignored_number": 3})).credentials()
    assert from_text == SA_KEY
    key_file = tmp_path / "home" / "sa.json"
    key_file.parent.mkdir()
    key_file.write_text(json.dumps(SA_KEY), encoding="utf-8")
    assert GcsConfig(service_account=str(key_file)).credentials() == SA_KEY
    assert GcsConfig(service_account="~/sa.json").credentials() == SA_KEY  # HOME is tmp_path/home
    assert GcsConfig().credentials() == {}


def test_gcs_missing_key_file_and_non_json_key(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(ConfigurationError, match="cannot read the key file") as info:
        GcsConfig(service_account=str(missing)).credentials()
    assert str(missing) in str(info.value) and "service_account_key" in str(info.value)
    with pytest.raises(ConfigurationError, match="not JSON") as info:
        GcsConfig(service_account_key="-----BEGIN PRIVATE KEY----- s3cr3t").credentials()
    assert "s3cr3t" not in str(info.value)
    text_file = tmp_path / "key.txt"
    text_file.write_text("not json", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="not JSON"):
        GcsConfig(service_account=str(text_file)).credentials()


def test_gcs_fsspec_kwargs() -> None:
    assert GcsConfig(endpoint="http://127.0.0.1:4443", anonymous=True).fsspec_kwargs() == {
        "endpoint_url": "http://127.0.0.1:4443", "token": "anon"}
    assert GcsConfig(anonymous=False).fsspec_kwargs() == {}


# -- client options and masking -----------------------------------------------------------------------


def test_client_options() -> None:
    assert ClientConfig(allow_http=True).delta_options() == {"ALLOW_HTTP": "true"}
    config = ClientConfig(allow_http=False, allow_invalid_certificates=True, connect_timeout="5s", timeout="30s",
                          pool_idle_timeout="60s", proxy_url="http://proxy:3128", user_agent="lakeload")
    assert config.delta_options() == {
        "ALLOW_HTTP": "false", "ALLOW_INVALID_CERTIFICATES": "true", "CONNECT_TIMEOUT": "5s", "TIMEOUT": "30s",
        "POOL_IDLE_TIMEOUT": "60s", "PROXY_URL": "http://proxy:3128", "USER_AGENT": "lakeload",
    }
    assert ClientConfig().delta_options() == {}


@pytest.mark.parametrize(("config", "visible"), [
    (S3Config(access_key_id="AKIA", secret_access_key="s3cr3t", session_token="s3cr3t-token", region="eu-west-1"),
     "region='eu-west-1'"),
    (AzureConfig(account_name="acct", account_key="s3cr3t", sas_key="s3cr3t-sas", client_secret="s3cr3t-cs",
                 connection_string="AccountName=acct;AccountKey=s3cr3t"), "account_name='acct'"),
    (GcsConfig(service_account_key=json.dumps({**SA_KEY, "private_key": "s3cr3t"}), endpoint="http://gcs:4443"),
     "endpoint='http://gcs:4443'"),
], ids=["s3", "azure", "gcs"])
def test_repr_and_str_hide_secrets(config: S3Config | AzureConfig | GcsConfig, visible: str) -> None:
    for text in (repr(config), str(config), f"{config}"):
        assert "s3cr3t" not in text
        assert text.startswith(type(config).__name__ + "(") and visible in text


# Some failures are reported with pytest.fail(..., pytrace=False): pytest renders a long traceback by parsing
# library sources, which on this CPython 3.11.7 can leave the parser's recursion counter off and make a later
# import fail with "SystemError: AST constructor recursion depth mismatch".
def test_repr_hides_proxy_password() -> None:
    text = repr(ClientConfig(proxy_url="http://user:s3cr3t@proxy:3128"))
    if "s3cr3t" in text:
        pytest.fail(f"secret shown: {text}", pytrace=False)

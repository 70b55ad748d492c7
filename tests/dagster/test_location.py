"""`resolve_location`: table URIs and the delta-rs / fsspec options of the I/O manager's root, from the storage
config laid over lakeload's own configuration (no servers contacted, no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lakeload.dagster.config import (
    AzureConfig,
    ClientConfig,
    GcsConfig,
    LakeloadConfig,
    LocalConfig,
    S3Config,
)
from lakeload.dagster.location import resolve_location
from lakeload.errors import ConfigurationError, DestinationError, LakeloadError

SECRETS = """
[destination.filesystem.credentials]
aws_access_key_id = "TOMLKEY"
aws_secret_access_key = "toml-s3cr3t"
"""


def write_lakeload(name: str, text: str) -> None:
    folder = Path(".lakeload")  # in the test's working folder (conftest's isolated_config)
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")


def s3(**fields: object) -> S3Config:
    return S3Config(access_key_id="AKIA", secret_access_key="s3cr3t", endpoint="http://127.0.0.1:9",
                    region="us-east-1", **fields)  # type: ignore[arg-type]


def test_local_root(tmp_path: Path) -> None:
    location = resolve_location(str(tmp_path / "lake"), LocalConfig())
    table = location.table("iris", "iris_dataset")
    expected = str((tmp_path / "lake").resolve() / "iris" / "iris_dataset")
    assert (table.name, table.uri, table.folder) == ("iris.iris_dataset", expected, expected)
    assert location.is_local and dict(location.storage_options) == {}


def test_relative_local_root_is_under_the_working_folder() -> None:
    table = resolve_location("lake", LocalConfig()).table("s", "t")
    assert table.uri == str(Path.cwd().resolve() / "lake" / "s" / "t")


def test_s3_root() -> None:
    location = resolve_location("s3://bucket/root", s3())
    assert dict(location.storage_options) == {
        "AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s3cr3t", "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ALLOW_HTTP": "true", "AWS_CONDITIONAL_PUT": "etag",
    }
    kwargs = location.fs_kwargs
    assert (kwargs["key"], kwargs["secret"], kwargs["endpoint_url"]) == ("AKIA", "s3cr3t", "http://127.0.0.1:9")
    table = location.table("schema", "table")
    assert (table.uri, table.folder) == ("s3://bucket/root/schema/table", "bucket/root/schema/table")
    assert not location.is_local and location.root_uri == "s3://bucket/root"


def test_s3_commit_option_replaces_conditional_put() -> None:
    options = resolve_location("s3://bucket/root", s3(allow_unsafe_rename=True)).storage_options
    assert options["AWS_S3_ALLOW_UNSAFE_RENAME"] == "true" and "AWS_CONDITIONAL_PUT" not in options
    options = resolve_location("s3://bucket/root", s3(copy_if_not_exists="header: cf-copy-destination-if-none-match: *")
                               ).storage_options
    assert options["AWS_COPY_IF_NOT_EXISTS"].startswith("header:") and "AWS_CONDITIONAL_PUT" not in options


def test_client_options_of_the_backend_and_of_the_io_manager() -> None:
    storage = s3(client=ClientConfig(timeout="5s", allow_http=False))
    options = resolve_location("s3://bucket/root", storage).storage_options
    assert (options["TIMEOUT"], options["ALLOW_HTTP"]) == ("5s", "false")
    options = resolve_location("s3://bucket/root", storage, ClientConfig(timeout="9s")).storage_options
    assert (options["TIMEOUT"], options["ALLOW_HTTP"]) == ("9s", "false")  # the I/O manager's client_options win


def test_credentials_from_lakeload_configuration() -> None:
    write_lakeload("secrets.toml", SECRETS)
    options = resolve_location("s3://bucket/root", LakeloadConfig()).storage_options
    assert (options["AWS_ACCESS_KEY_ID"], options["AWS_SECRET_ACCESS_KEY"]) == ("TOMLKEY", "toml-s3cr3t")
    assert resolve_location("s3://bucket/root").storage_options == options  # LakeloadConfig is the default


def test_root_uri_from_lakeload_configuration() -> None:
    write_lakeload("config.toml", '[destination.filesystem]\nbucket_url = "s3://cfgbucket/lake"\n')
    location = resolve_location(None, LakeloadConfig())
    assert location.root_uri == "s3://cfgbucket/lake"
    assert location.table("a", "b").uri == "s3://cfgbucket/lake/a/b"


def test_explicit_fields_over_lakeload_credentials_field_by_field() -> None:
    write_lakeload("secrets.toml", SECRETS)
    options = resolve_location("s3://bucket/root", S3Config(endpoint="http://127.0.0.1:9")).storage_options
    assert options["AWS_ACCESS_KEY_ID"] == "TOMLKEY" and options["AWS_SECRET_ACCESS_KEY"] == "toml-s3cr3t"
    assert options["AWS_ENDPOINT_URL"] == "http://127.0.0.1:9" and options["AWS_ALLOW_HTTP"] == "true"
    location = resolve_location("s3://bucket/root", S3Config(access_key_id="EXPLICIT"))
    assert location.storage_options["AWS_ACCESS_KEY_ID"] == "EXPLICIT"
    assert location.storage_options["AWS_SECRET_ACCESS_KEY"] == "toml-s3cr3t"
    assert (location.fs_kwargs["key"], location.fs_kwargs["secret"]) == ("EXPLICIT", "toml-s3cr3t")


def test_credentials_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__AWS_ACCESS_KEY_ID", "ENVKEY")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__AWS_SECRET_ACCESS_KEY", "env-s3cr3t")
    options = resolve_location("s3://bucket/root", S3Config(region="eu-west-1")).storage_options
    assert (options["AWS_ACCESS_KEY_ID"], options["AWS_SECRET_ACCESS_KEY"]) == ("ENVKEY", "env-s3cr3t")
    assert options["AWS_REGION"] == "eu-west-1"


@pytest.mark.parametrize(("root", "storage", "names"), [
    ("az://container/x", S3Config(), ("S3Config", "az://")),
    ("s3://bucket/x", LocalConfig(), ("LocalConfig", "s3://")),
    ("gs://bucket/x", AzureConfig(), ("AzureConfig", "gs://")),
])
def test_provider_mismatch(root: str, storage: S3Config | LocalConfig | AzureConfig, names: tuple[str, ...]) -> None:
    with pytest.raises(ConfigurationError) as info:
        resolve_location(root, storage)
    message = str(info.value)
    assert all(name in message for name in names) and "LakeloadConfig()" in message


def test_memory_root_cannot_hold_delta_tables() -> None:
    with pytest.raises(DestinationError, match="memory://"):
        resolve_location("memory://x", LakeloadConfig())


def test_repr_has_no_secret() -> None:
    location = resolve_location("s3://bucket/root", s3())
    for text in (repr(location), str(location), repr(location.storage_options)):
        assert "s3cr3t" not in text
    assert repr(location) == "DeltaLocation('s3://bucket/root')"


def test_azure_emulator_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZURITE_BLOB_STORAGE_URL", raising=False)
    location = resolve_location("az://container/root", AzureConfig(use_emulator=True))
    options = location.storage_options
    assert options["AZURE_STORAGE_ACCOUNT_NAME"] == "devstoreaccount1"
    assert options["AZURE_STORAGE_ENDPOINT"] == "http://127.0.0.1:10000/devstoreaccount1"
    assert options["AZURE_ALLOW_HTTP"] == "true"
    assert location.table("s", "t").uri == "az://container/root/s/t"


def test_gcs_root_with_a_valid_service_account_key() -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    pem = rsa.generate_private_key(public_exponent=65537, key_size=1024).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    key = {"type": "service_account", "project_id": "p", "private_key_id": "kid", "private_key": pem,
           "client_email": "sa@p.iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token"}
    location = resolve_location("gs://bucket/root", GcsConfig(service_account_key=json.dumps(key),
                                                               endpoint="http://127.0.0.1:4443"))
    options = location.storage_options
    assert json.loads(options["GOOGLE_SERVICE_ACCOUNT_KEY"])["private_key"] == pem
    assert (options["GOOGLE_BASE_URL"], options["ALLOW_HTTP"]) == ("http://127.0.0.1:4443", "true")
    assert location.table("s", "t").uri == "gs://bucket/root/s/t"
    assert "PRIVATE KEY" not in repr(options)


# Some failures are reported with pytest.fail(..., pytrace=False): pytest renders a long traceback by parsing
# library sources, which on this CPython 3.11.7 can leave the parser's recursion counter off and make a later
# import fail with "SystemError: AST constructor recursion depth mismatch".
@pytest.mark.parametrize(("root", "storage"), [
    ("gs://bucket/root", GcsConfig(service_account_key=json.dumps({"type": "service_account", "private_key": "x",
                                                                     "client_email": "a@b", "token_uri": "t"}))),
    ("az://container/root", AzureConfig(account_name="acct", endpoint="http://127.0.0.1:1/acct")),
], ids=["gcs-bad-key", "azure-endpoint-url-without-key"])
def test_unusable_options_raise_a_lakeload_error(root: str, storage: GcsConfig | AzureConfig) -> None:
    try:
        resolve_location(root, storage)
    except LakeloadError:
        return
    except Exception as exc:
        pytest.fail(f"{type(exc).__name__}: {exc}", pytrace=False)
    pytest.fail("no error", pytrace=False)


def test_gcs_application_credentials_file_is_passed_on(tmp_path: Path) -> None:
    adc = tmp_path / "application_default_credentials.json"
    adc.write_text(json.dumps({"type": "authorized_user", "client_id": "cid", "client_secret": "cs",
                               "refresh_token": "1//rt"}), encoding="utf-8")
    try:
        location = resolve_location("gs://bucket/root", GcsConfig(application_credentials=str(adc)))
    except DestinationError as exc:
        pytest.fail(f"DestinationError: {exc}", pytrace=False)
    assert str(adc) in location.storage_options.values()


def test_azure_https_endpoint_is_the_account_host() -> None:
    location = resolve_location("az://container/root", AzureConfig(account_name="acct", account_key="k",
                                                                   endpoint="https://acct.blob.core.windows.net"))
    assert location.fs_kwargs["account_host"] == "acct.blob.core.windows.net"
    assert location.storage_options["AZURE_STORAGE_ENDPOINT"] == "https://acct.blob.core.windows.net"


def test_pipeline_scoped_configuration_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The I/O manager's `pipeline_name` reads the same pipeline-scoped sections a pipeline of that name reads."""
    from lakeload.dagster import DeltaLakeIOManager

    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__AWS_ACCESS_KEY_ID", "AKIAGLOBAL")
    monkeypatch.setenv("SHOP__DESTINATION__FILESYSTEM__CREDENTIALS__AWS_ACCESS_KEY_ID", "AKIASHOP")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__AWS_SECRET_ACCESS_KEY", "s")
    scoped = DeltaLakeIOManager(root_uri="s3://bucket/root", pipeline_name="shop").create_io_manager(None)
    plain = DeltaLakeIOManager(root_uri="s3://bucket/root").create_io_manager(None)
    assert scoped.location.storage_options["AWS_ACCESS_KEY_ID"] == "AKIASHOP"
    assert plain.location.storage_options["AWS_ACCESS_KEY_ID"] == "AKIAGLOBAL"

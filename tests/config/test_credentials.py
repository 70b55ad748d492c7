"""Credentials: gathered field by field from env vars and TOML, replaced wholesale by explicit ones, always masked."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import lakeload
from lakeload.config.credentials import Credentials, is_secret_key, mask_value
from lakeload.config.resolver import resolve_section
from lakeload.errors import ConfigurationError

SECTIONS = ("destination", "filesystem")
AZURE = "DefaultEndpointsProtocol=https;AccountName=dltdata;AccountKey=c2VjcmV0a2V5;EndpointSuffix=core.windows.net"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_fields_are_gathered_with_resolver_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    write(Path.home() / ".lakeload" / "config.toml",
          "[destination.filesystem.credentials]\nregion_name = 'home'\nprofile_name = 'home-profile'\n")
    write(Path(".lakeload/config.toml"),
          "[destination.credentials]\nregion_name = 'config-less-specific'\naws_session_token = 'cfg-token'\n"
          "[destination.filesystem.credentials]\nregion_name = 'config'\n")
    write(Path(".lakeload/secrets.toml"), "[destination.credentials]\naws_secret_access_key = 'secrets'\n")
    monkeypatch.setenv("DESTINATION__CREDENTIALS__AWS_ACCESS_KEY_ID", "env-less-specific")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__AWS_ACCESS_KEY_ID", "env")
    section = resolve_section(SECTIONS, "credentials")
    assert section.fields == {
        "aws_access_key_id": "env", "aws_secret_access_key": "secrets", "region_name": "config",
        "aws_session_token": "cfg-token", "profile_name": "home-profile",
    }
    assert section.sources["aws_access_key_id"] == "environment variable DESTINATION__FILESYSTEM__CREDENTIALS__AWS_ACCESS_KEY_ID"
    assert section.sources["aws_secret_access_key"].endswith("secrets.toml [destination.credentials]")
    assert section.sources["region_name"].endswith(".lakeload/config.toml [destination.filesystem.credentials]")
    assert section.sources["profile_name"].startswith(str(Path.home()))
    assert section.keys_tried[:2] == ["DESTINATION__FILESYSTEM__CREDENTIALS", "DESTINATION__CREDENTIALS"]


def test_pipeline_scoped_fields_come_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__SFTP_USERNAME", "global")
    monkeypatch.setenv("P1__DESTINATION__FILESYSTEM__CREDENTIALS__SFTP_USERNAME", "p1-user")
    write(Path(".lakeload/secrets.toml"), "[p2.destination.credentials]\nsftp_username = 'p2-user'\n")
    assert resolve_section(SECTIONS, "credentials", "p1").fields["sftp_username"] == "p1-user"
    # as dlt: pipeline-scoped keys are looked up in every provider (TOML too) before the unscoped ones
    assert resolve_section(SECTIONS, "credentials", "p2").fields["sftp_username"] == "p2-user"
    assert resolve_section(SECTIONS, "credentials", "p3").fields["sftp_username"] == "global"
    monkeypatch.delenv("DESTINATION__FILESYSTEM__CREDENTIALS__SFTP_USERNAME")
    assert resolve_section(SECTIONS, "credentials", "p2").fields["sftp_username"] == "p2-user"
    assert resolve_section(SECTIONS, "credentials", "p3").fields == {}


def test_whole_section_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    write(Path(".lakeload/secrets.toml"), f"[destination.filesystem]\ncredentials = '{AZURE}'\n")
    section = resolve_section(SECTIONS, "credentials")
    assert section.native == AZURE and section.fields == {} and "secrets.toml" in str(section.native_source)
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS", '{"azure_storage_account_name": "dltdata"}')
    section = resolve_section(SECTIONS, "credentials")
    assert section.fields == {"azure_storage_account_name": "dltdata"}
    assert section.sources["azure_storage_account_name"] == "environment variable DESTINATION__FILESYSTEM__CREDENTIALS"


def test_configured_credentials_reach_the_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__AZURE_STORAGE_ACCOUNT_NAME", "dltdata")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__AZURE_STORAGE_ACCOUNT_KEY", "storage key")
    creds = lakeload.destinations.filesystem("az://container").configuration().credentials
    assert isinstance(creds, Credentials)
    assert creds.to_dict() == {"azure_storage_account_name": "dltdata", "azure_storage_account_key": "storage key"}
    assert "DESTINATION__FILESYSTEM__CREDENTIALS__AZURE_STORAGE_ACCOUNT_KEY" in str(creds.source("azure_storage_account_key"))
    assert lakeload.destinations.filesystem("/tmp/x", destination_name="other").configuration().credentials is None


@dataclasses.dataclass
class AwsLike:
    aws_access_key_id: str = "AKIAEXPLICIT"
    aws_secret_access_key: str = "explicit-secret"


class PlainObject:
    def __init__(self) -> None:
        self.sftp_username = "explicit-user"
        self.sftp_password = "explicit-password"
        self._private = "hidden"

    def method(self) -> None:  # pragma: no cover - not a field
        pass


@pytest.mark.parametrize("explicit,fields,native", [
    ({"aws_access_key_id": "AKIAEXPLICIT"}, {"aws_access_key_id": "AKIAEXPLICIT"}, None),
    (AwsLike(), {"aws_access_key_id": "AKIAEXPLICIT", "aws_secret_access_key": "explicit-secret"}, None),
    (PlainObject(), {"sftp_username": "explicit-user", "sftp_password": "explicit-password"}, None),
    ('{"aws_access_key_id": "AKIAEXPLICIT"}', {"aws_access_key_id": "AKIAEXPLICIT"}, None),
    (AZURE, {}, AZURE),
])
def test_explicit_credentials_replace_configured_ones(
    explicit: object, fields: dict[str, str], native: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__REGION_NAME", "configured-region")
    write(Path(".lakeload/secrets.toml"), "[destination.filesystem.credentials]\naws_secret_access_key = 'configured'\n")
    creds = lakeload.destinations.filesystem("s3://bucket", credentials=explicit).configuration().credentials
    assert creds is not None
    assert creds.to_dict() == fields and creds.native == native  # no field-by-field merge with configured ones
    assert all(creds.source(name) == "explicit argument" for name in fields)
    assert "configured" not in repr(creds)


def test_dlt_credentials_object_is_accepted() -> None:
    specs = pytest.importorskip("dlt.common.configuration.specs")
    aws = specs.AwsCredentials()
    aws.aws_access_key_id, aws.aws_secret_access_key, aws.region_name = "AKIADLT", "dlt-secret", "eu-central-1"
    creds = lakeload.destinations.filesystem("s3://bucket", credentials=aws).configuration().credentials
    assert creds is not None and creds["aws_secret_access_key"] == "dlt-secret" and creds["region_name"] == "eu-central-1"
    assert "dlt-secret" not in repr(creds) and "AKIADLT" not in str(creds)


def test_bad_explicit_credentials() -> None:
    with pytest.raises(ConfigurationError, match="JSON"):
        lakeload.destinations.filesystem("s3://b", credentials='{"not": json').configuration()
    with pytest.raises(ConfigurationError, match="carry no fields"):
        lakeload.destinations.filesystem("s3://b", credentials=42).configuration()


@pytest.mark.parametrize("name", [
    "aws_secret_access_key", "aws_access_key_id", "sftp_password", "hf_token", "azure_storage_sas_token",
    "private_key", "sftp_key_passphrase", "client_credential", "connection_string", "Password",
])
def test_secret_names_are_masked(name: str) -> None:
    assert is_secret_key(name)
    creds = Credentials({name: "s3cr3t-value", "region_name": "eu-central-1", "sftp_port": 22})
    for text in (repr(creds), str(creds), f"{creds}"):
        assert "s3cr3t-value" not in text and "'***'" in text and "eu-central-1" in text and "22" in text


def test_nothing_secret_is_printed_by_the_configuration() -> None:
    creds = {"aws_secret_access_key": "s3cr3t-value", "nested": {"password": "n3sted"}}
    config = lakeload.destinations.filesystem("s3://bucket", credentials=creds).configuration()
    text = repr(config) + str(config)
    assert "s3cr3t-value" not in text and "n3sted" not in text and "s3://bucket" in text
    native = lakeload.destinations.filesystem("az://c", credentials=AZURE).configuration()
    assert "c2VjcmV0a2V5" not in repr(native) and "native='***'" in repr(native)
    assert not is_secret_key("region_name") and mask_value("kwargs", {"secret": "x", "use_ssl": True}) == {
        "secret": "***", "use_ssl": True}

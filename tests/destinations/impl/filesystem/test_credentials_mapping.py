"""Typed credentials per backend and their mapping to fsspec arguments; no servers needed."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import fsspec
import paramiko
import pytest

from lakeload.config.bucket_credentials import (
    AwsCredentials,
    AzureCredentials,
    GcpCredentials,
    SFTPCredentials,
    credentials_class_for,
    fsspec_options,
    masked_options,
    secret_values,
    typed_credentials,
)
from lakeload.config.credentials import Credentials
from lakeload.destinations.impl.filesystem.client import fsspec_kwargs, open_filesystem
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.errors import ConfigurationError, DestinationError
from lakeload.kernel.filesystem import sftp_fs
from lakeload.kernel.filesystem.sftp_fs import (
    HostKeyVerificationError,
    VerifiedSFTPFileSystem,
    auth_attempts,
    auth_methods,
)

PEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC-private-pem\n-----END PRIVATE KEY-----\n"

# every secret field of every backend, with a value that must never show up in a repr or a message
SECRETS: dict[type, dict[str, Any]] = {
    AwsCredentials: {
        "aws_access_key_id": "AKIA-secret-id-1", "aws_secret_access_key": "aws-secret-2",
        "aws_session_token": "aws-session-3",
    },
    GcpCredentials: {
        "client_email": "sa@p.iam", "private_key": PEM, "private_key_id": "pkid-secret-4",
        "client_secret": "gcp-client-secret-5", "refresh_token": "gcp-refresh-6", "token": "gcp-token-7",
    },
    AzureCredentials: {
        "azure_storage_account_name": "acc", "azure_storage_account_key": "az-key-8",
        "azure_storage_sas_token": "sv=az-sas-9", "azure_client_secret": "az-client-secret-10",
        "azure_tenant_id": "t", "azure_client_id": "c",
        "azure_connection_string": "AccountName=acc;AccountKey=az-conn-key-11",
    },
    SFTPCredentials: {"sftp_password": "sftp-password-12", "sftp_key_passphrase": "sftp-passphrase-13"},
}
NOT_SECRET = {"aws_access_key_id", "client_email", "azure_storage_account_name", "azure_tenant_id", "azure_client_id"}




def secret_texts(cls: type) -> list[str]:
    texts = [v for k, v in SECRETS[cls].items() if k not in NOT_SECRET or k == "aws_access_key_id"]
    return texts + ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC-private-pem", "az-conn-key-11"]


# ---- registry ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "protocol, cls",
    [("s3", AwsCredentials), ("s3a", AwsCredentials), ("gs", GcpCredentials), ("gcs", GcpCredentials),
     ("az", AzureCredentials), ("abfs", AzureCredentials), ("abfss", AzureCredentials), ("adl", AzureCredentials),
     ("azure", AzureCredentials), ("sftp", SFTPCredentials), ("ssh", SFTPCredentials), ("file", None), ("memory", None)],
)
def test_registry(protocol: str, cls: type | None) -> None:
    assert credentials_class_for(protocol) is cls
    assert credentials_class_for(protocol.upper()) is cls


def test_unknown_protocol_lists_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match=r"'ftp'.*Known protocols: .*az.*gs.*memory.*s3.*sftp"):
        credentials_class_for("ftp")
    with pytest.raises(ConfigurationError, match="Known protocols"):
        fsspec_options("https", Credentials({"x": 1}))
    # other fsspec protocols without credentials: kwargs pass through
    assert fsspec_options("https", None, {"block_size": 0}) == {"block_size": 0}


def test_memory_and_file_need_no_credentials() -> None:
    assert fsspec_options("memory", None) == {}
    assert fsspec_options("file", None) == {"auto_mkdir": True}
    assert fsspec_options("file", None, {"auto_mkdir": False}) == {"auto_mkdir": False}
    # shared credentials sections (e.g. [destination.credentials]) don't break a local bucket
    assert fsspec_options("memory", Credentials({"aws_access_key_id": "k"})) == {}
    assert typed_credentials("file", Credentials({"a": 1})) is None


@pytest.mark.parametrize("cls", [AwsCredentials, GcpCredentials, AzureCredentials, SFTPCredentials])
def test_unknown_field_names_the_valid_ones(cls: type) -> None:
    creds = Credentials({"not_a_field": "x"}, sources={"not_a_field": "environment variable X__NOT_A_FIELD"})
    with pytest.raises(ConfigurationError) as info:
        cls.from_credentials(creds)
    message = str(info.value)
    assert "'not_a_field'" in message and "environment variable X__NOT_A_FIELD" in message
    assert all(name in message for name in cls.field_names())


# ---- defaults are dlt's ---------------------------------------------------------------------------


def _dlt_defaults(spec: Any, names: list[str]) -> dict[str, Any]:
    instance = spec()
    return {n: getattr(instance, n) for n in names if hasattr(instance, n)}


def test_defaults_match_dlt() -> None:
    specs = pytest.importorskip("dlt.common.configuration.specs")
    pairs = [
        (AwsCredentials, specs.AwsCredentialsWithoutDefaults),
        (GcpCredentials, specs.GcpServiceAccountCredentialsWithoutDefaults),
        (GcpCredentials, specs.GcpOAuthCredentialsWithoutDefaults),
        (AzureCredentials, specs.AzureCredentialsWithoutDefaults),
        (AzureCredentials, specs.AzureServicePrincipalCredentialsWithoutDefaults),
        (SFTPCredentials, specs.SFTPCredentials),
    ]
    for ours, theirs in pairs:
        names = [n for n in ours.field_names() if hasattr(theirs(), n)]
        mine = {f.name: f.default for f in dataclasses.fields(ours) if f.name in names}
        assert mine == _dlt_defaults(theirs, names), ours.__name__
    sftp_fields = [n for n in SFTPCredentials.field_names() if n.startswith("sftp_")]
    assert len(set(sftp_fields) & set(_dlt_defaults(specs.SFTPCredentials, sftp_fields))) == 17


# ---- AWS ------------------------------------------------------------------------------------------


def test_aws_every_field() -> None:
    creds = Credentials({
        "aws_access_key_id": "AKIA", "aws_secret_access_key": "S", "aws_session_token": "T",
        "profile_name": "ci", "region_name": "eu-central-1", "endpoint_url": "http://minio:9000",
        "s3_url_style": "path", "aws_sts_token_expiration_hours": "12",
    })
    typed = AwsCredentials.from_credentials(creds)
    assert typed.aws_sts_token_expiration_hours == 12.0
    assert fsspec_options("s3", creds) == {
        "use_listings_cache": False,
        "key": "AKIA", "secret": "S", "token": "T", "profile": "ci", "endpoint_url": "http://minio:9000",
        "client_kwargs": {"region_name": "eu-central-1"},
        "config_kwargs": {
            "request_checksum_calculation": "when_required", "response_checksum_validation": "when_required",
            "s3": {"addressing_style": "path"},
        },
    }


def test_aws_default_chain_passes_no_empty_values() -> None:
    assert fsspec_options("s3", None) == {"use_listings_cache": False}
    assert fsspec_options("s3", Credentials({"region_name": "us-west-2", "aws_access_key_id": ""})) == {
        "use_listings_cache": False, "client_kwargs": {"region_name": "us-west-2"},
    }
    assert fsspec_options("s3", Credentials({"profile_name": "dev"}))["profile"] == "dev"
    assert AwsCredentials().aws_sts_token_expiration_hours == 24.0


def test_aws_merges_user_kwargs_and_client_kwargs() -> None:
    opts = fsspec_options(
        "s3", Credentials({"region_name": "eu-west-1", "endpoint_url": "http://x"}),
        {"use_ssl": False, "config_kwargs": {"request_checksum_calculation": "when_supported"}},
        {"verify": "ca.pem", "region_name": "ignored"},
    )
    assert opts["client_kwargs"] == {"verify": "ca.pem", "region_name": "eu-west-1"}  # credentials win
    assert opts["config_kwargs"]["request_checksum_calculation"] == "when_supported"  # user kwargs win
    assert opts["use_ssl"] is False


@pytest.mark.parametrize(
    "fields, match",
    [({"aws_access_key_id": "A"}, "aws_secret_access_key"), ({"aws_secret_access_key": "S"}, "aws_access_key_id"),
     ({"aws_session_token": "T"}, "aws_session_token"), ({"s3_url_style": "sideways"}, "s3_url_style"),
     ({"aws_sts_token_expiration_hours": "soon"}, "not a valid float")],
)
def test_aws_inconsistent(fields: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        fsspec_options("s3", Credentials(fields))


def test_aws_native_string_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="no native string form"):
        fsspec_options("s3", Credentials(native="AKIA:secret"))


# ---- GCP ------------------------------------------------------------------------------------------


def test_gcp_service_account_every_field() -> None:
    fields = {"project_id": "p", "private_key": PEM.rstrip("\n"), "private_key_id": "kid", "client_email": "sa@p.iam"}
    opts = fsspec_options("gs", Credentials(fields))
    assert opts["project"] == "p"
    assert opts["token"] == {
        "type": "service_account", "project_id": "p", "private_key_id": "kid", "private_key": PEM,
        "client_email": "sa@p.iam", "token_uri": "https://oauth2.googleapis.com/token",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
    }
    escaped = GcpCredentials(client_email="a", private_key=PEM.replace("\n", "\\n"))
    assert escaped.service_account_info()["private_key"] == PEM


def test_gcp_native_service_account_json() -> None:
    key_file = {
        "type": "service_account", "project_id": "p", "private_key_id": "kid", "private_key": PEM,
        "client_email": "sa@p.iam", "client_id": "123", "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token", "universe_domain": "googleapis.com",
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/sa",
    }
    typed = GcpCredentials.from_credentials(Credentials(native=json.dumps(key_file)))
    assert typed.kind == "service_account"
    assert typed.service_account_info() == key_file
    # Credentials.from_value parses a JSON string into fields: same result
    assert fsspec_options("gcs", Credentials.from_value(json.dumps(key_file)))["token"] == key_file
    with pytest.raises(ConfigurationError, match="JSON of a service account"):
        GcpCredentials.from_credentials(Credentials(native="/path/to/key.json"))


def test_gcp_oauth() -> None:
    creds = Credentials({"project_id": "p", "client_id": "cid", "client_secret": "cs", "refresh_token": "rt",
                         "scopes": "a b"})
    typed = GcpCredentials.from_credentials(creds)
    assert (typed.kind, typed.scopes, typed.client_type) == ("oauth", ["a", "b"], "installed")
    assert fsspec_options("gs", creds)["token"] == {
        "client_id": "cid", "client_secret": "cs", "refresh_token": "rt", "token_uri": "https://oauth2.googleapis.com/token",
    }
    assert fsspec_options("gs", Credentials({"token": "ya29.x"}))["token"] == "ya29.x"
    client_file = json.dumps({"installed": {"client_id": "cid", "client_secret": "cs", "redirect_uris": ["x"]}})
    assert GcpCredentials.from_credentials(Credentials({"refresh_token": "rt"}, native=client_file)).client_id == "cid"
    with pytest.raises(ConfigurationError, match="refresh_token"):
        fsspec_options("gs", Credentials({"client_id": "cid", "client_secret": "cs"}))


def test_gcp_default_credentials() -> None:
    assert fsspec_options("gs", None) == {"use_listings_cache": False, "token": "google_default"}
    assert fsspec_options("gs", Credentials({"project_id": "p"})) == {
        "use_listings_cache": False, "token": "google_default", "project": "p",
    }
    # an emulator: kwargs override the default-chain token
    assert fsspec_options("gs", Credentials({"project_id": "p"}), {"token": "anon"})["token"] == "anon"
    with pytest.raises(ConfigurationError, match="private_key"):
        fsspec_options("gs", Credentials({"client_email": "sa@p"}))


# ---- Azure ----------------------------------------------------------------------------------------


def test_azure_account_key_and_sas() -> None:
    creds = Credentials({"azure_storage_account_name": "acc", "azure_account_host": "acc.blob.example",
                         "azure_storage_account_key": "K", "azure_storage_sas_token": "sv=1",
                         "azure_sas_token_permissions": "rl", "azure_sas_token_expiration_hours": "2"})
    typed = AzureCredentials.from_credentials(creds)
    assert (typed.azure_sas_token_permissions, typed.azure_sas_token_expiration_hours) == ("rl", 2.0)
    assert fsspec_options("az", creds) == {
        "max_concurrency": 1, "use_listings_cache": False, "account_name": "acc",
        "account_host": "acc.blob.example", "account_key": "K", "sas_token": "sv=1",
    }
    assert fsspec_options("abfss", Credentials({"azure_storage_account_name": "a", "azure_storage_sas_token": "s"}))[
        "sas_token"] == "s"


def test_azure_service_principal() -> None:
    creds = Credentials({"azure_storage_account_name": "acc", "azure_tenant_id": "t", "azure_client_id": "c",
                         "azure_client_secret": "s"})
    opts = fsspec_options("az", creds)
    assert {k: opts[k] for k in ("account_name", "tenant_id", "client_id", "client_secret")} == {
        "account_name": "acc", "tenant_id": "t", "client_id": "c", "client_secret": "s"}
    assert "anon" not in opts
    with pytest.raises(ConfigurationError, match="azure_client_secret is missing"):
        fsspec_options("az", Credentials({"azure_storage_account_name": "a", "azure_tenant_id": "t", "azure_client_id": "c"}))


def test_azure_connection_string_native_form() -> None:
    conn = "DefaultEndpointsProtocol=http;AccountName=dev;AccountKey=a2V5==;BlobEndpoint=http://127.0.0.1:1/dev;"
    typed = AzureCredentials.from_credentials(Credentials(native=conn))
    assert (typed.kind, typed.azure_storage_account_name, typed.azure_storage_account_key) == (
        "connection_string", "dev", "a2V5==")
    assert fsspec_options("az", Credentials(native=conn)) == {
        "max_concurrency": 1, "use_listings_cache": False, "account_name": "dev", "connection_string": conn.strip(),
    }
    with pytest.raises(ConfigurationError, match="connection string"):
        AzureCredentials.from_credentials(Credentials(native="just-a-key"))


def test_azure_default_credentials_and_max_concurrency() -> None:
    assert fsspec_options("az", Credentials({"azure_storage_account_name": "acc"})) == {
        "max_concurrency": 1, "use_listings_cache": False, "anon": False, "account_name": "acc"}
    assert fsspec_options("az", None, {"max_concurrency": 8})["max_concurrency"] == 8
    with pytest.raises(ConfigurationError, match="azure_storage_account_name is required"):
        fsspec_options("az", Credentials({"azure_storage_account_key": "k"}))


# ---- SFTP -----------------------------------------------------------------------------------------

SFTP_FIELDS = {
    "sftp_port": "2222", "sftp_username": "foo", "sftp_password": "pw", "sftp_key_filename": "/k/id_ed25519",
    "sftp_key_passphrase": "pp", "sftp_timeout": "5", "sftp_banner_timeout": 6, "sftp_auth_timeout": 7.5,
    "sftp_channel_timeout": "8", "sftp_allow_agent": "false", "sftp_look_for_keys": "0", "sftp_compress": "true",
    "sftp_gss_auth": "yes", "sftp_gss_kex": True, "sftp_gss_deleg_creds": "off", "sftp_gss_host": "kdc",
    "sftp_gss_trust_dns": False, "sftp_known_hosts": "/etc/ssh/known", "sftp_verify_host_key": "false",
}


def test_sftp_every_field() -> None:
    assert fsspec_options("sftp", Credentials(SFTP_FIELDS)) == {
        "port": 2222, "username": "foo", "password": "pw", "key_filename": "/k/id_ed25519", "passphrase": "pp",
        "timeout": 5.0, "banner_timeout": 6.0, "auth_timeout": 7.5, "channel_timeout": 8.0, "allow_agent": False,
        "look_for_keys": False, "compress": True, "gss_auth": True, "gss_kex": True, "gss_deleg_creds": False,
        "gss_host": "kdc", "gss_trust_dns": False, "known_hosts": "/etc/ssh/known", "verify_host_key": False,
    }


def test_sftp_defaults() -> None:
    assert fsspec_options("sftp", None) == {
        "port": 22, "allow_agent": True, "look_for_keys": True, "compress": False, "gss_auth": False,
        "gss_kex": False, "gss_deleg_creds": True, "gss_trust_dns": True, "verify_host_key": True,
    }
    with pytest.raises(ConfigurationError, match="not a valid bool"):
        SFTPCredentials.from_credentials(Credentials({"sftp_compress": "maybe"}))
    with pytest.raises(ConfigurationError, match="not a TCP port"):
        SFTPCredentials.from_credentials(Credentials({"sftp_port": 0}))


def test_sftp_port_and_user_from_the_url() -> None:
    url = "sftp://bob@host:2200/data"
    assert "port" not in fsspec_options("sftp", None, bucket_url=url)
    assert "username" not in fsspec_options("sftp", Credentials({"sftp_username": "bob"}), bucket_url=url)
    with pytest.raises(ConfigurationError, match="port 2200.*sftp_port=2222"):
        fsspec_options("sftp", Credentials({"sftp_port": 2222}), bucket_url=url)
    assert fsspec_options("sftp", Credentials({"sftp_port": 2222}), bucket_url="sftp://host/d")["port"] == 2222


@pytest.mark.parametrize(
    "fields, expected",
    [
        ({}, ["agent", "look_for_keys"]),
        ({"sftp_key_filename": "/k", "sftp_password": "p"}, ["key_filename", "agent", "look_for_keys", "password"]),
        ({"sftp_password": "p", "sftp_allow_agent": False, "sftp_look_for_keys": False}, ["password"]),
        ({"sftp_gss_auth": True, "sftp_password": "p", "sftp_key_filename": "/k"},
         ["key_filename", "agent", "look_for_keys", "password", "gssapi"]),
        ({"sftp_gss_auth": True, "sftp_allow_agent": False, "sftp_look_for_keys": False}, ["gssapi"]),
    ],
)
def test_sftp_auth_priority(fields: dict[str, Any], expected: list[str]) -> None:
    assert SFTPCredentials.from_credentials(Credentials(fields)).auth_methods() == expected


def test_sftp_auth_attempts_put_gssapi_last_and_alone() -> None:
    opts = fsspec_options("sftp", Credentials({"sftp_key_filename": "/k", "sftp_password": "p", "sftp_gss_auth": True,
                                               "sftp_gss_host": "kdc"}))
    attempts = auth_attempts({k: v for k, v in opts.items() if k not in ("known_hosts", "verify_host_key")})
    assert [name for name, _ in attempts] == ["key/agent/password", "gssapi"]
    first, second = attempts[0][1], attempts[1][1]
    assert first["key_filename"] == "/k" and first["password"] == "p"
    assert not first.get("gss_auth") and "gss_host" not in first
    assert second["gss_auth"] is True and second["gss_host"] == "kdc"
    assert "password" not in second and "key_filename" not in second
    assert second["allow_agent"] is False and second["look_for_keys"] is False
    assert auth_methods({"allow_agent": False, "look_for_keys": False}) == []


# ---- VerifiedSFTPFileSystem without a server: a recording SSHClient ---------------------------------


class FakeSFTP:
    """The SFTP session of `FakeSSHClient`: only what opening the file system asks (file operations are tested
    against the real SFTP server in test_backends_live.py)."""

    def stat(self, path: str) -> Any:
        if path == "/":
            return paramiko.SFTPAttributes.from_stat(Path("/").stat())
        raise FileNotFoundError(path)


class FakeSSHClient:
    instances: list[FakeSSHClient] = []
    fail_first = False

    def __init__(self) -> None:
        self.policy: Any = None
        self.loaded: list[str] = []
        self.connected: dict[str, Any] | None = None
        FakeSSHClient.instances.append(self)

    def load_system_host_keys(self, filename: str) -> None:
        self.loaded.append(filename)

    def set_missing_host_key_policy(self, policy: Any) -> None:
        self.policy = policy

    def connect(self, hostname: str, **kwargs: Any) -> None:
        if FakeSSHClient.fail_first and len(FakeSSHClient.instances) == 1:
            raise paramiko.AuthenticationException("Authentication failed.")
        self.connected = kwargs

    def open_sftp(self) -> FakeSFTP:
        return FakeSFTP()

    def close(self) -> None:
        pass


@pytest.fixture
def fake_ssh(monkeypatch: pytest.MonkeyPatch) -> type[FakeSSHClient]:
    FakeSSHClient.instances = []
    FakeSSHClient.fail_first = False
    monkeypatch.setattr(sftp_fs.paramiko, "SSHClient", FakeSSHClient)
    return FakeSSHClient


def _open(**kwargs: Any) -> VerifiedSFTPFileSystem:
    return VerifiedSFTPFileSystem("sftp.example", skip_instance_cache=True, **kwargs)


def test_known_hosts_verified_by_default(fake_ssh: type[FakeSSHClient], tmp_path: Path) -> None:
    home_known = Path("~/.ssh/known_hosts").expanduser()  # HOME is a temporary folder in tests
    home_known.parent.mkdir(parents=True, exist_ok=True)
    home_known.write_text("")
    _open(password="p", **fsspec_options("sftp", None))
    client = fake_ssh.instances[-1]
    assert isinstance(client.policy, paramiko.RejectPolicy)
    assert client.loaded == [str(home_known)]

    explicit = tmp_path / "known"
    explicit.write_text("")
    _open(known_hosts=str(explicit))
    assert fake_ssh.instances[-1].loaded == [str(explicit)]
    with pytest.raises(HostKeyVerificationError, match="does not exist"):
        _open(known_hosts=str(tmp_path / "missing"))


def test_known_hosts_opt_out_accepts_any_key(fake_ssh: type[FakeSSHClient]) -> None:
    _open(**fsspec_options("sftp", Credentials({"sftp_verify_host_key": False, "sftp_known_hosts": "/nope"})))
    client = fake_ssh.instances[-1]
    assert isinstance(client.policy, paramiko.AutoAddPolicy) and client.loaded == []


def test_gssapi_tried_after_the_others_fail(fake_ssh: type[FakeSSHClient], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sftp_fs, "PARAMIKO_HAS_GSS", True)
    fake_ssh.fail_first = True
    fs = _open(password="p", allow_agent=False, look_for_keys=False, gss_auth=True, gss_host="kdc")
    first, second = fake_ssh.instances
    assert first.connected is None and second.connected is not None
    assert second.connected["gss_auth"] is True and "password" not in second.connected
    assert fs.client is second


def test_gssapi_without_paramiko_support_says_so(fake_ssh: type[FakeSSHClient], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sftp_fs, "PARAMIKO_HAS_GSS", False)
    fake_ssh.fail_first = True
    with pytest.raises(paramiko.AuthenticationException, match="Authentication failed.*GSS-API .*paramiko < 5"):
        _open(password="p", allow_agent=False, look_for_keys=False, gss_auth=True)
    with pytest.raises(paramiko.AuthenticationException, match="no SFTP authentication method"):
        _open(allow_agent=False, look_for_keys=False)


def test_sftp_registration() -> None:
    sftp_fs.register_sftp()
    assert fsspec.get_filesystem_class("sftp") is VerifiedSFTPFileSystem
    assert fsspec.get_filesystem_class("ssh") is VerifiedSFTPFileSystem


# ---- secrets never leak ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [AwsCredentials, GcpCredentials, AzureCredentials, SFTPCredentials])
def test_repr_and_str_mask_secrets(cls: type) -> None:
    typed = cls(**SECRETS[cls])
    for text in (repr(typed), str(typed), repr(typed.masked()), f"{typed}"):
        for value in secret_texts(cls):
            assert value not in text, (cls.__name__, value)
    assert "***" in repr(typed)


@pytest.mark.parametrize(
    "protocol, cls", [("s3", AwsCredentials), ("gs", GcpCredentials), ("az", AzureCredentials), ("sftp", SFTPCredentials)]
)
def test_masked_options_show_no_secrets(protocol: str, cls: type) -> None:
    fields = dict(SECRETS[cls])
    if cls is GcpCredentials:
        fields = {k: v for k, v in fields.items() if k not in ("client_secret", "refresh_token", "token")}
    if cls is AzureCredentials:  # one auth method at a time: the key and SAS, then the connection string
        fields = {k: v for k, v in fields.items() if not k.startswith(("azure_tenant", "azure_client", "azure_conn"))}
    options = fsspec_options(protocol, Credentials(fields))
    shown = masked_options(options)
    for text in (repr(shown), str(shown)):
        for value in fields.values():
            if value not in ("acc", "sa@p.iam"):
                assert value not in text
    assert set(secret_values(options)) >= {v for k, v in fields.items() if k not in NOT_SECRET}
    assert repr(Credentials(fields)).count("***") >= 1


def test_masked_options_hide_azure_connection_string_and_service_principal() -> None:
    conn = "DefaultEndpointsProtocol=https;AccountName=acc;AccountKey=conn-key-77"
    for creds in (Credentials(native=conn), Credentials({"azure_storage_account_name": "acc", "azure_tenant_id": "t",
                                                         "azure_client_id": "c", "azure_client_secret": "sp-78"})):
        options = fsspec_options("az", creds)
        assert "conn-key-77" not in repr(masked_options(options)) and "sp-78" not in repr(masked_options(options))
        assert any(v in secret_values(options) for v in (conn, "sp-78"))


def test_masked_options_keeps_harmless_values() -> None:
    options = fsspec_options("sftp", Credentials({"sftp_key_filename": "/k", "sftp_known_hosts": "/kh"}))
    shown = masked_options(options)
    assert (shown["key_filename"], shown["known_hosts"], shown["verify_host_key"], shown["look_for_keys"]) == (
        "/k", "/kh", True, True)


class LeakyFileSystem(fsspec.AbstractFileSystem):
    protocol = "leakytest"

    def __init__(self, **kwargs: Any) -> None:
        raise ValueError(f"invalid key {kwargs.get('secret')!r} for user {kwargs.get('user')}")


def test_open_filesystem_error_hides_secrets() -> None:
    fsspec.register_implementation("leakytest", LeakyFileSystem, clobber=True)
    with pytest.raises(DestinationError) as info:
        open_filesystem("leakytest://bucket", {"secret": "hunter2-secret", "user": "bob", "skip_instance_cache": True})
    message = str(info.value)
    assert "hunter2-secret" not in message and "***" in message and "bob" in message
    assert info.value.__cause__ is None and info.value.__suppress_context__  # the leaky original is dropped

    with pytest.raises(DestinationError) as info:
        open_filesystem("leakytest://bucket", {"secret": None, "user": "bob", "skip_instance_cache": True})
    assert isinstance(info.value.__cause__, ValueError)  # nothing secret in it: kept for debugging


def test_open_filesystem_hides_url_password() -> None:
    with pytest.raises(DestinationError) as info:
        open_filesystem("sftp://bob:url-pass-99@127.0.0.1:1/data", fsspec_options("sftp", Credentials(
            {"sftp_password": "pw-secret-98", "sftp_allow_agent": False, "sftp_look_for_keys": False, "sftp_timeout": 5}
        ), bucket_url="sftp://bob:url-pass-99@127.0.0.1:1/data"))
    message = str(info.value)
    assert "url-pass-99" not in message and "pw-secret-98" not in message
    assert "sftp://bob:***@127.0.0.1:1/data" in message


def test_open_filesystem_memory_and_fsspec_kwargs_from_configuration() -> None:
    fs, path = open_filesystem("memory://m/bucket", {})
    assert path == "/m/bucket" and type(fs).__name__ == "MemoryFileSystem"
    config = FilesystemConfiguration(
        "s3://bucket/x", credentials=Credentials({"aws_access_key_id": "A", "aws_secret_access_key": "S"}),
        kwargs={"use_ssl": False}, client_kwargs={"verify": False},
    )
    assert fsspec_kwargs(config) == {
        "use_listings_cache": False, "use_ssl": False, "client_kwargs": {"verify": False}, "key": "A", "secret": "S",
    }
    assert "S'" not in repr(config)

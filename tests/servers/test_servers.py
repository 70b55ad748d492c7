"""The loopback storage servers work with the fsspec clients lakeload uses, and refuse wrong secrets."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import fsspec
import pytest

from servers.fixtures import (
    AzureServer,
    GcsServer,
    S3Server,
    SftpServer,
    azure_storage_options,
    fresh_prefix,
    gcs_storage_options,
    s3_storage_options,
    sftp_storage_options,
)

PAYLOAD = b'{"id": 1, "name": "lakeload"}\n'


def _roundtrip(fs: fsspec.AbstractFileSystem, folder: str) -> None:
    """write, list, read back, delete: ``folder`` is a protocol-less path the prefix lives in."""
    fs.makedirs(folder, exist_ok=True)  # a no-op on buckets; SFTP does not create parent folders
    path = f"{folder}/part-0.jsonl"
    fs.pipe_file(path, PAYLOAD)
    names = [p.rstrip("/").rsplit("/", 1)[-1] for p in fs.ls(folder, detail=False)]
    assert names == ["part-0.jsonl"]
    assert fs.cat_file(path) == PAYLOAD
    assert fs.info(path)["size"] == len(PAYLOAD)
    fs.rm(path)
    fs.invalidate_cache()
    assert not fs.exists(path)


def test_fresh_prefix_is_unique_and_clean() -> None:
    a, b = fresh_prefix("Test Roundtrip[s3]"), fresh_prefix("Test Roundtrip[s3]")
    assert a != b
    assert a.startswith("test-roundtrip-s3-") and "/" not in a


# ---- S3 (moto) -------------------------------------------------------------------------------------


def test_s3_roundtrip(s3_server: S3Server) -> None:
    fs = fsspec.filesystem("s3", skip_instance_cache=True, **s3_storage_options(s3_server))
    prefix = fresh_prefix("s3-roundtrip")
    assert s3_server.url(prefix, "x") == f"s3://lakeload-test/{prefix}/x"
    _roundtrip(fs, f"{s3_server.bucket}/{prefix}")


def test_s3_multipart_upload_is_signed_correctly(s3_server: S3Server) -> None:
    # With moto's auth on, every request's signature is checked: a multipart upload too.
    fs = fsspec.filesystem("s3", skip_instance_cache=True, **s3_storage_options(s3_server))
    path = f"{s3_server.bucket}/{fresh_prefix('s3-multipart')}/big.bin"
    data = os.urandom(6 * 2**20 + 123)
    with fs.open(path, "wb", block_size=5 * 2**20) as f:
        f.write(data)
    assert fs.cat_file(path, start=6 * 2**20, end=6 * 2**20 + 123) == data[-123:]
    assert fs.cat_file(path) == data
    fs.rm(path)


@pytest.mark.parametrize("field", ["secret_key", "access_key"])
def test_s3_wrong_credentials_are_refused(s3_server: S3Server, field: str) -> None:
    wrong = replace(s3_server, **{field: "AKIAWRONGWRONGWRONG0" if field == "access_key" else "wrong-secret"})
    fs = fsspec.filesystem("s3", skip_instance_cache=True, **s3_storage_options(wrong))
    with pytest.raises(PermissionError):
        fs.ls(s3_server.bucket)
    with pytest.raises(PermissionError):
        fs.pipe_file(f"{s3_server.bucket}/{fresh_prefix('s3-refused')}/x", b"x")


# ---- Azure Blob (Azurite) --------------------------------------------------------------------------


def test_azure_roundtrip(azure_server: AzureServer) -> None:
    fs = fsspec.filesystem("az", skip_instance_cache=True, **azure_storage_options(azure_server))
    prefix = fresh_prefix("az-roundtrip")
    assert azure_server.url(prefix) == f"az://lakeload/{prefix}"
    _roundtrip(fs, f"{azure_server.container}/{prefix}")


def test_azure_wrong_key_is_refused(azure_server: AzureServer) -> None:
    from azure.core.exceptions import HttpResponseError

    bad_key = "d3JvbmcteC1rZXktd3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25nIQ=="
    wrong = replace(
        azure_server,
        connection_string=azure_server.connection_string.replace(azure_server.account_key, bad_key),
    )
    fs = fsspec.filesystem("az", skip_instance_cache=True, **azure_storage_options(wrong))
    with pytest.raises((HttpResponseError, PermissionError, OSError)) as err:
        fs.pipe_file(f"{azure_server.container}/{fresh_prefix('az-refused')}/x", b"x")
    assert "403" in str(err.value) or "Authoriz" in str(err.value) or "authenticat" in str(err.value).lower()


# ---- GCS (gcp-storage-emulator) --------------------------------------------------------------------


def test_gcs_roundtrip(gcs_server: GcsServer) -> None:
    fs = fsspec.filesystem("gs", skip_instance_cache=True, **gcs_storage_options(gcs_server))
    prefix = fresh_prefix("gcs-roundtrip")
    assert gcs_server.url(prefix) == f"gs://lakeload-test/{prefix}"
    _roundtrip(fs, f"{gcs_server.bucket}/{prefix}")


# ---- SFTP (asyncssh) -------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def plain_fsspec_sftp() -> Iterator[None]:
    """These tests check the server with fsspec's own SFTP class, whatever lakeload registered before."""
    from fsspec.implementations.sftp import SFTPFileSystem

    saved = {p: fsspec.registry.get(p) for p in ("sftp", "ssh")}
    for protocol in saved:
        fsspec.register_implementation(protocol, SFTPFileSystem, clobber=True)
    yield
    for protocol, cls in saved.items():
        if cls is not None:
            fsspec.register_implementation(protocol, cls, clobber=True)


def test_sftp_roundtrip_password(sftp_server: SftpServer) -> None:
    # paramiko's SFTPFileSystem (or lakeload's host-key-checking subclass of it), not sshfs
    from fsspec.implementations.sftp import SFTPFileSystem

    assert issubclass(fsspec.get_filesystem_class("sftp"), SFTPFileSystem)
    fs = SFTPFileSystem(skip_instance_cache=True, **sftp_storage_options(sftp_server))
    prefix = fresh_prefix("sftp-roundtrip")
    assert sftp_server.url(prefix) == f"sftp://127.0.0.1:{sftp_server.port}{sftp_server.root}/{prefix}"
    _roundtrip(fs, f"{sftp_server.root}/{prefix}")
    # not chrooted: root is the same folder on the local disk
    fs.pipe_file(f"{sftp_server.root}/{prefix}/local.txt", b"seen locally")
    assert (Path(sftp_server.root) / prefix / "local.txt").read_bytes() == b"seen locally"


def test_sftp_url_form_opens(sftp_server: SftpServer) -> None:
    prefix = fresh_prefix("sftp-url")
    opts = sftp_storage_options(sftp_server)
    for k in ("host", "port"):
        opts.pop(k)
    (Path(sftp_server.root) / prefix).mkdir()
    with fsspec.open(sftp_server.url(prefix, "f.txt"), "wb", **opts) as f:
        f.write(PAYLOAD)
    assert (Path(sftp_server.root) / prefix / "f.txt").read_bytes() == PAYLOAD


def test_sftp_key_auth(sftp_server: SftpServer) -> None:
    assert sftp_server.key_passphrase is None
    fs = fsspec.filesystem(
        "sftp",
        skip_instance_cache=True,
        **sftp_storage_options(sftp_server, auth="key", verify_host_key=True),
    )
    _roundtrip(fs, f"{sftp_server.root}/{fresh_prefix('sftp-key')}")


def test_sftp_key_with_passphrase(sftp_server_passphrase_key: SftpServer) -> None:
    s = sftp_server_passphrase_key
    assert s.key_passphrase
    fs = fsspec.filesystem("sftp", skip_instance_cache=True, **sftp_storage_options(s, auth="key"))
    _roundtrip(fs, f"{s.root}/{fresh_prefix('sftp-passphrase')}")

    import paramiko

    with pytest.raises(paramiko.SSHException):  # wrong passphrase: the key cannot be decrypted
        fsspec.filesystem(
            "sftp",
            skip_instance_cache=True,
            **sftp_storage_options(replace(s, key_passphrase="wrong"), auth="key"),
        )


def test_sftp_known_hosts_file(sftp_server: SftpServer) -> None:
    lines = Path(sftp_server.known_hosts).read_text().splitlines()
    assert [ln.split()[0] for ln in lines] == ["127.0.0.1", f"[127.0.0.1]:{sftp_server.port}"]
    import paramiko

    keys = paramiko.HostKeys(sftp_server.known_hosts)
    assert keys.lookup(f"[127.0.0.1]:{sftp_server.port}")


def test_sftp_wrong_password_is_refused(sftp_server: SftpServer) -> None:
    import paramiko

    with pytest.raises(paramiko.AuthenticationException):
        fsspec.filesystem(
            "sftp", skip_instance_cache=True, **sftp_storage_options(replace(sftp_server, password="wrong"))
        )


def test_sftp_unknown_host_key_is_refused(sftp_server: SftpServer, tmp_path: Path) -> None:
    import paramiko

    other = tmp_path / "known_hosts"
    key = paramiko.Ed25519Key.from_private_key_file(sftp_server.key_filename)  # any other ed25519 key
    other.write_text(f"[127.0.0.1]:{sftp_server.port} ssh-ed25519 {key.get_base64()}\n")
    with pytest.raises(paramiko.SSHException):
        fsspec.filesystem(
            "sftp",
            skip_instance_cache=True,
            **sftp_storage_options(replace(sftp_server, known_hosts=str(other)), verify_host_key=True),
        )

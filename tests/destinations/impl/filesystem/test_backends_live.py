"""Each backend opened through `open_filesystem` with credentials in lakeload's form, against real
loopback servers (tests/servers/fixtures.py): write, list, read; SFTP host-key verification."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from servers.fixtures import AzureServer, GcsServer, S3Server, SftpServer, fresh_prefix

from lakeload.config.bucket_credentials import fsspec_options
from lakeload.config.credentials import Credentials
from lakeload.destinations.impl.filesystem.client import open_filesystem
from lakeload.errors import DestinationError
from lakeload.kernel.filesystem.sftp_fs import VerifiedSFTPFileSystem

PAYLOAD = b'{"id": 1, "name": "lakeload"}\n'




def _open(url: str, protocol: str, creds: Credentials | None, kwargs: dict[str, Any] | None = None) -> tuple[Any, str]:
    options = fsspec_options(protocol, creds, {"skip_instance_cache": True, **(kwargs or {})}, bucket_url=url)
    return open_filesystem(url, options)


def _roundtrip(fs: Any, root: str) -> None:
    path = f"{root}/nested/deeper/part-0.jsonl"  # parent folders do not exist yet
    fs.pipe_file(path, PAYLOAD)
    fs.invalidate_cache()
    assert [p.rstrip("/").rsplit("/", 1)[-1] for p in fs.ls(f"{root}/nested/deeper", detail=False)] == ["part-0.jsonl"]
    assert fs.cat_file(path) == PAYLOAD
    with fs.open(path, "rb") as f:
        assert f.read() == PAYLOAD
    fs.rm(path)
    fs.invalidate_cache()
    assert not fs.exists(path)


def test_s3(s3_server: S3Server) -> None:
    creds = Credentials.from_value(s3_server.credentials())
    fs, path = _open(s3_server.url(fresh_prefix("live-s3")), "s3", creds)
    _roundtrip(fs, path)


def test_s3_wrong_secret_is_refused(s3_server: S3Server) -> None:
    creds = Credentials.from_value(s3_server.credentials("wrong-secret-123"))
    fs, path = _open(s3_server.url(fresh_prefix("live-s3-bad")), "s3", creds)  # s3fs connects lazily
    with pytest.raises(PermissionError):
        fs.pipe_file(f"{path}/x", b"x")


def test_azure_connection_string(azure_server: AzureServer) -> None:
    creds = Credentials.from_value(azure_server.connection_string)
    assert creds.native is not None
    fs, path = _open(azure_server.url(fresh_prefix("live-az")), "az", creds)
    assert fs.max_concurrency == 1
    _roundtrip(fs, path)


def test_gcs(gcs_server: GcsServer) -> None:
    creds = Credentials.from_value({"project_id": gcs_server.project})
    fs, path = _open(gcs_server.url(fresh_prefix("live-gs")), "gs", creds,
                     {"endpoint_url": gcs_server.endpoint_url, "token": "anon"})
    _roundtrip(fs, path)


# ---- SFTP -----------------------------------------------------------------------------------------


def _sftp_creds(s: SftpServer, **extra: Any) -> Credentials:
    fields = {"sftp_username": s.username, "sftp_allow_agent": False, "sftp_look_for_keys": False,
              "sftp_timeout": 30, "sftp_known_hosts": s.known_hosts, **extra}
    return Credentials.from_value(fields)


def test_sftp_password_with_verified_host_key(sftp_server: SftpServer) -> None:
    s = sftp_server
    fs, path = _open(s.url(fresh_prefix("live-sftp")), "sftp", _sftp_creds(s, sftp_password=s.password))
    assert isinstance(fs, VerifiedSFTPFileSystem) and fs.verify_host_key
    _roundtrip(fs, path)
    fs.pipe_file(f"{path}/a/b.txt", b"seen locally")
    assert (Path(path) / "a" / "b.txt").read_bytes() == b"seen locally"


def test_sftp_writes_pipelined_with_parents_reads_not_prefetched(sftp_server: SftpServer) -> None:
    """Against the real SFTP server: paramiko's own files, as `VerifiedSFTPFileSystem` opens them."""
    s = sftp_server
    fs, path = _open(s.url(fresh_prefix("live-sftp-pipe")), "sftp", _sftp_creds(s, sftp_password=s.password))
    target = f"{path}/a/b/file.bin"  # parent folders do not exist yet: created on write
    data = PAYLOAD * 5000  # many write requests, sent without waiting for each acknowledgement
    with fs.open(target, "wb") as f:
        assert f.pipelined
        f.write(data)
    assert Path(path, "a", "b").is_dir() and Path(target).read_bytes() == data  # every pipelined write arrived
    with fs.open(target, "rb") as f:  # no prefetch(): with DuckDB-style range reads it can hang in close()
        f.seek(len(data) - len(PAYLOAD))
        assert f.read() == PAYLOAD
        assert not f.pipelined and not f._prefetching


def test_sftp_key_file(sftp_server: SftpServer) -> None:
    s = sftp_server
    fs, path = _open(s.url(fresh_prefix("live-sftp-key")), "sftp", _sftp_creds(s, sftp_key_filename=s.key_filename))
    _roundtrip(fs, path)


def test_sftp_key_passphrase(sftp_server_passphrase_key: SftpServer) -> None:
    s = sftp_server_passphrase_key
    creds = _sftp_creds(s, sftp_key_filename=s.key_filename, sftp_key_passphrase=s.key_passphrase)
    fs, path = _open(s.url(fresh_prefix("live-sftp-pp")), "sftp", creds)
    _roundtrip(fs, path)


def test_sftp_key_tried_before_password(sftp_server: SftpServer) -> None:
    s = sftp_server
    # a wrong password is never needed: the key file comes first and logs in
    creds = _sftp_creds(s, sftp_key_filename=s.key_filename, sftp_password="wrong-password-456")
    fs, path = _open(s.url(fresh_prefix("live-sftp-order")), "sftp", creds)
    assert fs.exists(str(Path(path).parent))


def test_sftp_wrong_password_error_hides_it(sftp_server: SftpServer) -> None:
    s = sftp_server
    with pytest.raises(DestinationError, match=r"check the credentials.*Authentication failed") as info:
        _open(s.url(fresh_prefix("live-sftp-bad")), "sftp", _sftp_creds(s, sftp_password="wrong-password-789"))
    assert "wrong-password-789" not in str(info.value)


def _wrong_known_hosts(s: SftpServer, tmp_path: Path) -> Path:
    """known_hosts with the server's entries but a different key of the same type."""
    lines = []
    for line in Path(s.known_hosts).read_text().splitlines():
        host, keytype, blob = line.split()[:3]
        raw = bytearray(base64.b64decode(blob))
        raw[-1] ^= 0xFF
        lines.append(f"{host} {keytype} {base64.b64encode(bytes(raw)).decode()}")
    path = tmp_path / "wrong_known_hosts"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_sftp_wrong_host_key_refused(sftp_server: SftpServer, tmp_path: Path) -> None:
    s = sftp_server
    creds = _sftp_creds(s, sftp_password=s.password, sftp_known_hosts=str(_wrong_known_hosts(s, tmp_path)))
    with pytest.raises(DestinationError, match="does not match .*man-in-the-middle"):
        _open(s.url("x"), "sftp", creds)


def test_sftp_unknown_host_refused(sftp_server: SftpServer, tmp_path: Path) -> None:
    s = sftp_server
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    with pytest.raises(DestinationError, match="is not in .*ssh-keyscan"):
        _open(s.url("x"), "sftp", _sftp_creds(s, sftp_password=s.password, sftp_known_hosts=str(empty)))
    # the default file is ~/.ssh/known_hosts (HOME is a temporary folder here, without one)
    creds = Credentials.from_value({"sftp_username": s.username, "sftp_password": s.password,
                                    "sftp_allow_agent": False, "sftp_look_for_keys": False})
    with pytest.raises(DestinationError, match=r"\.ssh/known_hosts"):
        _open(s.url("x"), "sftp", creds)


def test_sftp_opt_out_accepts_any_host_key(sftp_server: SftpServer, tmp_path: Path) -> None:
    s = sftp_server
    wrong = _wrong_known_hosts(s, tmp_path)
    before = wrong.read_text()
    creds = _sftp_creds(s, sftp_password=s.password, sftp_verify_host_key=False, sftp_known_hosts=str(wrong))
    fs, path = _open(s.url(fresh_prefix("live-sftp-optout")), "sftp", creds)
    assert not fs.verify_host_key
    _roundtrip(fs, path)
    assert wrong.read_text() == before  # nothing is written back

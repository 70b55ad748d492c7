"""Local bucket_url forms: POSIX, file:// URLs, Windows drive/UNC/extended paths (parsed on Linux too).

dlt's own functions are the reference: POSIX forms are compared with dlt as it runs here, Windows forms
with dlt's `FilesystemConfiguration` running against `ntpath`/`PureWindowsPath` (what it does on Windows).
"""

from __future__ import annotations

import ntpath
import os
from pathlib import Path, PureWindowsPath
from types import SimpleNamespace
from typing import Any
from urllib.parse import unquote

import pytest

import lakeload
from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.configuration import known_protocols, normalize_bucket_url
from lakeload.errors import ConfigurationError

dlt_storage = pytest.importorskip("dlt.common.storages.configuration")


def dlt_bucket_url(bucket_url: str) -> str:
    """What dlt makes of `bucket_url` once its configuration is resolved."""
    config = dlt_storage.FilesystemConfiguration(bucket_url=bucket_url)
    config.on_resolved()
    return str(config.bucket_url)


@pytest.mark.parametrize("bucket_url", ["/data/b", "/data/b/", "rel/b", "rel/b/", "./rel/../b", "~/b", "file:///data/b",
                                        "/data/b c", "file:///data/b%20c"])
def test_posix_forms_match_dlt(bucket_url: str) -> None:
    # lakeload keeps characters literal where dlt %-escapes them: fsspec's local filesystem does not decode.
    assert normalize_bucket_url(bucket_url) == unquote(dlt_bucket_url(bucket_url))


def test_relative_paths_are_under_the_working_folder(tmp_path: Path) -> None:
    assert normalize_bucket_url("_storage/data") == "file://" + os.path.join(os.path.realpath(os.getcwd()), "_storage/data")
    assert normalize_bucket_url("file:/abs/x") == "file:///abs/x"
    # the root: dlt appends the trailing separator once more (`file:////`); lakeload keeps one
    assert normalize_bucket_url("/") == "file:///" and dlt_bucket_url("/") == "file:////"


def test_file_url_hosts() -> None:
    # RFC 8089: `localhost` is this machine; dlt keeps it and reads it as the UNC host `//localhost`.
    assert normalize_bucket_url("file://localhost/data/b") == "file:///data/b"
    assert dlt_storage.FilesystemConfiguration.make_local_path("file://localhost/data/b") == "//localhost/data/b"
    # any other host, or localhost with an administrative share, is a UNC path: file:////host/share/...
    assert normalize_bucket_url("file://host/share/p") == "file:////host/share/p"
    assert normalize_bucket_url("file://localhost/c$/a/b/c") == "file:////localhost/c$/a/b/c"
    assert normalize_bucket_url("file:////localhost/c$/a/b/c") == "file:////localhost/c$/a/b/c"
    assert normalize_bucket_url("file:///C:/a/b") == "file:///C:/a/b"
    assert normalize_bucket_url("file://C:/a/b") == "file:///C:/a/b"


def test_unc_url_is_what_fsspec_strips_to_a_unc_path() -> None:
    import fsspec

    _, path = fsspec.core.url_to_fs(normalize_bucket_url("file://host/share/p"))
    assert path == "//host/share/p"
    _, dlt_form_path = fsspec.core.url_to_fs("file://host/share/p")  # dlt's form is relative for fsspec
    assert dlt_form_path != "//host/share/p"


@pytest.fixture
def dlt_on_windows(monkeypatch: pytest.MonkeyPatch) -> Any:
    """dlt's FilesystemConfiguration with `os.path` = ntpath and `pathlib.Path` = a Windows path."""

    class WindowsPath(PureWindowsPath):
        def expanduser(self) -> WindowsPath:
            return self

        def resolve(self) -> WindowsPath:
            return WindowsPath(ntpath.normpath(str(self)))

    monkeypatch.setattr(dlt_storage, "pathlib", SimpleNamespace(Path=WindowsPath))
    monkeypatch.setattr(dlt_storage, "os", SimpleNamespace(path=ntpath, sep="\\"))
    return dlt_storage.FilesystemConfiguration


def local_path(url: str) -> PureWindowsPath:
    """The Windows path fsspec's local filesystem gives for a file:// URL (its NT rules, on any OS)."""
    path = url.removeprefix("file://")
    if path[:1] == "/" and path[2:3] == ":":
        path = path[1:]
    return PureWindowsPath(path)


def without_extended_prefix(path: str) -> str:
    if path.upper().startswith("\\\\?\\UNC\\"):
        return "\\\\" + path[8:]
    return path[4:] if path.startswith("\\\\?\\") else path


WINDOWS_CASES = [
    ("C:\\data\\x", "file:///C:/data/x"),
    ("C:/data/x", "file:///C:/data/x"),
    ("C:\\data\\x\\", "file:///C:/data/x/"),
    ("C:\\data\\..\\y\\.\\x", "file:///C:/y/x"),
    ("C:\\", "file:///C:/"),
    ("\\\\server\\share\\path", "file:////server/share/path"),
    ("\\\\localhost\\c$\\a\\b\\c", "file:////localhost/c$/a/b/c"),
    ("\\\\?\\C:\\a\\b\\c", "file:///C:/a/b/c"),
    ("\\\\?\\UNC\\localhost\\c$\\a\\b\\c", "file:////localhost/c$/a/b/c"),
]


@pytest.mark.parametrize("bucket_url,expected", WINDOWS_CASES)
def test_windows_forms(bucket_url: str, expected: str, dlt_on_windows: Any) -> None:
    url = normalize_bucket_url(bucket_url)
    assert url == expected
    # dlt on Windows sees a local path, and its URL names the same place as ours
    assert dlt_on_windows.is_local_path(bucket_url) and dlt_on_windows.parse_protocol(bucket_url) == "file"
    dlt_url = dlt_on_windows.make_file_url(bucket_url)
    dlt_local = dlt_on_windows.make_local_path(dlt_url)
    assert PureWindowsPath(without_extended_prefix(dlt_local)) == local_path(url)
    if "?" not in bucket_url and not bucket_url.startswith("\\\\") and bucket_url != "C:\\":  # drive paths: same URL
        assert url == unquote(dlt_url)


def test_windows_paths_on_linux_dlt_reads_a_protocol() -> None:
    """The fact that makes ntpath parsing necessary: dlt, on Linux, takes `C:` for a URL scheme."""
    if os.name == "nt":  # pragma: no cover
        pytest.skip("POSIX only")
    assert dlt_storage.FilesystemConfiguration.parse_protocol("C:\\data\\x") == "c"
    assert normalize_bucket_url("C:\\data\\x") == "file:///C:/data/x"


@pytest.mark.parametrize("bucket_url,message", [
    ("file://", "neither a path nor a host"),
    ("C:data", "relative to the current folder of drive C:"),
    ("\\\\server", "not an absolute Windows path"),
    ("foo://bucket/x", "Protocol not known: foo"),
])
def test_bad_local_forms(bucket_url: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        normalize_bucket_url(bucket_url)


def test_unknown_protocol_lists_known_ones_like_dlt_error() -> None:
    import fsspec

    with pytest.raises(ValueError, match="Protocol not known: foo"):  # what dlt (through fsspec) raises
        fsspec.filesystem("foo")
    with pytest.raises(ConfigurationError) as err:
        lakeload.destinations.filesystem("foo://bucket").configuration()
    assert "Protocol not known: foo" in str(err.value) and "s3" in str(err.value) and "abfss" in str(err.value)
    assert {"file", "memory", "s3", "gs", "az", "sftp"} <= set(known_protocols())
    for url in ("s3://b/p", "memory://m/b", "abfss://c@a.dfs.core.windows.net/p", "gs://b"):
        assert normalize_bucket_url(url) == url


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_kwargs_from_config_toml_reach_fsspec(bucket: Path) -> None:
    write(Path(".lakeload/config.toml"),
          f'[destination.filesystem]\nbucket_url = "{bucket}"\nkwargs = \'{{"auto_mkdir": false}}\'\n'
          "client_kwargs = '{\"verify\": \"public.crt\"}'\n")
    client = FilesystemClient(lakeload.destinations.filesystem().configuration(), "ds")
    assert client.fs.auto_mkdir is False
    assert client.fs.storage_options["client_kwargs"] == {"verify": "public.crt"}
    Path(".lakeload/config.toml").unlink()
    default = FilesystemClient(lakeload.destinations.filesystem(str(bucket)).configuration(), "ds")
    assert default.fs.auto_mkdir is True  # lakeload's default for local buckets


def test_kwargs_from_env_and_tables_reach_fsspec(bucket: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__FILESYSTEM__KWARGS", '{"auto_mkdir": false}')
    client = FilesystemClient(lakeload.destinations.filesystem(str(bucket)).configuration(), "ds")
    assert client.fs.auto_mkdir is False
    monkeypatch.delenv("DESTINATION__FILESYSTEM__KWARGS")
    write(Path(".lakeload/config.toml"), "[destination.filesystem.kwargs]\nauto_mkdir = false\n"
          "[destination.filesystem.client_kwargs]\nverify = false\n")
    client = FilesystemClient(lakeload.destinations.filesystem(str(bucket)).configuration(), "ds")
    assert client.fs.auto_mkdir is False and client.fs.storage_options["client_kwargs"] == {"verify": False}

"""One resolver: explicit > env > secrets.toml > config.toml > ~/.lakeload; most specific key first."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakeload.config.resolver import candidate_paths, env_name, resolve
from lakeload.errors import ConfigFieldMissingError

SECTIONS = ("destination", "filesystem")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_key_order_is_dlts() -> None:
    assert [env_name(p) for p in candidate_paths(SECTIONS, "bucket_url", "e1")] == [
        "E1__DESTINATION__FILESYSTEM__BUCKET_URL", "E1__DESTINATION__BUCKET_URL", "E1__BUCKET_URL",
        "DESTINATION__FILESYSTEM__BUCKET_URL", "DESTINATION__BUCKET_URL", "BUCKET_URL",
    ]


def test_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path.home()
    write(home / ".lakeload" / "config.toml", '[destination.filesystem]\nbucket_url = "home"\n')
    assert resolve(SECTIONS, "bucket_url").value == "home"
    write(Path(".lakeload/config.toml"), '[destination.filesystem]\nbucket_url = "config"\n')
    assert resolve(SECTIONS, "bucket_url").value == "config"
    write(Path(".lakeload/secrets.toml"), '[destination]\nbucket_url = "secrets"\n')
    resolved = resolve(SECTIONS, "bucket_url")
    assert resolved.value == "secrets" and "secrets.toml" in str(resolved.source)
    monkeypatch.setenv("DESTINATION__BUCKET_URL", "env")
    assert resolve(SECTIONS, "bucket_url").value == "env"
    monkeypatch.setenv("P1__DESTINATION__FILESYSTEM__BUCKET_URL", "pipeline-env")
    assert resolve(SECTIONS, "bucket_url", "p1").value == "pipeline-env"
    assert resolve(SECTIONS, "bucket_url", "p2").value == "env"
    assert resolve(SECTIONS, "bucket_url", "p1", explicit="arg").value == "arg"


def test_types_from_env_and_toml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMALIZE__DATA_WRITER__DISABLE_COMPRESSION", "True")
    assert resolve(("normalize", "data_writer"), "disable_compression", hint=bool).value is True
    monkeypatch.setenv("DESTINATION__FILESYSTEM__KWARGS", '{"auto_mkdir": true}')
    assert resolve(SECTIONS, "kwargs", hint=dict).value == {"auto_mkdir": True}


def test_dlt_folder_is_read_when_no_lakeload_folder(caplog: pytest.LogCaptureFixture) -> None:
    write(Path(".dlt/config.toml"), '[destination.filesystem]\nbucket_url = "from-dlt"\n')
    assert resolve(SECTIONS, "bucket_url").value == "from-dlt"


def test_missing_value_lists_keys_and_files() -> None:
    with pytest.raises(ConfigFieldMissingError) as err:
        resolve(SECTIONS, "bucket_url", "e1", required=True)
    assert err.value.keys_tried[0] == "E1__DESTINATION__FILESYSTEM__BUCKET_URL" and "config.toml" in str(err.value)

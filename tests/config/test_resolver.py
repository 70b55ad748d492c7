"""One resolver: explicit > env > secrets.toml > config.toml > ~/.lakeload; most specific key first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lakeload.config.resolver import candidate_paths, env_name, resolve
from lakeload.errors import ConfigFieldMissingError, UnknownConfigKeyWarning

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


def test_resolve_section_gathers_fields_and_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    from lakeload.config.resolver import resolve_section

    write(Path(".lakeload/config.toml"), "[destination.filesystem.credentials]\nproject_id = 'p'\nclient_email = 'c'\n")
    monkeypatch.setenv("DESTINATION__CREDENTIALS__PROJECT_ID", "env")
    monkeypatch.setenv("DESTINATION__CREDENTIALS__NESTED__DEEPER", "ignored")  # not a field of this section
    with pytest.warns(UnknownConfigKeyWarning, match=r"\[destination.credentials.nested\] \(environment variable"):
        section = resolve_section(SECTIONS, "credentials", "e1")
    assert section.fields == {"project_id": "env", "client_email": "c"}
    assert section.sources["project_id"] == "environment variable DESTINATION__CREDENTIALS__PROJECT_ID"
    assert section.keys_tried[0] == "E1__DESTINATION__FILESYSTEM__CREDENTIALS" and section.is_set
    explicit = resolve_section(SECTIONS, "credentials", "e1", explicit={"token": "t"})
    assert explicit.fields == {"token": "t"} and explicit.sources == {"token": "explicit argument"}


def test_kwargs_as_tables_and_stringified_dicts(monkeypatch: pytest.MonkeyPatch) -> None:
    import lakeload
    from lakeload.errors import ConfigurationError

    write(Path(".lakeload/config.toml"), "[destination.filesystem]\nbucket_url = '/tmp/b'\n"
          "kwargs = '{\"auto_mkdir\": true, \"use_ssl\": false}'\n[destination.filesystem.client_kwargs]\nverify = 'public.crt'\n")
    config = lakeload.destinations.filesystem().configuration()
    assert config.kwargs == {"auto_mkdir": True, "use_ssl": False} and config.client_kwargs == {"verify": "public.crt"}
    assert lakeload.destinations.filesystem(kwargs='{"a": 1}').configuration().kwargs == {"a": 1}
    monkeypatch.setenv("DESTINATION__FILESYSTEM__KWARGS", '{"auto_mkdir": true/false}')  # the docs' placeholder
    with pytest.raises(ConfigurationError, match="DESTINATION__FILESYSTEM__KWARGS .* is not a JSON object"):
        lakeload.destinations.filesystem().configuration()
    monkeypatch.setenv("DESTINATION__FILESYSTEM__KWARGS", "[1, 2]")
    with pytest.raises(ConfigurationError, match="must be a dict"):
        lakeload.destinations.filesystem().configuration()


def test_max_state_files_zero_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    import lakeload

    monkeypatch.setenv("DESTINATION__FILESYSTEM__MAX_STATE_FILES", "0")  # dlt: <= 0 disables cleanup
    assert lakeload.destinations.filesystem("/tmp/b").configuration().max_state_files == 0


def test_project_folder_that_is_home_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from lakeload.config.resolver import toml_files

    monkeypatch.setenv("HOME", os.getcwd())
    write(Path(".lakeload/config.toml"), "[destination.filesystem]\nbucket_url = 'x'\n")
    assert toml_files() == [os.path.abspath(".lakeload/config.toml")]

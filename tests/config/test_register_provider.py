"""`config.register_provider(CustomLoaderDocProvider(name, loader))` (issue 36), side by side with dlt 1.31: the
registered document is read after the environment, the values set in code and the TOML files, pipeline-scoped
keys first, by injected source arguments and by the `config`/`secrets` accessors; `lakeload config show` lists it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dlt
import pytest
from compat.compat_harness import isolated_dlt_config
from dlt.common.configuration.providers import CustomLoaderDocProvider as DltCustomLoaderDocProvider

import lakeload
from lakeload.common.configuration.providers import CustomLoaderDocProvider
from lakeload.config.providers import registered_only
from lakeload.errors import ConfigurationError, ConfigValueNotSecretError
from lakeload.runtime.config_report import render_configuration, show_configuration

DOCUMENT = {
    "sources": {"my_source": {"api_key": "doc-key", "page_size": 7, "url": "doc-url", "tags": ["a", "b"]}},
    "scoped_pipe": {"sources": {"my_source": {"page_size": 9}}},
}


@pytest.fixture
def lakeload_providers() -> Iterator[None]:
    with registered_only():
        yield


def script(lib: Any, provider_class: Any, root: Path, pipeline_name: str) -> dict[str, Any]:
    provider = provider_class("yaml_docs", lambda: DOCUMENT)
    lib.config.register_provider(provider)
    os.environ["SOURCES__MY_SOURCE__URL"] = "env-url"  # the environment comes first
    lib.secrets["sources.my_source.api_key"] = "code-key"  # so do values set in code
    lib.pipeline(pipeline_name, destination=lib.destinations.filesystem(str(root / "bucket")),
                 pipelines_dir=str(root / "pipelines"))

    @lib.source
    def my_source(api_key: str = lib.secrets.value, page_size: int = lib.config.value, url: str = lib.config.value,
                  tags: list = lib.config.value) -> Any:  # type: ignore[type-arg]
        return lib.resource([{"api_key": api_key, "page_size": page_size, "url": url, "tags": tags}], name="args")

    return {
        "injected": list(my_source()),
        "config_item": lib.config["sources.my_source.page_size"],
        "secrets_item": lib.secrets["sources.my_source.tags"],
        "get": lib.config.get("sources.my_source.url"),
        "missing": lib.config.get("sources.other.page_size"),
        "provider_value": provider.get_value("page_size", None, None, "sources", "my_source"),
    }


@pytest.mark.parametrize("pipeline_name", ["plain_pipe", "scoped_pipe"])
def test_registered_provider_as_dlt(pipeline_name: str, tmp_path: Path, lakeload_providers: None,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    with isolated_dlt_config(tmp_path / "dlt_home"):
        theirs = script(dlt, DltCustomLoaderDocProvider, tmp_path / "dlt", pipeline_name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SOURCES__MY_SOURCE__URL", raising=False)
    ours = script(lakeload, CustomLoaderDocProvider, tmp_path / "lakeload", pipeline_name)
    os.environ.pop("SOURCES__MY_SOURCE__URL", None)
    assert ours == theirs
    expected_page_size = 9 if pipeline_name == "scoped_pipe" else 7
    assert ours["injected"] == [{"api_key": "code-key", "page_size": expected_page_size, "url": "env-url", "tags": ["a", "b"]}]


def test_toml_files_come_before_the_provider(tmp_path: Path, lakeload_providers: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".lakeload").mkdir()
    (tmp_path / ".lakeload" / "config.toml").write_text("[sources.my_source]\npage_size = 3\n")
    lakeload.config.register_provider(CustomLoaderDocProvider("docs", lambda: DOCUMENT))
    assert lakeload.config["sources.my_source.page_size"] == 3
    assert lakeload.config["sources.my_source.url"] == "doc-url"


def test_a_provider_without_secrets_refuses_a_secret(lakeload_providers: None, tmp_path: Path) -> None:
    lakeload.config.register_provider(CustomLoaderDocProvider("plain", lambda: DOCUMENT, supports_secrets=False))

    @lakeload.source
    def my_source(api_key: str = lakeload.secrets.value) -> Any:
        return lakeload.resource([{"k": api_key}], name="r")

    with pytest.raises(ConfigValueNotSecretError, match="plain"):
        my_source()
    assert "sources.my_source.api_key" not in lakeload.secrets  # `secrets[...]` reads only where secrets may be


def test_register_refuses_a_duplicate_name_and_other_objects(lakeload_providers: None) -> None:
    lakeload.secrets.register_provider(CustomLoaderDocProvider("docs", lambda: {}))
    with pytest.raises(ConfigurationError, match="'docs' is registered already"):
        lakeload.config.register_provider(CustomLoaderDocProvider("docs", lambda: {}))
    with pytest.raises(ConfigurationError, match="CustomLoaderDocProvider"):
        lakeload.config.register_provider({"sources": {}})
    with pytest.raises(TypeError, match="must return a dict"):
        CustomLoaderDocProvider("bad", lambda: ["not", "a", "dict"])  # type: ignore[arg-type,return-value]


def test_config_show_lists_the_provider_and_its_values(lakeload_providers: None, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    document = {"destination": {"filesystem": {"bucket_url": str(tmp_path / "bucket")}}, **DOCUMENT}
    lakeload.config.register_provider(CustomLoaderDocProvider("yaml_docs", lambda: document, locations=["config.yaml"]))
    text = render_configuration(show_configuration())
    assert f"destination.filesystem.bucket_url = {tmp_path / 'bucket'}" in text
    assert "provider yaml_docs [destination.filesystem] bucket_url" in text
    assert "provider yaml_docs [sources.my_source] page_size" in text
    assert "api_key" in text and "doc-key" not in text  # a secret's value is masked
    assert "Providers registered in code (read after the TOML files, in this order):\n  yaml_docs (config.yaml)" in text


def test_the_document_as_toml_and_yaml_as_dlt_writes_it() -> None:
    document = {"sources": {"my_source": {"api_key": "k", "limit": 3, "tags": ["a", "é"]}}, "runtime": {"log_level": "INFO"}}
    ours = CustomLoaderDocProvider("docs", lambda: document)
    theirs = DltCustomLoaderDocProvider("docs", lambda: document)
    assert ours.to_toml() == theirs.to_toml()
    assert ours.to_yaml() == theirs.to_yaml()

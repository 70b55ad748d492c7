"""Source, resource and transformer arguments injected from configuration, and `lakeload.config`/`lakeload.secrets`.

Every test runs in a fresh cwd and HOME (tests/conftest.py `isolated_config`): `.lakeload/*.toml` are written there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Optional

import pytest

import lakeload
from lakeload.config import known_keys
from lakeload.config.inject import injected
from lakeload.config.resolver import resolve
from lakeload.errors import (
    ConfigurationError,
    ConfigValueMissingError,
    ConfigValueNotSecretError,
    LakeloadError,
)
from lakeload.runtime.config_report import render_configuration, show_configuration

ROOT = Path(__file__).resolve().parents[2]
SECTION = "test_injection"  # the module's name: the default config section


def write(path: str, text: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(textwrap.dedent(text))


@lakeload.source
def crm(
    api_key: str = lakeload.secrets.value,
    page_size: int = lakeload.config.value,
    base=lakeload.config.value,
    flag: bool = False,
    filters: Optional[dict] = None,  # noqa: UP045 (as dlt users write it)
    region: Optional[str] = lakeload.config.value,  # noqa: UP045
) -> Any:
    seen = {"api_key": api_key, "page_size": page_size, "base": base, "flag": flag, "filters": filters, "region": region}
    return lakeload.resource([seen], name="seen")


def seen(source: Any) -> dict[str, Any]:
    return next(iter(source.resources["seen"].iterate()))  # type: ignore[no-any-return]


def test_env_vars_under_dlts_keys_with_types_from_annotations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(f"SOURCES__{SECTION.upper()}__CRM__API_KEY", "k-1")  # sources.<section>.<source>.<arg>
    monkeypatch.setenv(f"SOURCES__{SECTION.upper()}__PAGE_SIZE", "25")  # sources.<section>.<arg>
    monkeypatch.setenv("SOURCES__CRM__BASE", "7")  # sources.<source>.<arg> (dlt's compact layout): no type, a string
    monkeypatch.setenv("FLAG", "true")  # <arg>: the last place dlt looks
    monkeypatch.setenv("SOURCES__FILTERS", '{"status": ["open"]}')
    assert seen(crm()) == {"api_key": "k-1", "page_size": 25, "base": "7", "flag": True,
                           "filters": {"status": ["open"]}, "region": None}


def test_toml_files_precedence_and_explicit_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    write(".lakeload/config.toml", f"""
        [sources.{SECTION}]
        page_size = 10
        base = "from-section"
        [sources.{SECTION}.crm]
        base = {{ url = "https://api" }}
        region = "eu"
        [sources]
        flag = "yes"
        """)
    write(".lakeload/secrets.toml", f"""
        [sources.{SECTION}.crm]
        api_key = "toml-key"
        [sources.{SECTION}]
        page_size = 11
        """)
    values = seen(crm())
    assert values["api_key"] == "toml-key" and values["page_size"] == 11  # secrets.toml before config.toml
    assert values["base"] == {"url": "https://api"} and values["region"] == "eu"  # the most specific table wins
    assert values["flag"] is True  # a TOML string converted to the annotation's type
    monkeypatch.setenv(f"SOURCES__{SECTION.upper()}__CRM__PAGE_SIZE", "12")
    assert seen(crm())["page_size"] == 12  # the environment before the files
    assert seen(crm(page_size=3, api_key="arg"))["page_size"] == 3  # an argument in the call wins
    assert seen(crm("arg"))["api_key"] == "arg"


def test_pipeline_scoped_keys_come_first_in_every_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCES__CRM__API_KEY", "unscoped-env")
    monkeypatch.setenv("SOURCES__PAGE_SIZE", "1")
    write(".lakeload/secrets.toml", "[inj_p.sources.crm]\napi_key = 'scoped-toml'\n")
    lakeload.pipeline("inj_p", destination=lakeload.destinations.filesystem(str(tmp_path / "b")),
                      pipelines_dir=str(tmp_path / "p"))
    monkeypatch.setenv("BASE", "b")
    assert seen(crm())["api_key"] == "scoped-toml"
    monkeypatch.setenv("INJ_P__SOURCES__API_KEY", "scoped-env")
    assert seen(crm())["api_key"] == "scoped-env"


def test_a_missing_value_names_every_key_tried_and_no_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCES__PAGE_SIZE", "5")
    monkeypatch.setenv("SOURCES__REGION", "super-secret-looking-value")
    write(".lakeload/config.toml", "[sources.other]\nx = 1\n")
    with pytest.raises(ConfigValueMissingError) as error:
        crm()
    assert isinstance(error.value, LakeloadError) and isinstance(error.value, KeyError)
    assert set(error.value.missing) == {"api_key", "base"}
    text = str(error.value)
    for key in (f"sources.{SECTION}.crm.api_key  (env SOURCES__{SECTION.upper()}__CRM__API_KEY)",
                f"sources.{SECTION}.api_key  (env SOURCES__{SECTION.upper()}__API_KEY)",
                "sources.crm.api_key  (env SOURCES__CRM__API_KEY)", "sources.api_key  (env SOURCES__API_KEY)",
                "api_key  (env API_KEY)", "sources.crm.base  (env SOURCES__CRM__BASE)"):
        assert key in text
    assert "'api_key' in .lakeload/secrets.toml" in text and "'base' in .lakeload/config.toml" in text
    assert str(Path(".lakeload/config.toml").resolve()) in text
    assert "super-secret-looking-value" not in text


def test_a_secret_in_config_toml_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    write(".lakeload/config.toml", f"[sources.{SECTION}.crm]\napi_key = 'do-not-show'\npage_size = 1\nbase = 1\n")
    with pytest.raises(ConfigValueNotSecretError, match=rf"sources\.{SECTION}\.crm\.api_key.*secrets\.toml") as error:
        crm()
    assert "do-not-show" not in str(error.value)

    @lakeload.source
    def pin_source(pin: int = lakeload.secrets.value, page_size: int = 1) -> Any:
        return lakeload.resource([{"pin": pin}], name="pins")

    monkeypatch.setenv("SOURCES__PIN", "not-a-number-secret")
    monkeypatch.setenv("SOURCES__PAGE_SIZE", "not-a-number-plain")
    with pytest.raises(ConfigurationError, match="SOURCES__PIN is not a int") as bad:
        pin_source()
    assert "not-a-number-secret" not in str(bad.value)
    with pytest.raises(ConfigurationError, match="not-a-number-plain"):  # a plain value is quoted to help
        pin_source(pin=1)


def test_section_argument_of_source_and_resource(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    @lakeload.source(section="sales", name="deals")
    def deals_source(token: str = lakeload.secrets.value) -> Any:
        @lakeload.resource(section="ignored_in_a_source")
        def deals(limit: int = lakeload.config.value) -> Any:
            yield [{"token": token, "n": i} for i in range(limit)]

        return deals

    @lakeload.resource(section="standalone")
    def numbers(limit: int = 2) -> Any:
        yield from ({"n": i} for i in range(limit))

    monkeypatch.setenv("SOURCES__SALES__DEALS__TOKEN", "t")
    monkeypatch.setenv("SOURCES__SALES__DEALS__LIMIT", "3")  # the resource is looked up in its source's section
    monkeypatch.setenv("SOURCES__STANDALONE__NUMBERS__LIMIT", "4")
    pipe = lakeload.pipeline("inj_sections", destination=lakeload.destinations.filesystem(str(tmp_path / "b")),
                             pipelines_dir=str(tmp_path / "p"))
    pipe.extract(deals_source())
    pipe.extract(numbers())
    assert [row["n"] for row in numbers()] == [0, 1, 2, 3]
    assert known_keys.unregistered_lookups() == set()
    shown = [str(line) for line in show_configuration()]
    assert "sources.sales.deals.limit = 3  (environment variable SOURCES__SALES__DEALS__LIMIT)  [injected]" in shown
    assert "sources.sales.deals.token = ***  (environment variable SOURCES__SALES__DEALS__TOKEN)  [injected]" in shown


def test_resources_and_transformers_resolve_when_extracted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    @lakeload.resource
    def pages(count: int = lakeload.config.value) -> Any:
        yield from ({"page": i} for i in range(count))

    @lakeload.transformer(data_from=pages)
    def scaled(item: dict[str, Any], factor: int = lakeload.config.value) -> Any:
        yield {"page": item["page"], "scaled": item["page"] * factor}

    bound = scaled()  # nothing resolved yet: as dlt, a resource resolves when extract runs it
    pipe = lakeload.pipeline("inj_res", destination=lakeload.destinations.filesystem(str(tmp_path / "b")),
                             pipelines_dir=str(tmp_path / "p"))
    with pytest.raises(lakeload.PipelineStepFailed, match=r"inj_res\.sources\.test_injection\.pages\.count"):
        pipe.extract(bound)
    monkeypatch.setenv("SOURCES__TEST_INJECTION__PAGES__COUNT", "2")
    monkeypatch.setenv("INJ_RES__SOURCES__FACTOR", "10")
    assert [r["scaled"] for r in scaled()] == [0, 10]  # the pipeline created last scopes the lookups, as in dlt
    pipe.extract(scaled())
    assert {v.key: v.source for v in injected()}["sources.test_injection.scaled.factor"] == (
        "environment variable INJ_RES__SOURCES__FACTOR"
    )


def test_config_and_secrets_accessors(monkeypatch: pytest.MonkeyPatch) -> None:
    write(".lakeload/config.toml", "[sources.api]\npage_size = '20'\nurl = 'https://x'\ntoken = 'in-config'\n")
    write(".lakeload/secrets.toml", "[sources.api]\ntoken = 'in-secrets'\n")
    assert lakeload.config["sources.api.page_size"] == 20  # strings cast as dlt: int, bool, JSON
    assert lakeload.config.get("sources.api.page_size", str) == "20" and lakeload.config.get("sources.nope") is None
    assert lakeload.secrets["sources.api.token"] == "in-secrets"
    assert "sources.api.url" in lakeload.config and "sources.api.url" not in lakeload.secrets  # secrets: no config.toml
    with pytest.raises(KeyError, match=r"SOURCES__API__MISSING"):
        lakeload.secrets["sources.api.missing"]
    lakeload.config["sources.api.url"] = "https://set"  # in memory, in config.toml's place: beats the file...
    assert lakeload.config["sources.api.url"] == "https://set"
    assert "https://set" not in Path(".lakeload/config.toml").read_text()
    monkeypatch.setenv("SOURCES__API__URL", "https://env")  # ...not the environment
    assert lakeload.config["sources.api.url"] == "https://env"
    lakeload.secrets["sources.api.token"] = "set-secret"
    assert lakeload.config["sources.api.token"] == "set-secret"  # lakeload.secrets values come before config.toml
    with lakeload.config.values({"sources.api.page_size": 99}):
        assert lakeload.config["sources.api.page_size"] == 99
    assert lakeload.config["sources.api.page_size"] == 20
    lakeload.config["sources.test_injection.crm"] = {"page_size": 3, "base": "b"}
    lakeload.secrets["sources.crm.api_key"] = "from-code"
    assert seen(crm()) == {"api_key": "from-code", "page_size": 3, "base": "b", "flag": False, "filters": None,
                           "region": None}
    assert "set-secret" not in repr(lakeload.secrets) and "from-code" not in repr(lakeload.config)


def test_config_show_lists_source_values_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    write(".lakeload/config.toml", "[sources.crm]\npage_size = 5\n[sources.crm.contacts]\nbase = 'http://u:pw@h/x'\n")
    write(".lakeload/secrets.toml", "[sources.crm]\nclient_ref = 'toml-secret'\n")
    monkeypatch.setenv("SOURCES__CRM__API_KEY", "env-secret")
    monkeypatch.setenv("P1__SOURCES__CRM__PAGE_SIZE", "9")
    lakeload.secrets["sources.test_injection.crm.base"] = "code-secret"
    seen(crm())
    text = render_configuration(show_configuration("p1"))
    for secret in ("toml-secret", "env-secret", "code-secret", ":pw@"):
        assert secret not in text
    assert "sources.crm.page_size = 5  (" in text and "p1.sources.crm.page_size = 9  (environment variable" in text
    assert "sources.crm.api_key = ***  (environment variable SOURCES__CRM__API_KEY)" in text
    assert "sources.test_injection.crm.api_key = ***  (environment variable SOURCES__CRM__API_KEY)  [injected]" in text
    assert "sources.test_injection.crm.page_size = 5  (" in text
    cli = subprocess.run([sys.executable, "-m", "lakeload.cli", "config", "show", "--pipeline", "p1"],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    assert "sources.crm.client_ref = ***  (" in cli.stdout and "toml-secret" not in cli.stdout
    assert "Unused: none" in cli.stdout  # sources.* keys are the user's: no typo warnings


def test_a_script_run_as_main_uses_its_file_name_as_section(tmp_path: Path) -> None:
    script = tmp_path / "my_pipeline_script.py"
    script.write_text(textwrap.dedent("""
        import lakeload

        @lakeload.source
        def api(page_size: int = lakeload.config.value):
            return lakeload.resource([{"page_size": page_size}], name="rows")

        print(next(iter(api().resources["rows"].iterate()))["page_size"])
        """))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SOURCES__MY_PIPELINE_SCRIPT__API__PAGE_SIZE": "42"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "42"


def test_source_lookups_are_declared_and_lakeloads_own_stay_checked() -> None:
    resolve(("sources", "any_section", "any_source"), "any_argument")
    assert known_keys.unregistered_lookups() == set()
    resolve(("sources", "filesystem"), "bucket_urll")
    assert known_keys.unregistered_lookups(clear=True) == {(("sources", "filesystem"), "bucket_urll")}

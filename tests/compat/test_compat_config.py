"""Config injection (issue 14, group 8; `section=` of group 5) against dlt 1.31: the same script, the same
environment variables and TOML content (dlt reads it from its isolated project's `.dlt/`, lakeload from
`./.lakeload/`), the same dataset (conformance harness), state and stored hints.

The functions are defined in this module, so their default config section is its name (as dlt: the module's
last name part). (Named test_config_injection.py: tests/dagster/test_config.py takes the plain basename.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pytest
from compat_harness import Ctx, Script, assert_same, step_failure

pytestmark = pytest.mark.usefixtures("spark")
SECTION = __name__.rsplit(".", 1)[-1]
PIPELINE = "cfg"
S = SECTION.upper()


@dataclass(frozen=True)
class Case:
    """A script (`lib -> data for run()`), the environment variables and TOML files (name -> text) it reads."""

    script: Callable[[Any], Any]
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)


def configured(build: Callable[[Any], Any]) -> Script:
    """The pipeline is made first (its name scopes config lookups, as in dlt), then the source is built and run."""

    def script(ctx: Ctx) -> Any:
        p = ctx.pipeline(PIPELINE)
        p.run(build(ctx.lib), loader_file_format="parquet")
        return p

    return script


def shop_source(lib: Any, **decorator: Any) -> Any:
    @lib.source(**decorator)
    def shop(api_key: str = lib.secrets.value, page_size: int = 2, region: str = "none", active: bool = False) -> Any:
        rows = [{"id": i, "key": api_key, "region": region, "active": active} for i in range(page_size)]
        return lib.resource(rows, name="orders")

    return shop


def s_env_sentinels(lib: Any) -> Any:
    @lib.source
    def shop(api_key: str = lib.secrets.value, page_size: int = lib.config.value) -> Any:
        return lib.resource([{"key": api_key, "page": i} for i in range(page_size)], name="orders")

    return shop()


def s_plain_defaults_from_env(lib: Any) -> Any:
    return shop_source(lib)()


def s_toml_sections(lib: Any) -> Any:
    return shop_source(lib)()


def s_precedence_and_explicit(lib: Any) -> Any:
    return shop_source(lib)(region="explicit")


def s_section_argument(lib: Any) -> Any:
    @lib.source(section="crm", name="contacts")
    def contacts_source(token: str = lib.secrets.value) -> Any:
        @lib.resource(section="not_used_inside_a_source")
        def people(limit: int = lib.config.value) -> Any:
            yield from ({"id": i, "token": token} for i in range(limit))

        return people

    return contacts_source()


def s_standalone_resource(lib: Any) -> Any:
    @lib.resource
    def numbers(limit: int = lib.config.value, start: int = 0) -> Any:
        yield from ({"n": start + i} for i in range(limit))

    return numbers()


def s_resource_section_argument(lib: Any) -> Any:
    # one resource run alone: its own section. (dlt looks up the resources of a *list* under the pipeline's
    # name, `sources.<pipeline>.<resource>`; lakeload under their own section as here: not covered.)
    @lib.resource(section="events_section")
    def events(kind: str = lib.config.value) -> Any:
        yield {"kind": kind}

    return events()


def s_transformer(lib: Any) -> Any:
    @lib.resource
    def numbers(limit: int = 3) -> Any:
        yield from ({"n": i} for i in range(limit))

    @lib.transformer(data_from=numbers)
    def scaled(item: dict[str, Any], factor: int = lib.config.value) -> Any:
        yield {"n": item["n"], "scaled": item["n"] * factor}

    return scaled()


def s_pipeline_scoped(lib: Any) -> Any:
    return shop_source(lib)()


def s_json_and_float_from_env(lib: Any) -> Any:
    @lib.source
    def filtered(filters: dict = lib.config.value, ids: list = lib.config.value, ratio: float = 1.0) -> Any:
        row = {"filters": json.dumps(filters, sort_keys=True), "ids": json.dumps(ids), "ratio": ratio}
        return lib.resource([row], name="settings")

    return filtered()


def s_accessors(lib: Any) -> Any:
    lib.config[f"sources.{SECTION}.shop.page_size"] = 3  # set in code: read by the source below
    lib.secrets["sources.vault.other"] = "set-in-code"
    token = lib.secrets["sources.vault.token"]
    row = {"token": token, "n": lib.config["sources.flags.n"], "on": lib.config["sources.flags.on"],
           "text": lib.config.get("sources.flags.n", str), "missing": lib.config.get("sources.flags.none") is None,
           "other": lib.secrets["sources.vault.other"], "has": "sources.vault.token" in lib.secrets}
    return [lib.resource([row], name="read"), shop_source(lib)().resources["orders"]]


def s_optional_sentinel(lib: Any) -> Any:
    @lib.source
    def maybe(region: Optional[str] = lib.config.value, tag: Optional[str] = lib.config.value) -> Any:  # noqa: UP045
        return lib.resource([{"region_set": region is not None, "tag": tag}], name="maybe")

    return maybe()


CASES: dict[str, Case] = {
    "env_sentinels": Case(s_env_sentinels, {f"SOURCES__{S}__SHOP__API_KEY": "k1", f"SOURCES__{S}__PAGE_SIZE": "3"}),
    "plain_defaults_from_env": Case(s_plain_defaults_from_env, {
        "SOURCES__SHOP__PAGE_SIZE": "4", "REGION": "bare", "SOURCES__ACTIVE": "true", "SOURCES__API_KEY": "k"}),
    "toml_sections": Case(s_toml_sections, files={
        "config.toml": f"[sources.{SECTION}]\npage_size = 3\n[sources.{SECTION}.shop]\nregion = 'eu'\nactive = true\n",
        "secrets.toml": f"[sources.{SECTION}.shop]\napi_key = 'toml-key'\n"}),
    "precedence_and_explicit": Case(s_precedence_and_explicit, {"SOURCES__SHOP__ACTIVE": "false"}, {
        "config.toml": "[sources.shop]\npage_size = 5\nactive = true\nregion = 'toml'\n",
        "secrets.toml": f"[sources.{SECTION}]\npage_size = 2\napi_key = 's'\n"}),
    "section_argument": Case(s_section_argument, {"SOURCES__CRM__CONTACTS__TOKEN": "t",
                                                  "SOURCES__CRM__PEOPLE__LIMIT": "2"}),
    "standalone_resource": Case(s_standalone_resource, {f"SOURCES__{S}__NUMBERS__LIMIT": "3", "SOURCES__NUMBERS__START": "10"}),
    "resource_section_argument": Case(s_resource_section_argument, {"SOURCES__EVENTS_SECTION__EVENTS__KIND": "click"}),
    "transformer": Case(s_transformer, {f"SOURCES__{S}__SCALED__FACTOR": "7", "SOURCES__NUMBERS__LIMIT": "2"}),
    "pipeline_scoped": Case(s_pipeline_scoped, {
        f"{PIPELINE.upper()}__SOURCES__{S}__SHOP__PAGE_SIZE": "4", f"SOURCES__{S}__SHOP__PAGE_SIZE": "9",
        "SOURCES__REGION": "env", "SOURCES__API_KEY": "k"},
        {"config.toml": f"[{PIPELINE}.sources.shop]\nregion = 'scoped'\n"}),
    "json_and_float_from_env": Case(s_json_and_float_from_env, {
        "SOURCES__FILTERS": '{"status": ["open"], "min": 2}', f"SOURCES__{S}__IDS": "[3, 1]", "RATIO": "0.5"}),
    "accessors": Case(s_accessors, {"SOURCES__VAULT__TOKEN": "tok", "SOURCES__FLAGS__N": "7", "SOURCES__SHOP__API_KEY": "k"},
                      {"config.toml": "[sources.flags]\non = 'true'\n"}),
    "optional_sentinel": Case(s_optional_sentinel, {"SOURCES__TAG": "x"}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_injected_arguments_build_the_same_tables_as_dlt(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    assert_same(configured(case.script), tmp_path, env=case.env, files=case.files, hints=True)


def missing(key: str) -> Callable[[BaseException], Any]:
    """A failure signature: step (if any), whether the error names `key`, and whether it is a KeyError."""
    step = step_failure(key)
    return lambda exc: {**step(exc), "key_error": isinstance(exc, KeyError)}


SOURCE_KEY, RESOURCE_KEY = f"SOURCES__{S}__SHOP__API_KEY", f"SOURCES__{S}__NUMBERS__LIMIT"


def s_missing_values(ctx: Ctx) -> Any:
    p = ctx.pipeline(PIPELINE)
    ctx.attempt("source call", lambda: shop_source(ctx.lib)(), missing(SOURCE_KEY))

    @ctx.lib.resource
    def numbers(limit: int = ctx.lib.config.value) -> Any:
        yield from range(limit)

    bound = numbers()  # not resolved yet
    return ctx.run(p, bound, label="run", signature=missing(RESOURCE_KEY))


def test_a_missing_value_fails_where_dlt_fails(tmp_path: Path) -> None:
    """A source fails when called, a resource when extracted; both errors name the env var, as dlt's."""
    ours = assert_same(s_missing_values, tmp_path, loads_rows=False)
    assert ours.notes["source call"] == {"step": None, "step_failed": False, "says": [SOURCE_KEY], "key_error": True}
    failure = ours.snapshots[0].failure
    assert failure["step"] == "extract" and failure["step_failed"] and failure["says"] == [RESOURCE_KEY]

"""Silent typos made loud: unknown keys and misspelled sections warn once, naming the file and the closest key.

dlt's own sections and keys (a `.dlt/` project) and every configuration the test suite and the README use
must not warn.
"""

from __future__ import annotations

import ast
import logging
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import lakeload
import lakeload.config
from lakeload.config.toml_reader import tomllib
from lakeload.config.unknown_keys import find_unknown, find_unknown_env
from lakeload.errors import ConfigurationError, UnknownConfigKeyWarning

ROOT = Path(__file__).resolve().parents[2]
# the user documentation, whose configuration examples must not warn either
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LAYOUT = "{table_name}/{load_id}.{file_id}.{ext}"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path.resolve()


def configure(pipeline_name: str = "typo_check") -> None:
    """Resolve a filesystem destination's configuration as a pipeline does (no Spark needed)."""
    lakeload.destinations.filesystem().configuration(pipeline_name)


def unknown_warnings(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, UnknownConfigKeyWarning)]


def test_key_typo_warns_once_through_a_pipeline_run(
    spark: object, bucket: Path, pipelines_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(Path(".lakeload/config.toml"),
                 f'[destination.filesystem]\nbucket_url = "{bucket}"\nlayuot = "{{table_name}}.{{load_id}}.{{file_id}}.{{ext}}"\n')
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        pipeline = lakeload.pipeline("typo_run", destination="filesystem", pipelines_dir=str(pipelines_dir))
        pipeline.run([{"id": 1}], table_name="items")
        pipeline.run([{"id": 2}], table_name="items")
    expected = (f"Unknown configuration key `layuot` in [destination.filesystem] ({path}): lakeload does not read it "
                "(the value is ignored). Did you mean `layout`?")
    assert unknown_warnings(record) == [expected]  # once, although every run reads the file again
    warning = next(w for w in record if issubclass(w.category, UnknownConfigKeyWarning))
    assert warning.filename == __file__  # points at the user's call, not into lakeload
    assert [r.getMessage() for r in caplog.records if r.name == "lakeload.config"].count(expected) == 1
    assert (bucket / "typo_run_dataset" / "items").is_dir()  # the default layout was used: one folder per table


def test_section_typo_warns(bucket: Path) -> None:
    path = write(Path(".lakeload/config.toml"), f'[destinaton.filesystem]\nbucket_url = "{bucket}"\n')
    with pytest.warns(UnknownConfigKeyWarning) as record, pytest.raises(ConfigurationError, match="bucket_url"):
        configure()
    assert unknown_warnings(record.list) == [
        f"Unknown configuration section [destinaton] ({path}): lakeload does not read it (its values are ignored). "
        "Did you mean [destination]?"
    ]


def test_misspelled_destination_and_credentials(bucket: Path) -> None:
    path = write(Path(".lakeload/secrets.toml"),
                 f'[destination.filesytem]\nbucket_url = "{bucket}"\n[destination.filesystem.credentials]\n'
                 'aws_acess_key_id = "AKIA"\n[spark.working_credentials]\nregion = "eu-central-1"\n')
    with pytest.warns(UnknownConfigKeyWarning) as record, pytest.raises(ConfigurationError):
        configure()
    assert sorted(unknown_warnings(record.list)) == sorted([
        f"Unknown configuration section [destination.filesytem] ({path}): lakeload does not read it (its values "
        "are ignored). Did you mean [destination.filesystem]?",
        f"Unknown configuration key `aws_acess_key_id` in [destination.filesystem.credentials] ({path}): lakeload "
        "does not read it (the value is ignored). Did you mean `aws_access_key_id`?",
        f"Unknown configuration key `region` in [spark.working_credentials] ({path}): lakeload does not read it "
        "(the value is ignored). Did you mean `region_name`?",
    ])


def test_pipeline_scoped_typos_warn(bucket: Path) -> None:
    path = write(Path(".lakeload/config.toml"),
                 f'[typo_check.destination.filesystem]\nbucket_url = "{bucket}"\nlayot = "{LAYOUT}"\n'
                 f'[other_pipe.destinaton.filesystem]\nlayout = "{LAYOUT}"\n[typo_check.spark]\nmastr = "local[1]"\n')
    with pytest.warns(UnknownConfigKeyWarning) as record:
        configure()
    assert sorted(unknown_warnings(record.list)) == sorted([
        f"Unknown configuration key `layot` in [typo_check.destination.filesystem] ({path}): lakeload does not read "
        "it (the value is ignored). Did you mean `layout`?",
        f"Unknown configuration section [other_pipe.destinaton] ({path}): lakeload does not read it (its values are "
        "ignored). Did you mean [other_pipe.destination]?",
        f"Unknown configuration key `mastr` in [typo_check.spark] ({path}): lakeload does not read it (the value is "
        "ignored). Did you mean `master`?",
    ])


def test_named_filesystem_destination_is_checked(bucket: Path) -> None:
    write(Path(".lakeload/config.toml"),
          f'[destination.prod]\ndestination_type = "filesystem"\nbucket_url = "{bucket}"\nmax_state_file = 3\n')
    with pytest.warns(UnknownConfigKeyWarning, match=r"`max_state_file` in \[destination.prod\] .* Did you mean `max_state_files`"):
        lakeload.destination("prod").configuration("typo_check")


def test_environment_variable_typos_warn(monkeypatch: pytest.MonkeyPatch, bucket: Path) -> None:
    monkeypatch.setenv("DESTINATION__FILESYSTEM__BUCKET_URL", str(bucket))
    monkeypatch.setenv("DESTINATION__FILESYSTEM__LAYUOT", LAYOUT)
    monkeypatch.setenv("TYPO_CHECK__DESTINATON__FILESYSTEM__LAYOUT", LAYOUT)
    monkeypatch.setenv("SPARK__SQL__SHUFFLE__PARTITIONS", "4")  # a Spark setting without CONF__
    monkeypatch.setenv("SPARK_HOME_LIKE__X", "not lakeload's")
    with pytest.warns(UnknownConfigKeyWarning) as record:
        configure()
    assert sorted(unknown_warnings(record.list)) == sorted([
        "Unknown configuration key `layuot` in [destination.filesystem] (environment variable "
        "DESTINATION__FILESYSTEM__LAYUOT): lakeload does not read it (the value is ignored). "
        "Did you mean DESTINATION__FILESYSTEM__LAYOUT?",
        "Unknown configuration section [typo_check.destinaton] (environment variable "
        "TYPO_CHECK__DESTINATON__FILESYSTEM__LAYOUT): lakeload does not read it (its values are ignored). "
        "Did you mean TYPO_CHECK__DESTINATION__FILESYSTEM__LAYOUT?",
        "Unknown configuration section [spark.sql] (environment variable SPARK__SQL__SHUFFLE__PARTITIONS): "
        "lakeload does not read it (its values are ignored).",
    ])
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        configure()
    assert unknown_warnings(again) == []  # once per variable and process


REALISTIC_DLT_CONFIG = """
pipeline_name = "github"
[runtime]
log_level = "WARNING"
dlthub_telemetry = false
[extract]
workers = 4
max_parallel_items = 20
[extract.data_writer]
file_max_items = 10000
[normalize]
workers = 2
start_method = "spawn"
[normalize.data_writer]
disable_compression = true
buffer_max_items = 5000
[normalize.parquet_normalizer]
add_dlt_load_id = true
[load]
workers = 8
truncate_staging_dataset = true
[schema]
naming = "snake_case"
[data_writer]
file_max_bytes = 1000000
[sources.github]
access_token_url = "https://github.com/login"
[sources.github.issues]
max_items = 10
[sources.filesystem]
bucket_url = "{bucket}"
file_glob = "**/*.csv"
[sources.filesystem.read_csv]
chunksize = 1000
[destination.filesystem]
bucket_url = "{bucket}"
layout = "{{table_name}}/{{load_id}}.{{file_id}}.{{ext}}"
config_kwargs = {{ read_timeout = 30 }}
deltalake_configuration = {{ "delta.minWriterVersion" = "7" }}
enable_dataset_name_normalization = false
[destination.filesystem.kwargs]
use_ssl = true
[destination.bigquery]
location = "EU"
[destination.bigquery.credentials]
project_id = "p"
[destination.warehouse]
destination_type = "duckdb"
credentials = "warehouse.duckdb"
[github.destination.filesystem]
max_state_files = 10
"""
REALISTIC_DLT_SECRETS = """
[sources.github]
access_token = "ghp_x"
[destination.filesystem.credentials]
aws_access_key_id = "AKIA"
aws_secret_access_key = "secret"
region_name = "eu-central-1"
[destination.bigquery.credentials]
private_key = "k"
"""


def test_realistic_dlt_project_does_not_warn(bucket: Path, caplog: pytest.LogCaptureFixture) -> None:
    write(Path(".dlt/config.toml"), REALISTIC_DLT_CONFIG.format(bucket=bucket))
    write(Path(".dlt/secrets.toml"), REALISTIC_DLT_SECRETS)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        configure("github")
        lakeload.config.show_configuration("github")
    assert unknown_warnings(record) == []
    assert not [r for r in caplog.records if "Unknown configuration" in r.getMessage()]


def _python_strings(path: Path) -> list[str]:
    return [node.value for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def _toml_snippets() -> list[tuple[str, dict[str, object]]]:
    """Every string of the test suite, bench/ and lakeload/ that is a TOML document with tables, and the TOML blocks of
    the README and the docs."""
    texts: list[tuple[str, str]] = []
    for folder in ("tests", "bench", "lakeload"):
        texts += [(str(p.relative_to(ROOT)), s) for p in (ROOT / folder).rglob("*.py") if p != Path(__file__)
                  for s in _python_strings(p)]
    for doc in DOCS:
        texts += [(str(doc.relative_to(ROOT)), block)
                  for block in re.findall(r"```toml\n(.*?)```", doc.read_text(), re.S)]
    found = []
    for where, text in texts:
        if re.search(r"^\s*\[\w", text, re.M) and "=" in text:
            try:
                tree = tomllib.loads(text)
            except tomllib.TOMLDecodeError:
                continue
            if any(isinstance(value, dict) for value in tree.values()):
                found.append((where, tree))
    return found


# Not configuration: deliberately ignored fields, key_from_env() arguments, a placeholder in docs, the README's typo
NOT_SETTINGS = {"DESTINATION__CREDENTIALS__NESTED__DEEPER", "SPARK__SQL__SESSION__TIMEZONE",
                "SPARK__SQL__CATALOG__SPARK_CATALOG", "DESTINATION__CREDENTIALS__X", "DESTINATION__FILESYSTEM__LAYUOT"}


def test_configurations_of_the_test_suite_and_readme_do_not_warn() -> None:
    snippets = _toml_snippets()
    assert len(snippets) >= 25  # the scan finds the suite's configurations
    assert [(where, u.dotted) for where, tree in snippets for u in find_unknown(tree, where) if u.kind != "dlt"] == []
    pattern = r"\b(?:[A-Z0-9_]+__)?(?:DESTINATION|SPARK|SOURCES|EXTRACT|NORMALIZE|DATA_WRITER)__[A-Z0-9_]*[A-Z0-9]\b"
    names: set[str] = set()
    for path in [*ROOT.glob("tests/**/*.py"), *ROOT.glob("bench/**/*.py"), *ROOT.glob("lakeload/**/*.py"), *DOCS]:
        if path != Path(__file__):
            names |= set(re.findall(pattern, path.read_text()))
    assert len(names) >= 50
    env = {name: "x" for name in names - NOT_SETTINGS}
    assert [u.source for u in find_unknown_env(env) if u.kind != "dlt"] == []
    assert {u.kind for u in find_unknown_env({name: "x" for name in NOT_SETTINGS})} == {"section", "key"}


def test_config_show_lists_unused_keys(tmp_path: Path) -> None:
    project = tmp_path / "project"
    path = write(project / ".lakeload" / "config.toml",
                 f'[destination.filesystem]\nbucket_url = "{tmp_path}"\nlayuot = "{LAYOUT}"\nconfig_kwargs = {{ a = 1 }}\n'
                 '[sprak]\nmaster = "local[1]"\n[runtime]\nlog_level = "INFO"\n')
    env = {k: v for k, v in os.environ.items() if "__" not in k}
    env.update(HOME=str(tmp_path / "home"), QS__SPARK__WORKING_ULR="/mnt/shared")
    result = subprocess.run([sys.executable, "-m", "lakeload.cli", "config", "show", "--pipeline", "qs"],
                            capture_output=True, text=True, timeout=120, cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    unused = result.stdout.split("Unused: not read by lakeload (a typo? these values are ignored):\n")[1]
    assert unused.splitlines()[:6] == [
        f"  destination.filesystem.layuot  ({path})  did you mean `layout`?",
        f"  sprak  ({path})  did you mean [spark]?",
        "  qs.spark.working_ulr  (environment variable QS__SPARK__WORKING_ULR)  did you mean QS__SPARK__WORKING_URL?",
        "Unused: read by dlt, not by lakeload:",
        f"  destination.filesystem.config_kwargs  ({path})",
        "",
    ]
    assert "runtime" not in unused
    assert "UnknownConfigKeyWarning" in result.stderr  # the warnings, on stderr


def test_config_show_says_none_unused() -> None:
    lines = lakeload.config.show_configuration()
    text = lakeload.config.render_configuration(lines, files=[], environ={})
    assert "\nUnused: none\n" in text


def test_logger_gets_the_warning(caplog: pytest.LogCaptureFixture, bucket: Path) -> None:
    write(Path(".lakeload/config.toml"), f'[destination.filesystem]\nbucket_url = "{bucket}"\nalways_refresh_view = true\n')
    with caplog.at_level(logging.WARNING, logger="lakeload.config"), pytest.warns(UnknownConfigKeyWarning):
        configure()
    assert any("`always_refresh_view`" in r.getMessage() and "always_refresh_views" in r.getMessage()
               for r in caplog.records if r.name == "lakeload.config")

"""`lakeload config show` and `lakeload.config.show_configuration`: values, sources, masking, files read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import lakeload.config
from lakeload.runtime.config_report import ConfigLine, render_configuration, show_configuration


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def by_key(lines: list[ConfigLine]) -> dict[str, ConfigLine]:
    return {line.key: line for line in lines}


def test_every_field_is_listed_unset() -> None:
    lines = by_key(lakeload.config.show_configuration())
    for key in ("bucket_url", "layout", "kwargs", "client_kwargs", "max_state_files", "always_refresh_views", "credentials"):
        assert f"destination.filesystem.{key}" in lines
    for key in ("normalize.data_writer.disable_compression", "extract.file_max_bytes", "spark.master"):
        assert key in lines and not lines[key].is_set
    assert str(lines["destination.filesystem.bucket_url"]) == "destination.filesystem.bucket_url = (not set)"
    assert str(lines["destination.filesystem.credentials"]) == "destination.filesystem.credentials = (not set)"
    assert str(lines["spark.master"]) == "spark.master = local[*]  (not set; default)"
    assert str(lines["destination.filesystem.max_state_files"]).startswith("destination.filesystem.max_state_files = 100")


def test_values_sources_and_masking(monkeypatch: pytest.MonkeyPatch) -> None:
    write(Path(".lakeload/config.toml"),
          "[destination.filesystem]\nbucket_url = '_storage'\nkwargs = '{\"auto_mkdir\": true, \"secret\": \"kw-secret\"}'\n"
          "[destination.credentials]\nregion_name = 'eu-central-1'\n[normalize.data_writer]\ndisable_compression = true\n")
    write(Path(".lakeload/secrets.toml"), "[destination.filesystem.credentials]\naws_secret_access_key = 'toml-secret'\n")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__AWS_ACCESS_KEY_ID", "AKIAENV")
    monkeypatch.setenv("P1__SPARK__MASTER", "local[2]")
    monkeypatch.setenv("EXTRACT__FILE_MAX_BYTES", "1000")
    lines = show_configuration("p1")
    text = render_configuration(lines)
    assert "toml-secret" not in text and "AKIAENV" not in text and "kw-secret" not in text
    found = by_key(lines)
    bucket = str(found["destination.filesystem.bucket_url"])
    assert bucket.startswith("destination.filesystem.bucket_url = _storage  (")
    assert "config.toml [destination.filesystem] bucket_url)" in bucket
    assert "used as file://" + os.path.realpath("_storage") in bucket
    assert found["destination.filesystem.kwargs"].value == {"auto_mkdir": True, "secret": "***"}
    assert str(found["destination.filesystem.credentials.aws_access_key_id"]) == (
        "destination.filesystem.credentials.aws_access_key_id = ***  "
        "(environment variable DESTINATION__FILESYSTEM__CREDENTIALS__AWS_ACCESS_KEY_ID)")
    assert found["destination.filesystem.credentials.aws_secret_access_key"].source.endswith(  # type: ignore[union-attr]
        "secrets.toml [destination.filesystem.credentials]")
    assert "= eu-central-1  (" in str(found["destination.filesystem.credentials.region_name"])
    assert str(found["spark.master"]) == "spark.master = local[2]  (environment variable P1__SPARK__MASTER)"
    assert found["extract.file_max_bytes"].value == 1000
    assert str(found["normalize.data_writer.disable_compression"]).startswith(
        "normalize.data_writer.disable_compression = true  (")
    assert "destination.filesystem.credentials" not in found  # fields listed instead
    assert text.splitlines()[-2:] == [f"  {os.path.abspath('.lakeload/secrets.toml')}",
                                      f"  {os.path.abspath('.lakeload/config.toml')}"]


def test_named_destination_native_credentials_and_invalid_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__PROD__DESTINATION_TYPE", "filesystem")
    monkeypatch.setenv("DESTINATION__PROD__BUCKET_URL", "foo://bucket")
    monkeypatch.setenv("DESTINATION__PROD__CREDENTIALS", "AccountName=a;AccountKey=native-secret")
    monkeypatch.setenv("DESTINATION__PROD__CLIENT_KWARGS", "{not json")
    lines = show_configuration(destination="prod")
    text = render_configuration(lines, files=[])
    assert "native-secret" not in text
    found = by_key(lines)
    assert str(found["destination.prod.credentials"]) == (
        "destination.prod.credentials = ***  (environment variable DESTINATION__PROD__CREDENTIALS)")
    assert "invalid: Protocol not known: foo" in str(found["destination.prod.bucket_url"])
    assert "invalid:" in str(found["destination.prod.client_kwargs"])
    assert found["destination.prod.destination_type"].value == "filesystem"
    assert "TOML files read: none" in text


def test_cli_config_show_subprocess(tmp_path: Path) -> None:
    cwd = tmp_path / "project"
    write(cwd / ".lakeload" / "config.toml", "[destination.filesystem]\nbucket_url = '/data/bucket'\n")
    env = {k: v for k, v in os.environ.items() if "DESTINATION__" not in k.upper() and not k.upper().startswith("SPARK__")}
    env.update(HOME=str(tmp_path / "home"), DESTINATION__FILESYSTEM__CREDENTIALS__SFTP_PASSWORD="cli-secret",
               QS__DESTINATION__FILESYSTEM__LAYOUT="{table_name}.{load_id}.{file_id}.{ext}")
    code = (
        "import sys\n"
        "from lakeload.cli.main import main\n"
        "code = main(sys.argv[1:])\n"
        "print('pyspark loaded' if 'pyspark' in sys.modules else 'no pyspark')\n"
        "sys.exit(code)\n"
    )
    args = [sys.executable, "-c", code, "config", "show", "--pipeline", "qs"]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "destination.filesystem.bucket_url = /data/bucket  (" in out and "cli-secret" not in out
    assert "destination.filesystem.credentials.sftp_password = ***  (environment variable" in out
    assert "layout = {table_name}.{load_id}.{file_id}.{ext}  (environment variable QS__DESTINATION__FILESYSTEM__LAYOUT)" in out
    assert str(cwd / ".lakeload" / "config.toml") in out and out.rstrip().endswith("no pyspark")
    result = subprocess.run([sys.executable, "-m", "lakeload.cli", "config", "show", "--help"],
                            capture_output=True, text=True, timeout=120, cwd=cwd, env=env)
    assert result.returncode == 0 and "--pipeline" in result.stdout and "--destination" in result.stdout
    result = subprocess.run([sys.executable, "-m", "lakeload.cli", "config"], capture_output=True, text=True,
                            timeout=120, cwd=cwd, env=env)
    assert result.returncode == 2 and "show" in result.stderr


def test_spark_settings_with_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    write(Path(".lakeload/config.toml"),
          '[spark]\nworking_url = "file:///mnt/shared"\n[spark.conf]\n"spark.executor.memory" = "2g"\n'
          '"spark.ui.enabled" = true\n"spark.sql.session.timeZone" = "Europe/Berlin"\n')
    monkeypatch.setenv("SPARK__CONF__SPARK__AUTHENTICATE__SECRET", "spark-secret")
    monkeypatch.setenv("SPARK__CONF__SPARK__EXECUTOR__EXTRAJAVAOPTIONS", "-XX:+UseG1GC")
    monkeypatch.setenv("SPARK__LAZY_JIT", "false")
    lines = show_configuration("p1")
    text = render_configuration(lines)
    found = by_key(lines)
    assert "spark-secret" not in text
    assert str(found['spark.conf."spark.authenticate.secret"']) == (
        'spark.conf."spark.authenticate.secret" = ***  (environment variable SPARK__CONF__SPARK__AUTHENTICATE__SECRET)')
    config = os.path.abspath(".lakeload/config.toml")
    assert str(found['spark.conf."spark.executor.memory"']) == f'spark.conf."spark.executor.memory" = 2g  ({config} [spark.conf])'
    assert found['spark.conf."spark.ui.enabled"'].value == "true"  # configured beats lakeload's default
    assert str(found['spark.conf."spark.ui.showConsoleProgress"']).endswith("= false  (not set; default)")
    assert str(found['spark.conf."spark.executor.extraJavaOptions"']).endswith(
        "= -XX:+UseG1GC  (environment variable SPARK__CONF__SPARK__EXECUTOR__EXTRAJAVAOPTIONS)  "
        "[added after lakeload's log options]")
    assert str(found["spark.lazy_jit"]) == "spark.lazy_jit = false  (environment variable SPARK__LAZY_JIT)"
    assert str(found["spark.class_archive"]) == "spark.class_archive = true  (not set; default)"
    assert str(found['spark.conf."spark.sql.session.timeZone"']) == (
        f'spark.conf."spark.sql.session.timeZone" = UTC  (kept by lakeload)  [ignored: {config} [spark.conf]]')
    assert str(found["spark.working_url"]).endswith("[load packages under /mnt/shared/p1]")
    monkeypatch.setenv("SPARK__CONF__SPARK__NO__SUCH__KEY", "1")
    monkeypatch.setenv("SPARK__WORKING_URL", "s3://bucket/work")
    found = by_key(show_configuration("p1"))
    assert "invalid: Environment variable SPARK__CONF__SPARK__NO__SUCH__KEY" in str(found["spark.conf"])
    assert str(found["spark.working_url"]).endswith("[package data under s3://bucket/work/p1 (credentials: [spark.working_credentials])]")
    monkeypatch.setenv("SPARK__WORKING_URL", "ftp://host/work")
    assert "invalid: [spark] working_url = 'ftp://host/work': ftp:// is not supported" in str(by_key(show_configuration("p1"))["spark.working_url"])

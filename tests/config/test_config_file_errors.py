"""A malformed configuration file is a `ConfigFileError` naming the file, the line and the column.

Through the paths a user meets: `lakeload.pipeline(...)` + `run()` and `lakeload config show`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import lakeload
from lakeload.config.toml_reader import decode_error_position, read_toml, tomllib
from lakeload.errors import ConfigFileError, ConfigurationError, LakeloadError

BROKEN = '[destination.filesystem]\nbucket_url = "{bucket}"\nlayout = {{table_name}}/{{load_id}}.{{file_id}}.{{ext}}\n'


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run_pipeline(bucket: Path, pipelines_dir: Path) -> None:
    pipeline = lakeload.pipeline("broken_config", destination="filesystem", pipelines_dir=str(pipelines_dir))
    pipeline.run([{"id": 1}], table_name="items")


@pytest.mark.parametrize("folder", [".lakeload", ".dlt", "home"])
def test_pipeline_run_names_file_line_and_column(folder: str, bucket: Path, pipelines_dir: Path) -> None:
    base = Path(os.environ["HOME"]) / ".lakeload" if folder == "home" else Path(folder)
    path = write(base / "config.toml", BROKEN.format(bucket=bucket))
    with pytest.raises(ConfigFileError) as err:
        run_pipeline(bucket, pipelines_dir)
    assert isinstance(err.value, ConfigurationError) and isinstance(err.value, LakeloadError)
    message = str(err.value)
    assert f"Cannot read configuration file {path.resolve()} at line 3, column 21:" in message
    assert "Expected '=' after a key" in message and "Fix the TOML syntax" in message and 'text values need quotes' in message
    assert (err.value.path, err.value.line, err.value.column) == (str(path.resolve()), 3, 21)
    assert isinstance(err.value.__cause__, tomllib.TOMLDecodeError)  # chained for debugging
    assert not list(bucket.iterdir())  # failed before anything was extracted


def test_secrets_are_not_quoted(bucket: Path, pipelines_dir: Path) -> None:
    path = write(Path(".lakeload/secrets.toml"),
                 '[destination.filesystem.credentials]\naws_secret_access_key = "hunter2-secret\n')
    with pytest.raises(ConfigFileError, match=r"secrets\.toml at line 2, column \d+: ") as err:
        run_pipeline(bucket, pipelines_dir)
    assert "hunter2" not in str(err.value) and err.value.path == str(path.resolve())


def test_duplicate_key_and_non_utf8(tmp_path: Path) -> None:
    duplicate = write(tmp_path / "dup.toml", "[spark]\nmaster = 'a'\nmaster = 'b'\n")
    with pytest.raises(ConfigFileError, match=r"dup\.toml at line 3, column 13: Cannot overwrite a value"):
        read_toml(str(duplicate))
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b"[spark]\nmaster = 'caf\xe9'\n")
    with pytest.raises(ConfigFileError, match=r"latin\.toml at line 2, column 14: the file is not UTF-8 text. Save it as UTF-8"):
        read_toml(str(latin))


def test_position_from_attributes_or_message() -> None:
    """Python >= 3.14 (and tomli >= 2.1) give `lineno`/`colno`/`msg`; older ones only the message text."""
    text = "a = 1\nb = \n"
    with pytest.raises(tomllib.TOMLDecodeError) as err:
        tomllib.loads(text)
    assert decode_error_position(err.value, text) == ("Invalid value", 2, 5)
    with pytest.raises(tomllib.TOMLDecodeError) as end:
        tomllib.loads("a = [1,")
    problem, line, column = decode_error_position(end.value, "a = [1,")
    assert (line, column) == (1, 8) and "(at" not in problem
    exc = err.value
    exc.msg, exc.lineno, exc.colno = "Invalid value", 7, 3  # type: ignore[attr-defined]  # the attributes' precedence
    assert decode_error_position(exc, text) == ("Invalid value", 7, 3)


def test_cli_config_show_exit_code_and_message(tmp_path: Path) -> None:
    project = tmp_path / "project"
    path = write(project / ".lakeload" / "config.toml", BROKEN.format(bucket=tmp_path / "bucket"))
    env = {k: v for k, v in os.environ.items() if "DESTINATION__" not in k.upper()}
    env["HOME"] = str(tmp_path / "home")
    result = subprocess.run([sys.executable, "-m", "lakeload.cli", "config", "show"], capture_output=True, text=True,
                            timeout=120, cwd=project, env=env)
    assert result.returncode == 1, result.stdout
    assert result.stderr.startswith(f"lakeload config show: Cannot read configuration file {path} at line 3, column 21:")
    assert "Traceback" not in result.stderr and result.stdout == ""

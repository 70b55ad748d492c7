"""`lakeload init`: the real command in a subprocess writes a project whose script runs as written; the rows
are then read back from the bucket with DuckDB."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from lakeload.config.bucket_credentials import credentials_class_for

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parents[2]


def run(args: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(cwd / "home")}
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def init(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "lakeload.cli", "init", *args], cwd)


def rows(path: Path, fmt: str | None = None) -> int:
    if fmt == "delta":
        from deltalake import DeltaTable

        return int(DeltaTable(str(path)).to_pyarrow_table().num_rows)
    if fmt == "iceberg":
        from pyiceberg.table import StaticTable

        newest = max((path / "metadata").glob("*.metadata.json"), key=lambda p: int(p.name.split("-", 1)[0]))
        return int(StaticTable.from_metadata(str(newest)).scan().to_arrow().num_rows)
    files = [str(p) for p in path.glob("*.parquet")] + [str(p) for p in path.glob("*.jsonl*")]
    reader = "read_parquet" if files[0].endswith(".parquet") else "read_json_auto"
    return int(duckdb.sql(f"SELECT count(*) FROM {reader}({files!r})").fetchall()[0][0])


@pytest.mark.parametrize(("source", "extra", "table", "expected", "fmt"), [
    ("generator", [], "shop_data/orders", 30, None),
    ("filesystem", ["--table-format", "delta"], "files_data/events", 100, "delta"),
    pytest.param("generator", ["--table-format", "iceberg"], "shop_data/orders", 30, "iceberg", marks=pytest.mark.slow),
    pytest.param("spark", [], "spark_data/numbers", 1000, None, marks=pytest.mark.slow),
    pytest.param("demo", [], "github_events/events", 5000, None, marks=pytest.mark.slow),
])
def test_init_writes_a_project_whose_script_runs(
    tmp_path: Path, source: str, extra: list[str], table: str, expected: int, fmt: str | None
) -> None:
    made = init(tmp_path, source, "filesystem", *extra)
    assert made.returncode == 0, made.stderr
    assert f"{source}_pipeline.py" in made.stdout
    config = tomllib.loads((tmp_path / ".lakeload" / "config.toml").read_text())
    assert config["destination"]["filesystem"]["bucket_url"] == "_storage"
    extra_name = {"delta": "[deltalake]", "iceberg": "[iceberg]"}.get(fmt or "", "")
    assert (tmp_path / "requirements.txt").read_text().strip() == f"lakeload{extra_name}"
    ran = run([sys.executable, f"{source}_pipeline.py"], tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert rows(tmp_path / "_storage" / table, fmt) == expected


def test_init_duckdb_writes_a_project_whose_script_loads_the_database(tmp_path: Path) -> None:
    """`lakeload init generator duckdb`: the script loads into `generator_pipeline.duckdb` (dlt's default file), the
    configuration names no bucket and no credentials are asked for; the rows are read back with DuckDB."""
    made = init(tmp_path, "generator", "duckdb")
    assert made.returncode == 0, made.stderr
    config = tomllib.loads((tmp_path / ".lakeload" / "config.toml").read_text())
    assert "filesystem" not in config.get("destination", {}) and "bucket_url" not in str(config)
    assert "credentials = " in (tmp_path / ".lakeload" / "config.toml").read_text()  # (commented: the default file)
    assert tomllib.loads((tmp_path / ".lakeload" / "secrets.toml").read_text()) == {}
    assert (tmp_path / "requirements.txt").read_text().strip() == "lakeload"
    assert 'destination="duckdb"' in (tmp_path / "generator_pipeline.py").read_text()
    ran = run([sys.executable, "generator_pipeline.py"], tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    with duckdb.connect(str(tmp_path / "generator_pipeline.duckdb"), read_only=True) as db:
        assert db.execute("SELECT count(*), count(DISTINCT id) FROM shop_data.orders").fetchall() == [(30, 30)]
        assert db.execute("SELECT count(*) FROM shop_data.orders__lines").fetchall() == [(30,)]
    assert not (tmp_path / "_storage").exists()


@pytest.mark.parametrize("options", [["--bucket", "s3"], ["--table-format", "delta"], ["--bucket", "file", "--table-format", "iceberg"]])
def test_init_duckdb_refuses_the_filesystem_options(tmp_path: Path, options: list[str]) -> None:
    refused = init(tmp_path, "generator", "duckdb", *options)
    assert refused.returncode == 1
    assert "for the filesystem destination" in refused.stderr and options[0] in refused.stderr
    assert f"lakeload init generator filesystem {' '.join(options)}" in refused.stderr
    assert not list(tmp_path.glob("*_pipeline.py")) and not (tmp_path / ".lakeload").exists()
    from lakeload.cli.init_cmd import InitOptionError, init_project

    with pytest.raises(InitOptionError, match="--table-format is for the filesystem destination"):
        init_project("generator", None, "delta", False, str(tmp_path), "duckdb")


@pytest.mark.parametrize("bucket", ["s3", "gs", "az", "sftp"])
def test_secrets_template_lists_every_credential_field_of_the_bucket_kind(tmp_path: Path, bucket: str) -> None:
    assert init(tmp_path, "generator", "filesystem", "--bucket", bucket).returncode == 0
    secrets = (tmp_path / ".lakeload" / "secrets.toml").read_text()
    fields = credentials_class_for(bucket).field_names()  # type: ignore[union-attr]
    assert fields and all(f'# {name} = "<{name}>"' in secrets for name in fields)
    assert tomllib.loads(secrets) == {"destination": {"filesystem": {"credentials": {}}}}  # placeholders commented
    assert (tmp_path / "requirements.txt").read_text().strip() == f"lakeload[{bucket}]"
    assert f'bucket_url = "{bucket}://' in (tmp_path / ".lakeload" / "config.toml").read_text()


def test_init_never_overwrites_without_force(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("mine\n")
    refused = init(tmp_path, "generator", "filesystem")
    assert refused.returncode == 1 and "--force" in refused.stderr
    assert (tmp_path / "requirements.txt").read_text() == "mine\n" and not (tmp_path / "generator_pipeline.py").exists()
    assert init(tmp_path, "generator", "filesystem", "--force").returncode == 0
    assert (tmp_path / "requirements.txt").read_text() == "lakeload\n"
    assert init(tmp_path, "nosuch", "filesystem").returncode == 2


@pytest.mark.slow
def test_init_for_s3_runs_against_the_s3_server(tmp_path: Path, s3_server: Any) -> None:
    from servers.fixtures import fresh_prefix

    import lakeload

    assert init(tmp_path, "generator", "filesystem", "--bucket", "s3").returncode == 0
    url = s3_server.url(fresh_prefix("init"))
    config = tmp_path / ".lakeload" / "config.toml"
    config.write_text(config.read_text().replace("s3://<bucket-name>/<path>", url))
    secrets = tmp_path / ".lakeload" / "secrets.toml"
    filled = s3_server.credentials()
    text = secrets.read_text()
    for name, value in filled.items():
        text = text.replace(f'# {name} = "<{name}>"', f'{name} = "{value}"')
    secrets.write_text(text)
    ran = run([sys.executable, "generator_pipeline.py"], tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert s3_server.secret_key not in ran.stdout + ran.stderr
    p = lakeload.pipeline("generator_pipeline", destination=lakeload.destinations.filesystem(url, credentials=filled),
                          dataset_name="shop_data", pipelines_dir=str(tmp_path / "check"))
    with p.sql_client() as client:
        assert client.execute_sql("SELECT count(*) FROM orders") == [(30,)]

"""`lakeload pipeline ...` run as a real command in a subprocess: exit codes, output, files, secrets masked.

The pipelines are loaded in this test process (one Spark session); the commands only read working folders
(and, for `sync`, the bucket), so their subprocesses start no Spark.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from servers.buckets import Bucket

import lakeload

pytestmark = pytest.mark.usefixtures("spark")

ROWS = [{"id": 1, "name": "a", "pets": [{"kind": "cat"}, {"kind": "dog"}]}, {"id": 2, "name": "b", "pets": []}]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lakeload.cli", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def loaded(tmp_path: Path, name: str = "cli_p", destination: Any = None) -> lakeload.Pipeline:
    p = lakeload.pipeline(name, destination=destination or lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                          dataset_name="ds", pipelines_dir=str(tmp_path / "pipelines"))
    p.run(ROWS, table_name="users")
    return p


def test_info_trace_load_package_schema_and_list(tmp_path: Path, bucket_kind: Bucket) -> None:
    p = loaded(tmp_path, destination=bucket_kind.destination())
    dirs = ("--pipelines-dir", str(tmp_path / "pipelines"))

    listed = cli("pipeline", "--list", *dirs)
    assert listed.returncode == 0 and "cli_p" in listed.stdout

    info = cli("pipeline", "cli_p", "info", *dirs)
    assert info.returncode == 0, info.stderr
    assert "dataset: ds" in info.stdout and "schemas: cli_p" in info.stdout
    assert "packages loaded: 1" in info.stdout and "last run" in info.stdout and "completed" in info.stdout

    trace = cli("pipeline", "cli_p", "trace", *dirs)
    assert trace.returncode == 0 and "load" in trace.stdout and "users: 2" in trace.stdout
    assert "users__pets: 2" in trace.stdout and "rows/s" in trace.stdout

    load_id = p.list_completed_load_packages()[-1]
    package = cli("pipeline", "cli_p", "load-package", load_id, *dirs)
    assert package.returncode == 0 and f"Load package {load_id}" in package.stdout and "loaded" in package.stdout
    assert cli("pipeline", "cli_p", "load-package", *dirs).stdout == package.stdout  # the newest by default
    missing = cli("pipeline", "cli_p", "load-package", "123.456", *dirs)
    assert missing.returncode == 1 and "No load package" in missing.stderr

    as_json = cli("pipeline", "cli_p", "schema", "--format", "json", *dirs)
    schema = json.loads(as_json.stdout)
    assert schema["name"] == "cli_p" and set(schema["tables"]) >= {"users", "users__pets"}
    as_yaml = cli("pipeline", "cli_p", "schema", *dirs)
    assert as_yaml.returncode == 0 and "users__pets:" in as_yaml.stdout

    assert cli("pipeline", "cli_p", "failed-jobs", *dirs).stdout.strip() == "Pipeline cli_p: no failed jobs."


def test_exit_codes_for_unknown_pipelines_and_missing_arguments(tmp_path: Path) -> None:
    dirs = ("--pipelines-dir", str(tmp_path / "nowhere"))
    unknown = cli("pipeline", "nope", "info", *dirs)
    assert unknown.returncode == 1 and "No pipeline 'nope'" in unknown.stderr and "--pipelines-dir" in unknown.stderr
    assert cli("pipeline", "nope", *dirs).returncode == 2
    assert cli("pipeline", "nope", "explode", *dirs).returncode == 2


def test_failed_jobs_then_drop_pending_packages(tmp_path: Path, bucket_kind: Bucket) -> None:
    p = loaded(tmp_path, "cli_fail", bucket_kind.destination())

    def bad_layout(schema_name: str, table_name: str, load_id: str, file_id: str, ext: str) -> str:
        raise ValueError("layout exploded")

    p.destination = lakeload.destinations.filesystem(bucket_kind.url, credentials=bucket_kind.credentials,
                                                     layout="{table_name}/{boom}/{load_id}.{file_id}.{ext}",
                                                     extra_placeholders={"boom": bad_layout})
    with pytest.raises(lakeload.PipelineStepFailed):
        p.run([{"id": 3}], table_name="users")
    pending = p.list_normalized_load_packages()
    dirs = ("--pipelines-dir", str(tmp_path / "pipelines"))
    out = cli("pipeline", "cli_fail", "failed-jobs", *dirs, env=bucket_kind.env)
    assert out.returncode == 0
    assert "failed at load" in out.stdout and "layout exploded" in out.stdout
    assert f"pending packages: {pending[0]}" in out.stdout and "drop-pending-packages" in out.stdout
    dropped = cli("pipeline", "cli_fail", "drop-pending-packages", *dirs, env=bucket_kind.env)
    assert dropped.returncode == 0 and pending[0] in dropped.stdout
    assert "pending packages:" not in cli("pipeline", "cli_fail", "failed-jobs", *dirs, env=bucket_kind.env).stdout
    secret = (bucket_kind.credentials or {}).get("aws_secret_access_key", "\0")
    assert secret not in out.stdout + out.stderr + dropped.stdout + dropped.stderr


def test_sync_restores_the_working_folder_and_masks_secrets(tmp_path: Path, bucket_kind: Bucket) -> None:
    loaded(tmp_path, "cli_sync", bucket_kind.destination())
    dirs = ("--pipelines-dir", str(tmp_path / "pipelines"))
    (tmp_path / "pipelines" / "cli_sync" / "state.json").unlink()  # a damaged working folder
    synced = cli("pipeline", "cli_sync", "sync", "--dataset", "ds", *dirs, env=bucket_kind.env)
    assert synced.returncode == 0, synced.stderr
    assert "Restored pipeline 'cli_sync'" in synced.stdout and "schemas cli_sync" in synced.stdout
    info = cli("pipeline", "cli_sync", "info", *dirs, env=bucket_kind.env)
    assert "schemas: cli_sync" in info.stdout
    secret = (bucket_kind.credentials or {}).get("aws_secret_access_key", "\0")
    for result in (synced, info, cli("pipeline", "cli_sync", "trace", *dirs, env=bucket_kind.env)):
        assert secret not in result.stdout + result.stderr
    restored = lakeload.pipeline("cli_sync", destination=bucket_kind.destination(), dataset_name="ds",
                                 pipelines_dir=str(tmp_path / "pipelines"))
    assert restored.run([{"id": 3, "name": "c"}], table_name="users").row_counts == {"users": 1}


@pytest.mark.parametrize("bucket_kind", ["local", pytest.param("s3", marks=pytest.mark.slow)], indirect=True)
def test_drop_removes_the_resources_tables_and_state(tmp_path: Path, bucket_kind: Bucket) -> None:
    @lakeload.resource(name="users")
    def users(cursor: Any = lakeload.sources.incremental("id")) -> Any:  # noqa: B008 (the API, as in dlt)
        yield ROWS

    @lakeload.source
    def crm() -> Any:
        return users, lakeload.resource([{"deal": 1}], name="deals")

    p = lakeload.pipeline("cli_drop_res", destination=bucket_kind.destination(), dataset_name="ds",
                          pipelines_dir=str(tmp_path / "pipelines"))
    p.run(crm())
    dirs = ("--pipelines-dir", str(tmp_path / "pipelines"))
    env = bucket_kind.env
    refused = cli("pipeline", "cli_drop_res", "drop", "users", *dirs, env=env)  # no terminal, no --yes
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert cli("pipeline", "cli_drop_res", "drop", "nope", "--yes", *dirs, env=env).returncode == 1
    dropped = cli("pipeline", "cli_drop_res", "drop", "users", "--yes", *dirs, env=env)
    assert dropped.returncode == 0, dropped.stderr
    assert "tables users, users__pets" in dropped.stdout
    again = lakeload.pipeline("cli_drop_res", destination=bucket_kind.destination(), dataset_name="ds",
                              pipelines_dir=str(tmp_path / "pipelines"))
    assert set(again.default_schema.data_table_names()) == {"deals"}
    assert "users" not in again.state["sources"]["crm"].get("resources", {})
    with again.sql_client() as client:
        assert client.execute_sql("SELECT count(*) FROM deals") == [(1,)]
        assert "users" not in client.table_names
    assert again.run(crm()).row_counts["users"] == 2  # the cursor is gone: loaded afresh
    everything = cli("pipeline", "cli_drop_res", "drop", "--drop-all", "--yes", *dirs, env=env)
    assert everything.returncode == 0, everything.stderr
    last = lakeload.pipeline("cli_drop_res", destination=bucket_kind.destination(), dataset_name="ds",
                             pipelines_dir=str(tmp_path / "pipelines"))
    assert last.default_schema.data_table_names() == [] and not last.state["sources"].get("crm", {}).get("resources")


def test_reading_commands_load_none_of_the_pipelines_steps(tmp_path: Path) -> None:
    """`--list`, `info`, `trace`, `schema` read files only: no Spark, no extract/normalize/load modules (~0.4 s)."""
    loaded(tmp_path)
    script = (
        "import sys\nfrom lakeload.cli.main import main\n"
        "for command in (['--list'], ['cli_p', 'info'], ['cli_p', 'trace'], ['cli_p', 'schema'], ['cli_p', 'failed-jobs']):\n"
        "    assert main(['pipeline', *command, '--pipelines-dir', sys.argv[1]]) == 0\n"
        "heavy = ('lakeload.runtime.pipeline', 'lakeload.normalize.early', 'lakeload.load.loader', 'pyspark', 'pandas')\n"
        "print('LOADED', [name for name in heavy if name in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "pipelines")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "LOADED []"


def test_a_broken_state_json_is_mended_from_the_command_line(tmp_path: Path) -> None:
    """A truncated state.json: `info` names it and the commands that mend it; `drop-pending-packages` and `sync`
    (whose dataset comes from the packages' records) then restore the folder from the bucket, with no Python."""
    p = lakeload.pipeline("cli_broken", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                          dataset_name="my_ds", pipelines_dir=str(tmp_path / "pipelines"))
    p.run(ROWS, table_name="users")
    p.extract([{"id": 3, "name": "c"}], table_name="users")  # pending
    (tmp_path / "pipelines" / "cli_broken" / "state.json").write_text('{"_state_version": 2, "sou')
    dirs = ("--pipelines-dir", str(tmp_path / "pipelines"))
    env = {"DESTINATION__FILESYSTEM__BUCKET_URL": str(tmp_path / "bucket")}
    info = cli("pipeline", "cli_broken", "info", *dirs, env=env)
    assert info.returncode != 0 and "state.json is truncated or not valid JSON" in info.stderr
    assert "lakeload pipeline cli_broken drop-pending-packages" in info.stderr and "_state_version" not in info.stderr
    dropped = cli("pipeline", "cli_broken", "drop-pending-packages", *dirs, env=env)
    assert dropped.returncode == 0, dropped.stderr
    synced = cli("pipeline", "cli_broken", "sync", *dirs, env=env)
    assert synced.returncode == 0 and "Restored pipeline 'cli_broken'" in synced.stdout, synced.stderr
    info = cli("pipeline", "cli_broken", "info", *dirs, env=env)
    assert info.returncode == 0 and "dataset: my_ds" in info.stdout, info.stderr
    again = lakeload.pipeline("cli_broken", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                              dataset_name="my_ds", pipelines_dir=str(tmp_path / "pipelines"))
    again.run([{"id": 3, "name": "c"}], table_name="users")
    with again.sql_client() as client:
        assert sorted(r[0] for r in client.execute_sql("SELECT id FROM users")) == [1, 2, 3]


def test_sync_wipes_nothing_when_the_bucket_cannot_be_used(tmp_path: Path) -> None:
    import shutil

    loaded(tmp_path, "cli_nosync")
    shutil.rmtree(tmp_path / "bucket")
    (tmp_path / "bucket").write_text("not a folder")  # the bucket the pipeline loaded to cannot be used any more
    synced = cli("pipeline", "cli_nosync", "sync", "--pipelines-dir", str(tmp_path / "pipelines"))
    assert synced.returncode != 0
    assert (tmp_path / "pipelines" / "cli_nosync" / "state.json").exists()

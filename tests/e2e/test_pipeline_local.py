"""End to end on a real local Spark session into a local bucket: layout, dispositions, formats, state."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
from bucket_utils import data_files, jsonl_lines, loads_records, read_rows, stored_schema

import lakeload
from lakeload.errors import ConfigFieldMissingError, PipelineStepFailed

pytestmark = pytest.mark.usefixtures("spark")

USERS = [
    {"id": 1, "name": "Alice", "pets": [{"id": 1, "name": "Fluffy", "type": "cat"}, {"id": 2, "name": "Spot", "type": "dog"}]},
    {"id": 2, "name": "Bob", "pets": [{"id": 3, "name": "Fido", "type": "dog"}]},
]
FILE_NAME = re.compile(r"^\d+\.\d+\.[0-9a-f]{10}\.(jsonl\.gz|jsonl|parquet|csv\.gz|csv)$")


def make_pipeline(bucket: Path, pipelines_dir: Path, name: str = "users_pets", **kwargs: Any) -> lakeload.Pipeline:
    return lakeload.pipeline(
        name,
        destination=lakeload.destinations.filesystem(bucket_url=str(bucket)),
        dataset_name=kwargs.pop("dataset_name", "ds"),
        pipelines_dir=str(pipelines_dir),
        **kwargs,
    )


def test_users_pets_bucket_layout_matches_dlt(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    first = p.run(USERS, table_name="users")
    second = p.run(USERS, table_name="users")
    ds = bucket / "ds"
    assert sorted(x.name for x in ds.iterdir()) == ["_dlt_loads", "_dlt_pipeline_state", "_dlt_version", "init", "users", "users__pets"]
    assert (ds / "init").read_text() == '{"initial_version":2,"current_version":2}'
    # one schema version and one state file after two identical runs, one marker per load
    assert len(list((ds / "_dlt_version").iterdir())) == 1
    assert len(list((ds / "_dlt_pipeline_state").iterdir())) == 1
    load_ids = [*first.load_ids, *second.load_ids]
    assert sorted(r["load_id"] for r in loads_records(bucket, "ds")) == sorted(load_ids)
    assert sorted(p.name for p in (ds / "_dlt_loads").iterdir()) == sorted(f"users_pets__{i}.jsonl" for i in load_ids)
    for table in ("users", "users__pets"):
        names = [f.name for f in data_files(bucket, "ds", table)]
        assert len(names) == 2 and all(FILE_NAME.match(n) for n in names), names
    first_users = next(f for f in data_files(bucket, "ds", "users") if f.name.startswith(load_ids[0]))
    rows = jsonl_lines(first_users)
    assert [list(r) for r in rows] == [["id", "name", "_dlt_load_id", "_dlt_id"]] * 2
    assert {r["_dlt_load_id"] for r in rows} == {load_ids[0]}
    pets = [r for f in data_files(bucket, "ds", "users__pets") if f.name.startswith(load_ids[0]) for r in jsonl_lines(f)]
    assert [list(r) for r in pets][0] == ["id", "name", "type", "_dlt_parent_id", "_dlt_list_idx", "_dlt_id"]
    alice_id = next(r["_dlt_id"] for r in rows if r["name"] == "Alice")
    assert sorted((r["name"], r["_dlt_list_idx"]) for r in pets if r["_dlt_parent_id"] == alice_id) == [("Fluffy", 0), ("Spot", 1)]
    schema = stored_schema(bucket, "ds")
    assert schema["tables"]["users__pets"]["parent"] == "users"
    assert schema["tables"]["users"]["columns"]["_dlt_id"] == {
        "name": "_dlt_id", "data_type": "text", "nullable": False, "unique": True, "row_key": True,
    }
    record = loads_records(bucket, "ds")[0]
    assert list(record) == ["load_id", "schema_name", "status", "inserted_at", "schema_version_hash"]
    assert record["schema_version_hash"] == schema["version_hash"] and record["status"] == 0
    assert first.row_counts == {"users": 2, "users__pets": 3}


def test_replace_removes_earlier_files_of_root_and_nested_tables(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    p.run(USERS, table_name="users", write_disposition="replace")
    info = p.run([{"id": 9, "name": "Zed", "pets": []}], table_name="users", write_disposition="replace")
    assert [r["name"] for r in read_rows(bucket, "ds", "users")] == ["Zed"]
    assert data_files(bucket, "ds", "users__pets") == []  # nested table emptied although the new load has no pets
    assert set(info.packages[0].replaced_tables) == {"users", "users__pets"}
    assert len(loads_records(bucket, "ds")) == 2


def test_append_keeps_and_merge_falls_back_to_append_without_root_key(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    with pytest.warns(UserWarning, match="Falling back to 'append' on 'users'"):
        p.run(USERS, table_name="users", write_disposition="merge", primary_key="id")
        p.run(USERS, table_name="users", write_disposition="merge", primary_key="id")
    assert len(read_rows(bucket, "ds", "users")) == 4
    pets = read_rows(bucket, "ds", "users__pets")
    users = {r["_dlt_id"] for r in read_rows(bucket, "ds", "users")}
    # dlt 1.31 resolves no merge strategy for a filesystem table that is not Delta: no `_dlt_root_id` either
    assert len(pets) == 6 and all(r["_dlt_parent_id"] in users and "_dlt_root_id" not in r for r in pets)
    assert "_dlt_root_id" not in stored_schema(bucket, "ds")["tables"]["users__pets"]["columns"]
    columns = stored_schema(bucket, "ds")["tables"]["users"]["columns"]
    assert columns["id"]["primary_key"] is True and columns["id"]["nullable"] is False


@pytest.mark.parametrize(("fmt", "ext"), [("parquet", "parquet"), ("csv", "csv.gz"), ("jsonl", "jsonl.gz")])
def test_loader_file_formats(bucket: Path, pipelines_dir: Path, fmt: str, ext: str) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    p.run(USERS, table_name="users", loader_file_format=fmt)
    files = data_files(bucket, "ds", "users")
    assert len(files) == 1 and files[0].name.endswith("." + ext)
    assert sorted(r["name"] for r in read_rows(bucket, "ds", "users")) == ["Alice", "Bob"]
    assert len(read_rows(bucket, "ds", "users__pets")) == 3


def test_parquet_types_match_dlt_writer(bucket: Path, pipelines_dir: Path) -> None:
    import pyarrow.parquet as pq

    p = make_pipeline(bucket, pipelines_dir)
    p.run([{"id": 1, "at": "2024-05-01T10:00:00+02:00", "f": 1.5, "ok": True, "tags": ["a"]}], table_name="t", loader_file_format="parquet")
    schema = pq.read_schema(data_files(bucket, "ds", "t")[0])
    assert [(f.name, str(f.type)) for f in schema] == [
        ("id", "int64"), ("at", "timestamp[us, tz=UTC]"), ("f", "double"), ("ok", "bool"),
        ("_dlt_load_id", "string"), ("_dlt_id", "string"),
    ]


@pytest.mark.parametrize("variable", ["NORMALIZE__DATA_WRITER__DISABLE_COMPRESSION", "DATA_WRITER__DISABLE_COMPRESSION"])
def test_disable_compression(bucket: Path, pipelines_dir: Path, monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "true")
    p = make_pipeline(bucket, pipelines_dir)
    p.run(USERS, table_name="users")
    p.run(USERS, table_name="users", loader_file_format="csv")
    names = sorted(f.name.split(".", 3)[-1] for f in data_files(bucket, "ds", "users"))
    assert names == ["csv", "jsonl"]
    assert jsonl_lines(next(f for f in data_files(bucket, "ds", "users") if f.name.endswith(".jsonl")))[0]["name"] == "Alice"


def test_separate_steps_and_default_dataset_name(bucket: Path, pipelines_dir: Path) -> None:
    p = lakeload.pipeline("steps", destination=lakeload.destinations.filesystem(str(bucket)), pipelines_dir=str(pipelines_dir))
    assert p.dataset_name == "steps_dataset"
    load_id = p.extract(USERS, table_name="users").loads_ids[0]
    assert (pipelines_dir / "steps" / "load" / "extracted" / load_id / "manifest.json").exists()
    p.normalize()
    assert (pipelines_dir / "steps" / "load" / "normalized" / load_id / "package.json").exists()
    assert not (bucket / "steps_dataset").exists()  # nothing reaches the bucket before load
    info = p.load()
    assert info.load_ids == [load_id] and info.row_counts == {"users": 2, "users__pets": 3}
    assert (pipelines_dir / "steps" / "load" / "loaded" / load_id / "package.json").exists()
    assert len(read_rows(bucket, "steps_dataset", "users")) == 2


def test_source_with_resources_and_hints(bucket: Path, pipelines_dir: Path) -> None:
    @lakeload.resource(write_disposition="replace", primary_key="id", columns={"score": {"data_type": "text"}})
    def users() -> Any:
        yield [{"id": 1, "score": 10}, {"id": 2, "score": 20}]

    @lakeload.resource(table_name="Deal Items")
    def deals() -> Any:
        for i in range(3):
            yield {"deal": i, "Created At": f"2024-01-0{i + 1}T00:00:00Z"}

    @lakeload.source
    def crm() -> Any:
        return users(), deals()

    p = make_pipeline(bucket, pipelines_dir, name="crm_pipe")
    info = p.run(crm())
    assert info.row_counts == {"users": 2, "deal_items": 3}
    schema = stored_schema(bucket, "ds")
    assert schema["name"] == "crm"
    assert schema["tables"]["users"]["columns"]["score"]["data_type"] == "text"
    assert schema["tables"]["users"]["write_disposition"] == "replace"
    assert schema["tables"]["deal_items"]["columns"]["created_at"]["data_type"] == "timestamp"
    assert sorted(r["score"] for r in read_rows(bucket, "ds", "users")) == ["10", "20"]
    assert (bucket / "ds" / "_dlt_loads" / f"crm__{info.load_ids[0]}.jsonl").exists()


def test_spark_dataframe_and_arrow_inputs(bucket: Path, pipelines_dir: Path, spark: Any) -> None:
    import pyarrow as pa

    frame = spark.createDataFrame(
        [(1, "a", [1, 2], {"x": 1}), (2, "b", [], {"x": 2})], "id long, name string, nums array<long>, meta struct<x:long>"
    )
    p = make_pipeline(bucket, pipelines_dir, name="frames")
    info = p.run(frame, table_name="from_spark")
    assert info.row_counts == {"from_spark": 2, "from_spark__nums": 2}
    rows = sorted(read_rows(bucket, "ds", "from_spark"), key=lambda r: r["id"])
    assert [(r["id"], r["name"], r["meta__x"]) for r in rows] == [(1, "a", 1), (2, "b", 2)]
    info = p.run(pa.table({"k": [1, 2, 3], "v": ["x", None, "z"]}), table_name="from_arrow")
    assert info.row_counts == {"from_arrow": 3}


def test_schema_evolution_and_restore_into_fresh_working_folder(bucket: Path, tmp_path: Path) -> None:
    p = make_pipeline(bucket, tmp_path / "one")
    p.run(USERS, table_name="users")
    p.run([{"id": 3, "name": "Cy", "email": "cy@x.io"}], table_name="users")
    assert len(list((bucket / "ds" / "_dlt_version").iterdir())) == 2  # the new column made a new version
    version = stored_schema(bucket, "ds")["version"]
    p.drop()
    fresh = make_pipeline(bucket, tmp_path / "two")
    fresh.sync_destination()
    assert "email" in fresh.default_schema.tables["users"]["columns"]
    assert fresh.default_schema.version == version
    assert fresh.state["default_schema_name"] == "users_pets" and fresh.state["_state_version"] >= 1
    fresh.run([{"id": 4, "name": "Di"}], table_name="users")
    assert len(read_rows(bucket, "ds", "users")) == 4
    assert len(list((bucket / "ds" / "_dlt_version").iterdir())) == 2  # nothing changed, nothing stored


def test_bucket_url_from_env_and_config_toml(tmp_path: Path, pipelines_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_bucket = tmp_path / "env_bucket"
    monkeypatch.setenv("DESTINATION__FILESYSTEM__BUCKET_URL", str(env_bucket))
    p = lakeload.pipeline("env_pipe", destination="filesystem", dataset_name="ds", pipelines_dir=str(pipelines_dir))
    p.run(USERS, table_name="users")
    assert len(read_rows(env_bucket, "ds", "users")) == 2
    monkeypatch.delenv("DESTINATION__FILESYSTEM__BUCKET_URL")
    toml_bucket = tmp_path / "toml_bucket"
    Path(".lakeload").mkdir()
    Path(".lakeload/config.toml").write_text(f'[destination.filesystem]\nbucket_url = "{toml_bucket}"\n')
    p = lakeload.pipeline("toml_pipe", destination="filesystem", dataset_name="ds", pipelines_dir=str(pipelines_dir))
    p.run(USERS, table_name="users")
    assert len(read_rows(toml_bucket, "ds", "users")) == 2


def test_missing_bucket_url_lists_every_key_tried(pipelines_dir: Path) -> None:
    p = lakeload.pipeline("e1", destination="filesystem", pipelines_dir=str(pipelines_dir))
    with pytest.raises(ConfigFieldMissingError) as err:
        p.run(USERS, table_name="users")
    message = str(err.value)
    keys = ["E1__DESTINATION__FILESYSTEM__BUCKET_URL", "E1__DESTINATION__BUCKET_URL", "E1__BUCKET_URL",
            "DESTINATION__FILESYSTEM__BUCKET_URL", "DESTINATION__BUCKET_URL", "BUCKET_URL"]
    assert re.findall(r"^\s+\d+\. (\S+)$", message, flags=re.M) == keys
    assert "config.toml" in message


def test_failing_resource_leaves_loaded_data_and_no_package(bucket: Path, pipelines_dir: Path) -> None:
    p = make_pipeline(bucket, pipelines_dir)
    p.run(USERS, table_name="users")

    def broken() -> Any:
        yield {"id": 5}
        raise RuntimeError("API down")

    with pytest.raises(PipelineStepFailed, match="API down"):
        p.run(lakeload.resource(broken, name="users"))
    assert p.storage.list_packages("extracted") == [] and p.storage.list_packages("extracting") == []
    assert len(read_rows(bucket, "ds", "users")) == 2
    assert p.run().load_ids == []  # nothing pending


def test_progress_log_reports_each_stage(bucket: Path, pipelines_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="lakeload")
    make_pipeline(bucket, pipelines_dir, progress="log").run(USERS, table_name="users")
    messages = [r.getMessage() for r in caplog.records]
    done = [m for m in messages if "done in" in m]
    assert [m.split(":")[0] for m in done] == ["extract", "normalize", "load"]
    assert "normalize: started (1 Spark tasks)" in messages


def test_memory_bucket(pipelines_dir: Path) -> None:
    """memory:// lives in the driver process: files are put there by the driver, and read back with SQL."""
    import fsspec

    p = lakeload.pipeline("mem", destination=lakeload.destinations.filesystem("memory://mem-bucket/data"),
                          dataset_name="ds", pipelines_dir=str(pipelines_dir))
    p.run(USERS, table_name="users")
    p.run(USERS, table_name="users", write_disposition="replace", loader_file_format="parquet")
    fs = fsspec.filesystem("memory")
    assert fs.exists("/mem-bucket/data/ds/init")
    assert dict(p.dataset().row_counts()) == {"users": 2, "users__pets": 3}


def test_integer_beyond_64_bits_names_table_and_column_and_a_declared_type_loads_it(
    bucket: Path, pipelines_dir: Path
) -> None:
    """2**63 .. 2**64-1 pass JSON but not Parquet's int64 (dlt fails there too): the error names the table, the
    column and the fix, and the fix (a `decimal` column) loads the exact value; beyond 2**64 extract names where."""
    from decimal import Decimal

    from lakeload.errors import ExtractError, NormalizeError

    pipeline = make_pipeline(bucket, pipelines_dir, "big_ints")
    with pytest.raises(NormalizeError) as info:
        pipeline.run([{"id": 1, "big": 2**64 - 1}], table_name="t", loader_file_format="parquet")
    message = str(info.value)
    assert "Table `t`, column `big`" in message and 'columns={"big": {"data_type": "decimal"}}' in message
    assert "OverflowError" not in message and str(2**64 - 1) not in message
    pipeline.drop_pending_packages()
    pipeline.run([{"id": 1, "big": 2**64 - 1}], table_name="t", loader_file_format="parquet",
                 columns={"big": {"data_type": "decimal"}})
    assert [r["big"] for r in read_rows(bucket, "ds", "t")] == [Decimal(2**64 - 1)]
    with pytest.raises(ExtractError, match=r"Table 'u': .* the integer at `sub\[0\]\.big`, beyond the 64-bit range"):
        pipeline.run([{"id": 1, "sub": [{"big": 2**70}]}], table_name="u")

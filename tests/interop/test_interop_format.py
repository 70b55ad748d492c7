"""What lakeload stores beside the tables is what dlt 1.31 stores for the same data, field for field.

The same two runs (nested lists, a variant column, merge/append/replace, an incremental cursor, a new column
per run) go once through dlt and once through lakeload into two local buckets. Then `init`, every `_dlt_loads`
record, every `_dlt_version` record with its schema and every `_dlt_pipeline_state` record with its decoded
state are compared field by field. Left out are only the values that are random or time-based: load ids,
`inserted_at`/`created_at`, and the schema's `previous_hashes` (the hashes of the intermediate schemas each tool
went through inside a run: dlt links the schema of its extract step, lakeload does not have that step).
Everything else must be equal, hashes included: the schema `version_hash` and the state `_version_hash` are
content hashes and must come out as dlt's, or dlt would bump the version of a schema lakeload stored.

Finally dlt, from an empty working folder, restores the lakeload bucket (`sync_destination()`) and must get the
state and schema its own bucket gives it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from interop_buckets import (
    DATASET,
    LAKELOAD_ONLY_FOLDERS,
    Bucket,
    Case,
    StoredFiles,
    as_json,
    local_bucket,
    make_pipeline,
    run_tool,
    stored_files,
    tool_context,
)

pytestmark = pytest.mark.usefixtures("spark")

CASES = [
    Case("jsonl"),
    Case("delta_sql_cs_v1", loader_file_format="parquet", delta=True, naming="sql_cs_v1"),
    Case("csv_layout_direct", loader_file_format="csv", naming="direct",
         layout="{table_name}/{YYYY}-{MM}-{DD}/{load_id}.{file_id}.{ext}"),
]


def comparable(stored: StoredFiles) -> dict[str, Any]:
    """The stored records without their random and time-based values (see the module docstring)."""
    versions = []
    for record in stored.versions:
        schema = {k: v for k, v in record["schema"].items() if k != "previous_hashes"}
        column_order = {name: list(table["columns"]) for name, table in schema["tables"].items()}
        versions.append({**{k: v for k, v in record.items() if k != "inserted_at"}, "schema": schema,
                         "column_order": column_order})
    return as_json({
        "init": stored.init.decode(),
        "folders": sorted(stored.folders - LAKELOAD_ONLY_FOLDERS),
        "loads": [{k: v for k, v in r.items() if k not in ("load_id", "inserted_at")} for r in stored.loads],
        "versions": versions,
        "states": [{k: v for k, v in r.items() if k not in ("created_at", "_dlt_load_id")} for r in stored.states],
    })


def assert_same_fields(expected: Any, actual: Any, path: str = "") -> None:
    """Equal JSON, with the first differing path in the message (schemas are long)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        assert sorted(actual) == sorted(expected), f"{path}: keys differ, dlt {sorted(expected)} lakeload {sorted(actual)}"
        for key in expected:
            assert_same_fields(expected[key], actual[key], f"{path}/{key}")
    elif isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_same_fields(e, a, f"{path}[{i}]")
    else:
        assert actual == expected, f"{path}: dlt {expected!r}, lakeload {actual!r}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_stored_schema_state_loads_and_init_are_dlts(case: Case, tmp_path: Path) -> None:
    import dlt

    import lakeload

    buckets = {}
    for lib in (dlt, lakeload):
        bucket = buckets[lib.__name__] = local_bucket(tmp_path / lib.__name__ / "bucket")
        for run in (0, 1):
            run_tool(lib, bucket, case, tmp_path / lib.__name__ / "work", run)
    theirs, ours = stored_files(buckets["dlt"]), stored_files(buckets["lakeload"])
    assert len(ours.versions) == len(theirs.versions) == 2 and len(ours.loads) == 2 and len(ours.states) == 2
    assert_same_fields(comparable(theirs), comparable(ours))
    assert ours.states[-1]["state"]["destination_type"] == "dlt.destinations.filesystem"
    assert ours.versions[-1]["schema"]["normalizers"]["json"]["module"] == "dlt.common.normalizers.json.relational"

    # dlt restores the lakeload bucket into an empty working folder: the state and schema of its own bucket
    restored = {}
    for name, bucket in buckets.items():
        work = tmp_path / f"restore_{name}"
        with tool_context(dlt, work / "home"):
            pipeline = make_pipeline(dlt, bucket, case, work / "pipelines")
            pipeline.sync_destination()
            state = {k: v for k, v in pipeline.state.items() if k != "_local"}
            restored[name] = as_json({"state": state, "schema": pipeline.default_schema.to_dict(),
                                      "hash": pipeline.default_schema.version_hash})
    for side in restored.values():
        side["schema"].pop("previous_hashes")
    assert_same_fields(restored["dlt"], restored["lakeload"])


def _as_older_lakeload(bucket: Bucket) -> None:
    """Rewrite the stored schemas and states as lakeload wrote them before it wrote dlt's names: its own
    normalizer module (which dlt cannot import) and destination type, hashes left as they were."""
    from dlt.common.versioned_state import compress_state, decompress_state

    root = f"{bucket.root}/{DATASET}"
    for path in bucket.fs.ls(f"{root}/_dlt_version", detail=False):
        record = json.loads(bucket.fs.cat_file(path))
        schema = json.loads(record["schema"])
        schema["normalizers"]["json"]["module"] = "lakeload.normalize.relational"
        bucket.fs.pipe_file(path, json.dumps({**record, "schema": json.dumps(schema)}).encode())
    for path in bucket.fs.ls(f"{root}/_dlt_pipeline_state", detail=False):
        record = json.loads(bucket.fs.cat_file(path))
        state = {**decompress_state(record["state"]), "destination_type": "lakeload.destinations.filesystem"}
        bucket.fs.pipe_file(path, json.dumps({**record, "state": compress_state(state)}).encode())


def test_a_bucket_of_an_older_lakeload_is_continued_in_dlts_names(tmp_path: Path) -> None:
    import dlt
    from dlt.common.schema.utils import generate_version_hash
    from dlt.pipeline.exceptions import PipelineStepFailed

    import lakeload

    case, bucket = Case("jsonl"), local_bucket(tmp_path / "bucket")
    run_tool(lakeload, bucket, case, tmp_path / "first", 0)
    _as_older_lakeload(bucket)
    with tool_context(dlt, tmp_path / "dlt_before" / "home"), pytest.raises(PipelineStepFailed, match="lakeload.normalize"):
        make_pipeline(dlt, bucket, case, tmp_path / "dlt_before" / "pipelines").sync_destination()

    run_tool(lakeload, bucket, case, tmp_path / "second", 1)  # a fresh machine reads the old files
    stored = stored_files(bucket)
    newest = stored.versions[-1]
    assert newest["schema"]["normalizers"]["json"]["module"] == "dlt.common.normalizers.json.relational"
    assert generate_version_hash(newest["schema"]) == newest["version_hash"] and newest["version"] > stored.versions[0]["version"]
    assert [r["version"] for r in stored.states] == [1, 2]
    assert stored.states[-1]["state"]["destination_type"] == "dlt.destinations.filesystem"
    with tool_context(dlt, tmp_path / "dlt_after" / "home"):
        pipeline = make_pipeline(dlt, bucket, case, tmp_path / "dlt_after" / "pipelines")
        pipeline.sync_destination()
        assert pipeline.state["_state_version"] == 2 and pipeline.default_schema.version_hash == newest["version_hash"]


def test_a_table_keeps_the_file_format_of_its_first_load(tmp_path: Path) -> None:
    """dlt stores `loader_file_format` as the table's `file_format` and writes the table so in later loads."""
    import dlt

    import lakeload

    extensions = {}
    for lib in (dlt, lakeload):
        bucket = local_bucket(tmp_path / lib.__name__ / "bucket")
        with tool_context(lib, tmp_path / lib.__name__ / "home"):
            pipeline = make_pipeline(lib, bucket, Case("jsonl"), tmp_path / lib.__name__ / "pipelines")
            pipeline.run([{"a": 1}], table_name="kept", loader_file_format="parquet")
            pipeline.run([{"a": 2}], table_name="kept")
            pipeline.run([{"a": 3}], table_name="other")
        extensions[lib.__name__] = {table: sorted(p.split(".", 3)[-1] for p in bucket.fs.ls(f"{bucket.root}/{DATASET}/{table}"))
                                    for table in ("kept", "other")}
    assert extensions["lakeload"] == extensions["dlt"] == {"kept": ["parquet", "parquet"], "other": ["jsonl.gz"]}

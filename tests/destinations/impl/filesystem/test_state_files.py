"""Tests of lakeload.destinations.impl.filesystem.state_files, with parity against files written by a real dlt run."""

from __future__ import annotations

import datetime as dt
import importlib
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import dlt
import orjson
import pendulum
import pytest
from dlt.common.versioned_state import compress_state, decompress_state

# `lakeload.destinations.filesystem` may be re-exported as a factory function, so import the modules by name
sf = importlib.import_module("lakeload.destinations.impl.filesystem.state_files")
sfn = importlib.import_module("lakeload.destinations.impl.filesystem.state_file_names")

PIPELINE = "lakeload_sf_parity"


class DltRun:
    """Files of a small dlt pipeline loaded into a local bucket."""

    def __init__(self, root: Path) -> None:
        self.dataset = root / "bucket" / "ds"
        self.pipeline = dlt.pipeline(
            pipeline_name=PIPELINE,
            destination=dlt.destinations.filesystem("file://" + str(root / "bucket")),
            dataset_name="ds",
            pipelines_dir=str(root / "pipelines"),
        )
        self.pipeline.run([{"id": 1}], table_name="users")

    def files(self, table: str) -> list[Path]:
        return sorted((self.dataset / table).iterdir())

    def one(self, table: str) -> Path:
        found = self.files(table)
        assert len(found) == 1, found
        return found[0]


@pytest.fixture(scope="module")
def dlt_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DltRun]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")
        yield DltRun(tmp_path_factory.mktemp("dlt_state_files"))


def rel(run: DltRun, path: Path) -> str:
    return path.relative_to(run.dataset).as_posix()


def test_init_file_matches_dlt(dlt_run: DltRun) -> None:
    content = (dlt_run.dataset / sf.INIT_FILE_NAME).read_bytes()
    assert content == sf.init_content() == b'{"initial_version":2,"current_version":2}'
    assert sf.parse_init(content) == 2
    assert sf.parse_init(b"") == sf.parse_init(b"  \n") == 1
    assert sf.parse_init_versions(b'{"initial_version":1,"current_version":2}') == (1, 2)
    assert sf.parse_init(b'{"initial_version":1,"current_version":2}') == 1  # legacy: no .gz suffix


@pytest.mark.parametrize(("content", "fragment"), [
    (b"not json", "not valid"),
    (b'{"initial_version":2}', "not valid"),
    (b'{"initial_version":3,"current_version":3}', "[3, 3]"),
])
def test_bad_init_files(content: bytes, fragment: str) -> None:
    with pytest.raises(sf.StateFileError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        sf.parse_init(content)


def test_loads_file_round_trip(dlt_run: DltRun) -> None:
    path = dlt_run.one(sf.LOADS_TABLE)
    content = path.read_bytes()
    name = sfn.parse_loads_name(path.name)
    assert name == (PIPELINE, dlt_run.pipeline.list_completed_load_packages()[0])
    doc = sf.parse_loads_record(content)
    assert list(doc) == ["load_id", "schema_name", "status", "inserted_at", "schema_version_hash"]
    assert doc["status"] == 0 and doc["load_id"] == name.load_id
    rebuilt = sf.loads_record(load_id=doc["load_id"], schema_name=doc["schema_name"],
                              schema_version_hash=doc["schema_version_hash"],
                              inserted_at=pendulum.parse(doc["inserted_at"]))
    assert rebuilt == (rel(dlt_run, path), content)


def test_version_file_round_trip(dlt_run: DltRun) -> None:
    path = dlt_run.one(sf.VERSION_TABLE)
    content = path.read_bytes()
    doc = sf.parse_version_record(content)
    assert list(doc) == ["version_hash", "schema_name", "version", "engine_version", "inserted_at", "schema"]
    schema = dlt_run.pipeline.default_schema
    assert doc["version_hash"] == schema.stored_version_hash and doc["engine_version"] == sf.SCHEMA_ENGINE_VERSION
    name = sfn.parse_version_name(rel(dlt_run, path))
    assert name is not None
    assert name.schema_name == PIPELINE and name.hash_hex == sf.hash_to_hex(doc["version_hash"])
    assert name.version_id not in dlt_run.pipeline.list_completed_load_packages()  # a time, not the load id
    rebuilt = sf.version_record(schema_name=doc["schema_name"], version=doc["version"],
                                version_hash=doc["version_hash"], schema_json=doc["schema"],
                                inserted_at=dt.datetime.fromisoformat(doc["inserted_at"]),
                                precise_time=float(name.version_id))
    assert rebuilt == (rel(dlt_run, path), content)


def test_state_file_round_trip(dlt_run: DltRun) -> None:
    path = dlt_run.one(sf.STATE_TABLE)
    content = path.read_bytes()
    doc = sf.parse_state_record(content)
    assert list(doc) == ["version", "engine_version", "pipeline_name", "state", "created_at", "version_hash",
                         "_dlt_load_id"]
    assert doc["engine_version"] == sf.STATE_ENGINE_VERSION == 4
    state = sf.decode_state(doc["state"])
    assert state == decompress_state(doc["state"])
    assert state["pipeline_name"] == PIPELINE and "_local" not in state
    assert sf.encode_state(state) == doc["state"]
    name = sfn.parse_state_name(path.name)
    load_id = dlt_run.pipeline.list_completed_load_packages()[0]
    schema_hash = dlt_run.pipeline.default_schema.stored_version_hash
    assert name == (PIPELINE, load_id, sf.hash_to_hex(schema_hash))
    rebuilt = sf.pipeline_state_record(pipeline_name=PIPELINE, load_id=doc["_dlt_load_id"], state=state,
                                       state_version=doc["version"], state_version_hash=doc["version_hash"],
                                       schema_version_hash=schema_hash,
                                       created_at=dt.datetime.fromisoformat(doc["created_at"]))
    assert rebuilt == (rel(dlt_run, path), content)


def test_newest_files_pick_what_dlt_restores(dlt_run: DltRun) -> None:
    state_names = [p.name for p in dlt_run.files(sf.STATE_TABLE)]
    version_names = [p.name for p in dlt_run.files(sf.VERSION_TABLE)]
    older = [f"{PIPELINE}__1000000000.5__00.jsonl", "other__9999999999.9__00.jsonl", "init"]
    with dlt_run.pipeline.destination_client() as client:
        stored_state = client.get_stored_state(PIPELINE)  # type: ignore[attr-defined]
        stored_schema = client.get_stored_schema(PIPELINE)  # type: ignore[attr-defined]
    newest = sfn.newest_state_file(older + state_names, PIPELINE)
    assert newest == state_names[0]
    assert sfn.parse_state_name(newest).load_id == stored_state._dlt_load_id  # type: ignore[union-attr]
    newest_version = sfn.newest_version_file(["x" + n for n in version_names] + older + version_names, PIPELINE)
    assert newest_version == version_names[0]
    content = (dlt_run.dataset / sf.VERSION_TABLE / newest_version).read_bytes()
    assert sf.parse_version_record(content)["version_hash"] == stored_schema.version_hash
    assert sfn.version_file_by_hash(older + version_names, stored_schema.version_hash) == version_names[0]
    assert sfn.newest_state_file(older, "missing") is None


def test_typed_state_values_encode_like_dlt() -> None:
    state: dict[str, Any] = {
        "_state_version": 3,
        "sources": {"s": {"resources": {"r": {"incremental": {"created_at": {
            "last_value": dt.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=dt.timezone.utc),
            "day": dt.date(2026, 1, 2), "at": dt.time(1, 2, 3), "amount": Decimal("1.50"),
            "raw": b"\x00\xff", "id": uuid.UUID(int=5), "unique_hashes": ["a", "b"], "none": None}}}}}},
        "unicode": "zażółć",
    }
    encoded = sf.encode_state(state)
    assert encoded == compress_state(state)  # type: ignore[arg-type]
    decoded = sf.decode_state(encoded)
    incremental = decoded["sources"]["s"]["resources"]["r"]["incremental"]["created_at"]
    assert incremental["last_value"] == state["sources"]["s"]["resources"]["r"]["incremental"]["created_at"][
        "last_value"]
    assert incremental["day"] == dt.date(2026, 1, 2) and incremental["at"] == dt.time(1, 2, 3)
    assert incremental["amount"] == Decimal("1.50") and incremental["raw"] == b"\x00\xff"
    assert incremental["id"] == str(uuid.UUID(int=5))  # orjson writes UUIDs as plain text, as in dlt
    assert decoded == decompress_state(encoded)
    assert sf.encode_state(decoded) == encoded


def test_decode_state_accepts_legacy_json_and_rejects_garbage() -> None:
    assert sf.decode_state('{"a": 1}') == {"a": 1}
    with pytest.raises(sf.StateFileError):
        sf.decode_state("aGVsbG8=")  # valid base64, not zlib


def test_names_and_paths() -> None:
    when = pendulum.datetime(2026, 11, 21, 19, 56, 12, 778992)
    path, content = sf.loads_record(load_id="1795290972.5539668", schema_name="users_pets",
                                    schema_version_hash="iIYPHJQfI/Uchm2/GIG9griD3Twf20wlDtiNGEK7+TU=",
                                    inserted_at=when)
    assert path == "_dlt_loads/users_pets__1795290972.5539668.jsonl"
    assert content == (b'{"load_id":"1795290972.5539668","schema_name":"users_pets","status":0,'
                       b'"inserted_at":"2026-11-21T19:56:12.778992+00:00",'
                       b'"schema_version_hash":"iIYPHJQfI/Uchm2/GIG9griD3Twf20wlDtiNGEK7+TU="}')
    assert sf.hash_to_hex("iIYPHJQfI/Uchm2/GIG9griD3Twf20wlDtiNGEK7+TU=") == (
        "88860f1c941f23f51c866dbf1881bd82b883dd3c1fdb4c250ed88d1842bbf935")
    assert sf.hash_to_hex("") == "None"
    vpath, _ = sf.version_record(schema_name="s", version=1, version_hash="3q2+7w==", schema_json="{}",
                                 inserted_at=when, precise_time=1795290972.7484267)
    assert vpath == "_dlt_version/s__1795290972.7484267__deadbeef.jsonl"
    with pytest.raises(sf.StateFileError, match="timezone-aware"):
        sf.loads_record(load_id="1", schema_name="s", schema_version_hash="h", inserted_at=dt.datetime(2026, 1, 1))


def test_record_parsers_report_missing_fields() -> None:
    with pytest.raises(sf.StateFileError, match="schema_version_hash"):
        sf.parse_loads_record(orjson.dumps({"load_id": "1", "schema_name": "s", "status": 0, "inserted_at": "x"}))
    with pytest.raises(sf.StateFileError, match="JSON"):
        sf.parse_version_record(b"nope")
    legacy = sf.parse_state_record(b'{"version":1,"engine_version":4,"pipeline_name":"p","state":"{}",'
                                   b'"created_at":"2026-01-01T00:00:00+00:00","dlt_load_id":"1.5"}')
    assert legacy["_dlt_load_id"] == "1.5" and "dlt_load_id" not in legacy

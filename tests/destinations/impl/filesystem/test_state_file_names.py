"""Tests of lakeload.destinations.impl.filesystem.state_file_names, with parity against dlt's state cleanup."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from pathlib import Path

import dlt
import pytest

# `lakeload.destinations.filesystem` may be re-exported as a factory function, so import the modules by name
sfn = importlib.import_module("lakeload.destinations.impl.filesystem.state_file_names")
sf = importlib.import_module("lakeload.destinations.impl.filesystem.state_files")


def test_newest_state_compares_load_ids_as_text() -> None:
    names = ["p__9.5__aa.jsonl", "p__10.25__bb.jsonl", "p__not_a_state.jsonl", "p__8.0__cc.jsonl"]
    assert sfn.newest_state_file(names, "p") == "p__9.5__aa.jsonl"  # as dlt: "9.5" > "10.25" as text
    assert sfn.state_files_to_delete(names, "p", max_state_files=1) == ["p__9.5__aa.jsonl", "p__8.0__cc.jsonl"]


def test_state_cleanup_matches_dlt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")
    pipeline = dlt.pipeline(pipeline_name="sf_cleanup",
                            destination=dlt.destinations.filesystem("file://" + str(tmp_path / "b"),
                                                                    max_state_files=2),
                            dataset_name="ds", pipelines_dir=str(tmp_path / "p"))

    @dlt.resource(table_name="t")
    def rows(i: int) -> Iterator[dict[str, int]]:
        dlt.current.resource_state()["i"] = i  # changes the state, so every load writes a state file
        yield {"id": i}

    state_dir = tmp_path / "b" / "ds" / sf.STATE_TABLE
    written: list[str] = []
    for i in range(4):
        pipeline.run(rows(i))
        written += [p.name for p in state_dir.iterdir() if p.name not in written]
    kept = sorted(p.name for p in state_dir.iterdir())
    assert len(written) == 4 and len(kept) == 2
    assert sorted(sfn.state_files_to_delete(written, "sf_cleanup", 2)) == sorted(set(written) - set(kept))
    assert sfn.state_files_to_delete(written, "sf_cleanup", 0) == []
    assert sfn.state_files_to_delete(written, "sf_cleanup", 4) == []
    assert sfn.state_files_to_delete(written, "other", 1) == []


def test_names_split_into_parts() -> None:
    assert sfn.parse_state_name("a/b/my__pipe__1.5__ff.jsonl") == ("my__pipe", "1.5", "ff")
    assert sfn.parse_state_name(os.path.join("x", "init")) is None
    assert sfn.parse_loads_name("_dlt_loads/init") is None

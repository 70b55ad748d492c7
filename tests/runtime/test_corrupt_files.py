"""Broken files of the working folder and of the bucket: a pipeline object can always be made to drop what is broken,
every error names the file and the fix (never its content), and the bucket's older state and schema files are used
when the newest cannot be read."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.destinations.impl.filesystem.state_files import StateFileError
from lakeload.errors import WorkingFolderCorruptedError

SECRETISH = "tok-Zq81"  # in the data, so in the files: a message must never quote it


def make(bucket: Path, pipelines_dir: Path) -> lakeload.Pipeline:
    return lakeload.pipeline("broken", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                             pipelines_dir=str(pipelines_dir))


def events(upto: int) -> Any:
    @lakeload.resource(name="events", primary_key="id")
    def read(cursor: Any = lakeload.sources.incremental("id")) -> Iterator[dict[str, Any]]:  # noqa: B008 (the API)
        yield from ({"id": i, "note": SECRETISH} for i in range(1, upto + 1) if cursor.last_value is None or i > cursor.last_value)

    return read()


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def ids(bucket: Path) -> list[int]:
    import gzip
    import json

    return sorted(json.loads(line)["id"] for f in (bucket / "ds" / "events").glob("*.jsonl*")
                  for line in (gzip.open(f) if f.suffix == ".gz" else f.open("rb")).read().splitlines())


def last_value(pipeline: lakeload.Pipeline) -> Any:
    return pipeline.state["sources"]["broken"]["resources"]["events"]["incremental"]["id"]["last_value"]


@pytest.mark.usefixtures("spark")
def test_broken_state_json_gives_a_pipeline_whose_drop_restores_from_the_bucket(bucket: Path, pipelines_dir: Path) -> None:
    make(bucket, pipelines_dir).run(events(3), schema="broken")
    state_json = pipelines_dir / "broken" / "state.json"
    truncate(state_json)
    pipeline = make(bucket, pipelines_dir)  # no raw JSONDecodeError: the object exists
    with pytest.raises(WorkingFolderCorruptedError) as info:
        pipeline.run(events(5), schema="broken")
    message = str(info.value)
    assert str(state_json) in message and "pipeline.drop()" in message and "Fix:" in message
    assert SECRETISH not in message and "3" not in message.split(str(state_json))[1]
    pipeline.drop()
    pipeline.run(events(5), schema="broken")  # restored from the bucket: the cursor was 3
    assert ids(bucket) == [1, 2, 3, 4, 5]  # nothing lost, nothing twice


@pytest.mark.usefixtures("spark")
def test_broken_state_json_drop_pending_packages_then_runs_from_the_bucket_state(bucket: Path, pipelines_dir: Path) -> None:
    first = make(bucket, pipelines_dir)
    first.run(events(3), schema="broken")
    first.extract(events(4), schema="broken")  # pending, never loaded
    truncate(pipelines_dir / "broken" / "state.json")
    pipeline = make(bucket, pipelines_dir)
    pipeline.drop_pending_packages()
    assert pipeline.storage.list_packages("extracted") == []
    pipeline.run(events(5), schema="broken")
    assert ids(bucket) == [1, 2, 3, 4, 5] and last_value(pipeline) == 5


@pytest.mark.usefixtures("spark")
def test_truncated_schema_file_names_it_and_drop_starts_afresh(bucket: Path, pipelines_dir: Path) -> None:
    make(bucket, pipelines_dir).run(events(2), schema="broken")
    schema_file = pipelines_dir / "broken" / "schemas" / "broken.schema.json"
    truncate(schema_file)
    pipeline = make(bucket, pipelines_dir)
    with pytest.raises(WorkingFolderCorruptedError, match="schema 'broken'") as info:
        pipeline.run(events(4), schema="broken")
    assert str(schema_file) in str(info.value) and "pipeline.drop()" in str(info.value)
    pipeline.drop()
    pipeline.run(events(4), schema="broken")
    assert ids(bucket) == [1, 2, 3, 4]


def bucket_after_three_runs(bucket: Path, pipelines_dir: Path) -> tuple[Path, Path]:
    """The bucket of a pipeline whose cursor went to 3, then 5, and whose schema gained `other` in between; its
    newest state file and schema version."""
    pipeline = make(bucket, pipelines_dir)
    pipeline.run(events(3), schema="broken")
    pipeline.run([{"id": 9, "extra": "x"}], table_name="other", schema="broken")  # a second schema version
    pipeline.run(events(5), schema="broken")
    states = sorted((bucket / "ds" / "_dlt_pipeline_state").iterdir(), key=lambda p: p.name.split("__")[1])
    versions = sorted((bucket / "ds" / "_dlt_version").iterdir(), key=lambda p: p.name.split("__")[1])
    return states[-1], versions[-1]


@pytest.mark.usefixtures("spark")
def test_a_broken_newest_state_is_named_and_the_user_chooses_a_broken_schema_version_falls_back(
    bucket: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An older state would load again what was loaded since (its cursors are older): the error names the broken
    file and the previous one, and deleting the broken one (the user's choice) restores the previous state. A
    schema version falls back by itself (the next load stores the schema again)."""
    newest_state, newest_version = bucket_after_three_runs(bucket, tmp_path / "first")
    truncate(newest_state)
    with pytest.raises(StateFileError) as info:
        make(bucket, tmp_path / "fresh").sync_destination()
    message = str(info.value)
    assert f"_dlt_pipeline_state/{newest_state.name}" in message and "previous state file is" in message
    assert "Fix:" in message and SECRETISH not in message
    newest_state.unlink()
    newest_version.write_bytes(newest_version.read_bytes().replace(b'"schema":"{', b'"schema":"{garbled'))
    fresh = make(bucket, tmp_path / "fresh2")
    with caplog.at_level(logging.WARNING, logger="lakeload.pipeline"):
        fresh.sync_destination()
    assert last_value(fresh) == 3  # the state before the deleted one
    tables = fresh.schema("broken").tables  # the version before the garbled one (which added `other`)
    assert "events" in tables and "other" not in tables
    warnings = " ".join(r.getMessage() for r in caplog.records)
    assert f"_dlt_version/{newest_version.name}" in warnings
    assert SECRETISH not in warnings and "Fix:" in warnings


@pytest.mark.usefixtures("spark")
def test_no_readable_bucket_state_is_a_named_error(bucket: Path, tmp_path: Path) -> None:
    make(bucket, tmp_path / "first").run(events(3), schema="broken")
    (state_file,) = (bucket / "ds" / "_dlt_pipeline_state").iterdir()
    truncate(state_file)
    with pytest.raises(StateFileError) as info:
        make(bucket, tmp_path / "fresh").sync_destination()
    message = str(info.value)
    assert f"_dlt_pipeline_state/{state_file.name}" in message and "Fix:" in message
    assert "b'" not in message and '{"version"' not in message  # the file's bytes are never quoted

"""`lakeload.current` behaves as `dlt.current`: resource and source state in dlt's place, committed with the load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.extract.current import StateNotAvailableError

pytestmark = pytest.mark.usefixtures("spark")


def script(dlt: Any, tmp_path: Path, name: str) -> tuple[Any, list[list[int]]]:
    """The same script for dlt and lakeload: a resource that pages on from its own state, twice."""
    seen: list[list[int]] = []

    @dlt.resource(name="numbers")
    def numbers() -> Any:
        state = dlt.current.resource_state()
        start = state.get("next", 0)
        state["next"] = start + 3
        source = dlt.current.source_state()
        source["runs"] = source.get("runs", 0) + 1
        assert dlt.current.pipeline().pipeline_name == name
        seen.append(list(range(start, start + 3)))
        yield [{"n": n} for n in range(start, start + 3)]

    p = dlt.pipeline(name, destination=dlt.destinations.filesystem(str(tmp_path / f"{name}_bucket")),
                     dataset_name="ds", pipelines_dir=str(tmp_path / f"{name}_pipelines"))
    p.run(numbers())
    p.run(numbers())
    return p, seen


def test_state_matches_dlt_and_continues_across_runs(tmp_path: Path) -> None:
    import dlt

    theirs, their_pages = script(dlt, tmp_path, "current_dlt")
    ours, our_pages = script(lakeload, tmp_path, "current_ll")
    assert our_pages == their_pages == [[0, 1, 2], [3, 4, 5]]
    rename = {"current_dlt": "current_ll"}
    expected = {rename.get(k, k): v for k, v in theirs.state["sources"].items()}
    assert ours.state["sources"] == expected == {"current_ll": {"resources": {"numbers": {"next": 6}}, "runs": 2}}
    assert lakeload.current.state is lakeload.current.source_state
    assert sorted(r[0] for r in ours.dataset()("SELECT n FROM numbers").fetchall()) == list(range(6))


def test_state_committed_only_when_extract_succeeds(tmp_path: Path) -> None:
    @lakeload.resource(name="flaky")
    def flaky(fail: bool) -> Any:
        lakeload.current.resource_state()["marker"] = "set"
        yield {"id": 1}
        if fail:
            raise RuntimeError("source broke")

    p = lakeload.pipeline("current_fail", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                          dataset_name="ds", pipelines_dir=str(tmp_path / "pipelines"))
    with pytest.raises(lakeload.PipelineStepFailed, match="source broke"):
        p.run(flaky(True))
    assert p.state.get("sources", {}) == {}
    p.run(flaky(False))
    assert p.state["sources"]["current_fail"]["resources"]["flaky"] == {"marker": "set"}
    restored = lakeload.pipeline("current_fail", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                                 dataset_name="ds", pipelines_dir=str(tmp_path / "elsewhere"))
    restored.sync_destination()  # the state went to the bucket with the package
    assert restored.state["sources"]["current_fail"]["resources"]["flaky"] == {"marker": "set"}


def test_outside_a_resource_state_is_an_error_and_pipeline_is_the_last_one(tmp_path: Path) -> None:
    with pytest.raises(StateNotAvailableError, match="inside the function of a @lakeload.resource"):
        lakeload.current.resource_state()
    with pytest.raises(lakeload.LakeloadError):
        lakeload.current.source_state()
    p = lakeload.pipeline("current_last", pipelines_dir=str(tmp_path / "pipelines"))
    assert lakeload.current.pipeline() is p

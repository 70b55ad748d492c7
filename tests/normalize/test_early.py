"""`run()` normalizes extracted files while extract goes on, and builds exactly the tables of separate steps."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from harness import canonicalize, diff, read_bucket  # noqa: E402

import lakeload  # noqa: E402
from lakeload.demo.events import generate_events  # noqa: E402
from lakeload.errors import PipelineStepFailed  # noqa: E402
from lakeload.normalize import early  # noqa: E402
from lakeload.runtime.pipeline_spark import SparkPart  # noqa: E402

pytestmark = pytest.mark.usefixtures("spark")


def _pipeline(tmp_path: Path, name: str) -> lakeload.Pipeline:
    return lakeload.pipeline("early", destination=lakeload.destinations.filesystem(str(tmp_path / name / "bucket")),
                             dataset_name="ds", pipelines_dir=str(tmp_path / name / "pipes"))


@pytest.fixture
def early_results(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many splits each run got from the early normalize."""
    seen: list[int] = []
    original = early.EarlyNormalize.results

    def spy(self: early.EarlyNormalize, load_id: str) -> Any:
        found = original(self, load_id)
        seen.append(len(found))
        return found

    monkeypatch.setattr(early.EarlyNormalize, "results", spy)
    return seen


def test_run_overlapping_extract_and_normalize_builds_the_same_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, early_results: list[int]
) -> None:
    monkeypatch.setenv("EXTRACT__FILE_MAX_BYTES", "200000")  # ~8 files for 1,500 events
    steps = _pipeline(tmp_path, "steps")
    steps.extract(lakeload.resource(generate_events(1500), name="events"), loader_file_format="parquet")
    steps.normalize()
    steps.load()
    assert early_results == []
    overlapped = _pipeline(tmp_path, "overlap")
    info = overlapped.run(lakeload.resource(generate_events(1500), name="events"), loader_file_format="parquet")
    assert early_results and early_results[0] >= 5
    assert info.row_counts["events"] == 1500
    expected = canonicalize(read_bucket(tmp_path / "steps" / "bucket", "ds"))
    assert diff(expected, canonicalize(read_bucket(tmp_path / "overlap" / "bucket", "ds"))) == []
    columns = overlapped.default_schema.tables["events"]["columns"]
    assert list(columns) == list(steps.default_schema.tables["events"]["columns"])
    assert "external_ref__v_text" in columns


def test_failed_extract_drops_what_early_normalize_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, early_results: list[int]
) -> None:
    monkeypatch.setenv("EXTRACT__FILE_MAX_BYTES", "100000")

    def failing() -> Iterator[dict[str, Any]]:
        yield from generate_events(800)
        raise RuntimeError("source broke")

    p = _pipeline(tmp_path, "failing")
    with pytest.raises(PipelineStepFailed, match="source broke"):
        p.run(lakeload.resource(failing(), name="events"), loader_file_format="parquet")
    load_dir = Path(p.storage.packages_root) / "load"
    leftovers = [str(x) for x in load_dir.rglob("*") if x.is_file()] if load_dir.exists() else []
    assert leftovers == []
    info = p.run(lakeload.resource(generate_events(300), name="events"))
    assert info.row_counts["events"] == 300
    assert os.listdir(tmp_path / "failing" / "bucket" / "ds" / "events") != []


def test_spark_is_asked_for_once_the_first_file_fills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Spark starts beside the generator while the first file fills (1 MiB), not once that file is complete."""
    asked = threading.Event()
    threads: list[str] = []
    intervals: list[float] = []
    session = SparkPart.session  # what `pipeline.spark` and the steps ask
    before = sys.getswitchinterval()

    def spy(self: SparkPart) -> Any:
        threads.append(threading.current_thread().name)
        intervals.append(sys.getswitchinterval())
        asked.set()
        return session(self)

    monkeypatch.setattr(SparkPart, "session", spy)

    def events() -> Iterator[list[dict[str, Any]]]:
        yield [{"id": 1, "tags": ["a"]}]  # the first file opens: too little to start Spark for
        assert not asked.wait(0.5), "Spark was asked for by a file of one item"
        yield [{"id": i, "text": "x" * 1000} for i in range(2, 1100)]  # 1.1 MB: the file fills, far from complete
        assert asked.wait(20), "Spark was not asked for while the first file was filling"
        yield [{"id": i, "tags": ["b"]} for i in range(1100, 1150)]

    info = _pipeline(tmp_path, "warm").run(lakeload.resource(events(), name="events"))
    assert info.row_counts["events"] == 1149
    assert threads[0].startswith("lakeload-normalize")
    # the start hands the GIL back and forth quickly beside the generator, and the interval is put back after it
    assert intervals[0] == pytest.approx(early.START_SWITCH_INTERVAL) and intervals[0] < before
    assert sys.getswitchinterval() == before


def test_quick_handoff_puts_back_the_interval_unless_changed_meanwhile() -> None:
    before = sys.getswitchinterval()
    with early.quick_handoff(0.0001):
        assert sys.getswitchinterval() == pytest.approx(0.0001)
    assert sys.getswitchinterval() == before
    try:
        with early.quick_handoff(0.0001):
            sys.setswitchinterval(0.002)  # someone's own setting wins
        assert sys.getswitchinterval() == pytest.approx(0.002)
        with pytest.raises(RuntimeError), early.quick_handoff(0.0001):
            raise RuntimeError("a failed start")
        assert sys.getswitchinterval() == pytest.approx(0.002)
    finally:
        sys.setswitchinterval(before)

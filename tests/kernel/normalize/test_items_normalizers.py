"""Pass 1 on executors: the kernel's items normalizers take a split in turn (`kernel.normalize.tasks`)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakeload.errors import NormalizeError
from lakeload.kernel.normalize import tasks
from lakeload.kernel.normalize.plan import Split
from lakeload.kernel.normalize.tasks import (
    EXECUTOR_NORMALIZERS,
    ArrowItemsNormalizer,
    ArrowJsonNormalizer,
    ItemsNormalizer,
    RowNormalizer,
    normalize_split,
)
from tests.kernel.normalize.arrow_compare import make_plan, read_rows, write_lines

RECORDS = [{"id": 1, "tags": ["a", "b"]}, {"id": 2, "tags": []}]


def test_every_kind_is_an_items_normalizer_and_the_row_normalizer_comes_last() -> None:
    assert [type(n) for n in EXECUTOR_NORMALIZERS] == [ArrowItemsNormalizer, ArrowJsonNormalizer, RowNormalizer]
    assert all(isinstance(n.name, str) and callable(n.normalize) for n in EXECUTOR_NORMALIZERS)
    checked: ItemsNormalizer = RowNormalizer()  # mypy checks the protocol here
    assert checked.name == "rows"


def test_plain_json_lines_take_the_arrow_json_normalizer_and_arrow_items_step_aside(tmp_path: Path) -> None:
    source = write_lines(tmp_path / "in" / "events.jsonl", RECORDS)
    plan = make_plan(source, tmp_path / "out", fmt="jsonl")
    split = Split(3, str(source), "events")
    assert ArrowItemsNormalizer().normalize(plan, split) is None  # not its kind: no fallback to count
    report = ArrowJsonNormalizer().normalize(plan, split)
    assert isinstance(report, dict) and "row_path" not in report
    rows = read_rows(plan, report)
    assert [r["id"] for r in rows["events"]] == [1, 2] and [r["value"] for r in rows["events__tags"]] == ["a", "b"]


def test_a_normalizer_that_steps_aside_names_its_reason_in_the_rows_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write_lines(tmp_path / "in" / "events.jsonl", RECORDS)
    plan = make_plan(source, tmp_path / "out", fmt="jsonl")
    monkeypatch.setenv("LAKELOAD_ARROW_NORMALIZE", "0")
    report = normalize_split(plan, Split(3, str(source), "events"))
    assert report["row_path"] == "the Arrow path is turned off (LAKELOAD_ARROW_NORMALIZE=0)"
    assert sorted(read_rows(plan, report)) == ["events", "events__tags"]


def test_arrow_items_are_normalized_by_their_own_kind(tmp_path: Path) -> None:
    source = tmp_path / "in" / "events.parquet"
    source.parent.mkdir(parents=True)
    pq.write_table(pa.table({"id": [1, 2], "name": ["a", "b"]}), source)
    plan = make_plan(source, tmp_path / "out", fmt="parquet")
    split = Split(3, str(source), "events", file_format="parquet")
    assert ArrowJsonNormalizer().normalize(plan, split) is None
    report = normalize_split(plan, split)
    assert "row_path" not in report and report["row_counts"] == {"events": 2}


def test_no_normalizer_taking_a_split_is_a_named_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = write_lines(tmp_path / "in" / "events.jsonl", RECORDS)
    plan = make_plan(source, tmp_path / "out", fmt="jsonl")
    monkeypatch.setattr(tasks, "EXECUTOR_NORMALIZERS", (ArrowItemsNormalizer(),))
    with pytest.raises(NormalizeError, match="No normalizer took split 3"):
        normalize_split(plan, Split(3, str(source), "events"))

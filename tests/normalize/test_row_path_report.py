"""A plain JSON split that the Arrow path leaves to the row path is never silent: the trace counts it by reason
(`last_normalize_info.row_path_splits`, also in its text) and the driver logs it at INFO."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

import lakeload

pytestmark = pytest.mark.usefixtures("spark")
CONTRACT = "a schema contract: rows are checked one by one"


def _pipeline(tmp_path: Path) -> Any:
    return lakeload.pipeline("row_path", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                             dataset_name="ds", pipelines_dir=str(tmp_path / "pipelines"))


def test_plain_json_on_the_arrow_path_reports_no_row_path(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    p = _pipeline(tmp_path)
    with caplog.at_level(logging.INFO, "lakeload.normalize"):
        p.run([{"id": i, "name": f"n{i}"} for i in range(50)], table_name="users")
    info = p.last_trace.last_normalize_info
    assert info.row_counts == {"users": 50} and info.row_path_splits == {}
    assert "row by row" not in caplog.text and "row by row" not in str(info)


def test_a_schema_contract_takes_the_row_path_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    p = _pipeline(tmp_path)
    p.run([{"id": 1}], table_name="users")
    frozen = lakeload.resource([{"id": i} for i in range(2, 12)], name="users", schema_contract="freeze")
    with caplog.at_level(logging.INFO, "lakeload.normalize"):
        p.run(frozen)
    info = p.last_trace.last_normalize_info
    assert info.row_path_splits == {CONTRACT: 1}
    assert info.asdict()["row_path_splits"] == {CONTRACT: 1}
    assert f"1 split(s) normalized row by row instead of with Arrow: {CONTRACT}" in str(info)
    assert f"1 of 1 split(s) normalized row by row instead of with Arrow: {CONTRACT} (split 0)" in caplog.text


def test_a_split_the_arrow_path_gives_up_on_names_its_reason(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Nesting deeper than the resource's `max_table_nesting`: the Arrow path steps aside (its flattener does not
    cut nesting), the row path keeps the rest as json, and the reason reaches the trace and the log."""
    p = _pipeline(tmp_path)
    deep = lakeload.resource([{"id": i, "a": {"b": [{"c": [1, 2]}]}} for i in range(20)], name="deep", max_table_nesting=0)
    with caplog.at_level(logging.INFO, "lakeload.normalize"):
        p.run(deep)
    info = p.last_trace.last_normalize_info
    assert info.row_counts == {"deep": 20}
    assert info.row_path_splits == {"nesting limit": 1}
    assert "normalized row by row instead of with Arrow: nesting limit (split 0)" in caplog.text

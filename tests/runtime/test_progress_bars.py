"""The rich progress display: per stage the count, the rate in the stage's unit and the ETA."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from rich.console import Console

import lakeload
from lakeload.runtime.progress import BarProgress


def test_rich_bars_show_rate_and_eta() -> None:
    out = io.StringIO()
    bars = BarProgress("rich", console=Console(file=out, force_terminal=True, width=160))
    bars.start("normalize", 10, unit="Spark tasks")
    for _ in range(4):
        time.sleep(0.05)
        bars.update("normalize", 1)
    bars._rich.refresh()
    shown = out.getvalue()
    assert "normalize" in shown and "4/10 Spark tasks" in shown and "Spark tasks/s" in shown and "ETA" in shown
    bars.end("normalize", "10 rows")
    assert "10/10 Spark tasks" in out.getvalue()


@pytest.mark.usefixtures("spark")
def test_a_run_with_rich_bars_shows_every_stage(tmp_path: Path) -> None:
    out = io.StringIO()
    bars = BarProgress("rich", console=Console(file=out, force_terminal=True, width=160))
    p = lakeload.pipeline("bars", destination=lakeload.destinations.filesystem(str(tmp_path / "b")),
                          pipelines_dir=str(tmp_path / "p"), progress=bars)
    p.run([{"id": i} for i in range(20)], table_name="t")
    shown = out.getvalue()
    assert all(stage in shown for stage in ("extract", "normalize", "load"))
    assert "rows/s" in shown and "Spark tasks/s" in shown

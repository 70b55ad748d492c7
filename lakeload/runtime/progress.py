"""Progress of a run, per stage: `progress="log"`, `"tqdm"`, `"rich"` or None (quiet).

Bars are shown only when stderr is a terminal; otherwise `log` lines are written instead, so CI logs
stay readable. Spark's own console progress bar is switched off by lakeload's session settings.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

from lakeload.errors import ConfigurationError

logger = logging.getLogger("lakeload.progress")


class Progress:
    """Quiet progress: the base for the others."""

    def start(self, stage: str, total: int | None = None, unit: str = "items") -> None:
        pass

    def update(self, stage: str, n: int = 1) -> None:
        pass

    def end(self, stage: str, summary: str = "") -> None:
        pass


class LogProgress(Progress):
    """One log line when a stage starts, every few seconds while it runs, and when it ends."""

    def __init__(self, every_seconds: float = 5.0) -> None:
        self.every = every_seconds
        self._counts: dict[str, int] = {}
        self._started: dict[str, float] = {}
        self._units: dict[str, str] = {}
        self._last = 0.0

    def start(self, stage: str, total: int | None = None, unit: str = "items") -> None:
        self._counts[stage] = 0
        self._units[stage] = unit
        self._started[stage] = self._last = time.perf_counter()
        logger.info("%s: started%s", stage, f" ({total} {unit})" if total else "")

    def update(self, stage: str, n: int = 1) -> None:
        self._counts[stage] = self._counts.get(stage, 0) + n
        now = time.perf_counter()
        if now - self._last >= self.every:
            self._last = now
            rate = self._counts[stage] / max(now - self._started.get(stage, now), 1e-9)
            logger.info("%s: %d %s (%.0f/s)", stage, self._counts[stage], self._units.get(stage, "items"), rate)

    def end(self, stage: str, summary: str = "") -> None:
        took = time.perf_counter() - self._started.get(stage, time.perf_counter())
        logger.info("%s: done in %.2f s %s", stage, took, summary)


class BarProgress(Progress):
    """A tqdm or rich bar per stage; rich bars show the count, the rate (rows/s, Spark tasks/s) and the ETA."""

    def __init__(self, kind: str, console: Any = None) -> None:
        self.kind = kind
        self.console = console  # a rich Console (default: stderr)
        self._bars: dict[str, Any] = {}
        self._rich: Any = None

    def start(self, stage: str, total: int | None = None, unit: str = "items") -> None:
        if self.kind == "tqdm":
            from tqdm import tqdm

            self._bars[stage] = tqdm(total=total, desc=stage, unit=f" {unit}", leave=True)
        else:
            from rich.progress import Progress as RichProgress

            if self._rich is None:
                self._rich = RichProgress(*rich_columns(), transient=False, console=self.console)
                self._rich.start()
            self._bars[stage] = self._rich.add_task(stage, total=total, unit=unit)

    def update(self, stage: str, n: int = 1) -> None:
        bar = self._bars.get(stage)
        if bar is None:
            return
        if self.kind == "tqdm":
            bar.update(n)
        else:
            self._rich.update(bar, advance=n)

    def end(self, stage: str, summary: str = "") -> None:
        bar = self._bars.pop(stage, None)
        if bar is None:
            return
        if self.kind == "tqdm":
            if summary:
                bar.set_postfix_str(summary)
            bar.close()
        else:
            self._rich.update(bar, description=f"{stage} {summary}", completed=self._rich.tasks[bar].total or 1, total=self._rich.tasks[bar].total or 1)
            if not self._bars:
                self._rich.stop()
                self._rich = None


def rich_columns() -> list[Any]:
    """Stage, bar, done/total, rate in the stage's unit, elapsed time and ETA (when the total is known)."""
    from rich.progress import BarColumn, ProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            unit = task.fields.get("unit", "items")
            return Text(f"{speed:,.0f} {unit}/s" if speed else f"- {unit}/s")

    class CountColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            total = f"/{task.total:,.0f}" if task.total is not None else ""
            return Text(f"{task.completed:,.0f}{total} {task.fields.get('unit', 'items')}")

    return [TextColumn("{task.description}"), BarColumn(), CountColumn(), RateColumn(), TimeElapsedColumn(),
            TextColumn("ETA"), TimeRemainingColumn()]


def make_progress(progress: str | Progress | None) -> Progress:
    """Build a reporter; bar kinds fall back to `log` when stderr is not a terminal."""
    if isinstance(progress, Progress):
        return progress
    if not progress:
        return Progress()
    if progress in ("tqdm", "rich"):
        return BarProgress(progress) if sys.stderr.isatty() else LogProgress()
    if progress == "log":
        return LogProgress()
    raise ConfigurationError(f"Unknown progress {progress!r}; use 'log', 'tqdm', 'rich' or None.")

"""Issue 16's performance goals as ratios a benchmark run can check (``--check`` of the bench scripts).

A :class:`Goal` is one ratio and its bound; a ratio that needs a tool the run did not measure is
``None`` and printed as "not measured" (not a failure). Example::

    goals = [Goal("lakeload / DuckDB", ratio(ll_total, duckdb_total), 2.0, at_most=True)]
    misses = print_goals("JSONL files -> parquet", goals)  # 0 when every measured goal holds
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Goal:
    """One goal: ``value <= bound`` when ``at_most``, else ``value >= bound``; ``value`` None = not measured."""

    name: str
    value: float | None
    bound: float
    at_most: bool
    unit: str = "x"

    @property
    def status(self) -> str:
        if self.value is None:
            return "not measured"
        held = self.value <= self.bound if self.at_most else self.value >= self.bound
        return "PASS" if held else "MISS"

    def line(self) -> str:
        shown = "-" if self.value is None else f"{self.value:.2f}{self.unit}"
        sign = "<=" if self.at_most else ">="
        return f"  {self.name:58} {shown:>10}  (goal {sign} {self.bound:g}{self.unit})  {self.status}"


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``, or None when either is missing (a tool not in the run) or zero."""
    if not numerator or not denominator:
        return None
    return numerator / denominator


def print_goals(title: str, goals: Iterable[Goal]) -> int:
    """Prints each goal with PASS / MISS / not measured under ``title``; returns the number of MISSes."""
    goals = list(goals)
    print(f"\n{title}:")
    for goal in goals:
        print(goal.line())
    return sum(goal.status == "MISS" for goal in goals)

"""Issue 16's performance goals as ratios a benchmark run can check (``--check`` of the bench scripts).

A :class:`Goal` is one ratio and its bound; a ratio that needs a tool the run did not measure is
``None`` and printed as "not measured" (not a failure). Example::

    goals = [Goal("lakeload / DuckDB", ratio(ll_total, duckdb_total), 2.0, at_most=True)]
    misses = print_goals("JSONL files -> parquet", goals)  # 0 when every measured goal holds

With ``--rounds N`` a benchmark runs every tool N times, interleaved (each round in a rotated order), and its
goals use each tool's median run (:func:`median_run`): on a shared machine one run of a tool can be 20-30%
slower than the next, and the median of interleaved runs is fair to every tool alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


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


def rotated(items: Sequence[T], round_index: int) -> list[T]:
    """``items`` in the order of round ``round_index``: rotated by one place a round, so no tool always runs first."""
    shift = round_index % len(items) if items else 0
    return [*items[shift:], *items[:shift]]


def median_run(runs: list[dict[str, Any]], key: str = "total_s") -> dict[str, Any]:
    """The run with the median ``key`` (the lower middle for an even count) among the runs that measured it (and
    are not marked ``"ok": False``), with
    every run's value under ``"rounds"``; the last run when none measured it (its error is the one to show).

    >>> median_run([{"total_s": 3.0}, {"total_s": 1.0}, {"total_s": 2.0}])
    {'total_s': 2.0, 'rounds': [3.0, 1.0, 2.0]}
    """
    measured = sorted((r for r in runs if r.get(key) and r.get("ok", True)), key=lambda r: float(r[key]))
    chosen = measured[(len(measured) - 1) // 2] if measured else runs[-1]
    return {**chosen, "rounds": [r.get(key) for r in runs]}


def rounds_text(result: dict[str, Any]) -> str:
    """``"; rounds 20.1/18.7/19.3 s"`` when the result is the median of several runs, else ``""``."""
    rounds = result.get("rounds") or []
    if len(rounds) < 2:
        return ""
    return "; rounds " + "/".join("-" if v is None else f"{v:.1f}" for v in rounds) + " s"

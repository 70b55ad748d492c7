"""What all incremental filters share: the run's range, the boundary hashes and the timezone adaption.

One filter per kind of item: records (`records.py`), Arrow tables and pandas frames (`arrow.py`), Spark
DataFrames (`spark.py`). A filter sees every item of one run and tracks the new last value and the hashes of
the rows at it (`unique_hashes`), which `Incremental` writes to the state.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lakeload.errors import IncrementalPrimaryKeyMissing
from lakeload.extract.incremental.cursor import CursorPath
from lakeload.kernel.spark.incremental import KeyHint, has_legacy_hashes, row_hash

logger = logging.getLogger("lakeload.extract")


@dataclass
class RunRange:
    """The settings of one bound run that every filter reads (copied from `Incremental` at its first item)."""

    resource_name: str
    cursor: CursorPath
    start_value: Any
    end_value: Any
    last_value_func: Callable[..., Any]
    primary_key: KeyHint
    unique_hashes: set[str]
    on_cursor_value_missing: str = "raise"
    lag: float | None = None
    range_start: str = "closed"
    range_end: str = "open"

    @property
    def deduplicates(self) -> bool:
        """Boundary de-duplication is on: closed start, no end value, no lag with min/max, a non-empty key."""
        if self.range_start == "open" or self.end_value is not None:
            return False
        if self.lag and self.last_value_func in (min, max):
            return False
        return not (isinstance(self.primary_key, (list, tuple)) and len(self.primary_key) == 0)


@dataclass
class Filter:
    """Base of the filters: the new last value, the rows (or hashes) at it, and the out-of-range flags."""

    run: RunRange
    last_value: Any = None
    last_rows: list[Any] = field(default_factory=list)
    unique_hashes: set[str] = field(default_factory=set)
    hashes_legacy: bool = False
    start_legacy: bool = False
    seen_data: bool = False
    start_out_of_range: bool = False
    end_out_of_range: bool = False

    def __post_init__(self) -> None:
        self.last_value = self.run.start_value
        self.unique_hashes = set(self.run.unique_hashes)
        self.start_legacy = self.hashes_legacy = has_legacy_hashes(self.run.unique_hashes)

    def keep(self, item: Any) -> tuple[Any, bool, bool]:
        """(`item` with only its rows in range, or None; start_out_of_range; end_out_of_range)."""
        raise NotImplementedError

    def hash_of(self, row: Any, legacy: bool = False) -> str:
        """The boundary hash of `row` (of its primary key or, without one, of the whole row)."""
        try:
            return row_hash(row, self.run.primary_key, legacy)
        except KeyError as missing:
            raise IncrementalPrimaryKeyMissing(self.run.resource_name, str(missing.args[0]), row) from None

    def final_hashes(self) -> list[str]:
        """The hashes to store, sorted (the same state whichever order rows or Spark's tasks came in): of the rows
        kept at the last value, and those computed directly."""
        hashes = {self.hash_of(row, self.hashes_legacy) for row in self.last_rows}
        hashes.update(self.unique_hashes)
        return sorted(hashes)

    def adapt_timezone(self, row_value: Any) -> None:
        """On the first datetime of the data: give start (and end) value the data's tz-awareness, as dlt."""
        if self.seen_data or not isinstance(row_value, dt.datetime):
            return
        if isinstance(self.run.start_value, dt.datetime):
            adapted = adapt_timezone(row_value, self.run.start_value, "start value", self.run.resource_name)
            self.run.start_value = self.last_value = adapted
        if isinstance(self.run.end_value, dt.datetime):
            self.run.end_value = adapt_timezone(row_value, self.run.end_value, "end_value", self.run.resource_name)


def adapt_timezone(row_value: dt.datetime, bound: dt.datetime, name: str, resource_name: str) -> dt.datetime:
    """`bound` made naive or aware like `row_value` (a naive bound is read as UTC), with a warning when changed."""
    if (bound.tzinfo is None) == (row_value.tzinfo is None):
        return bound
    logger.warning(
        "Resource %s: the incremental %s %s and the data's cursor value %s differ in timezone awareness; the %s "
        "follows the data (naive values are read as UTC)", resource_name, name, bound, row_value, name,
    )
    if row_value.tzinfo is None:
        return bound.astimezone(dt.timezone.utc).replace(tzinfo=None)
    aware = bound.replace(tzinfo=dt.timezone.utc) if bound.tzinfo is None else bound
    return aware.astimezone(row_value.tzinfo)

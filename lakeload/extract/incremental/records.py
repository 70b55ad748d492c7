"""The incremental filter of records (dicts and objects), one record at a time, as dlt's.

A record is kept when its cursor is inside the range: not "below" the start value (by `last_value_func`;
equal is kept unless `range_start="open"` or its hash is in the start hashes) and "below" the end value
(equal only with `range_end="closed"`).

>>> from lakeload.extract.incremental.cursor import parse_cursor_path
>>> run = RunRange("r", parse_cursor_path("id"), 2, None, max, None, set())
>>> f = RecordFilter(run)
>>> [f.keep({"id": i})[0] is not None for i in (1, 2, 3)], f.last_value
([False, True, True], 3)
"""

from __future__ import annotations

from typing import Any

from lakeload.errors import (
    IncrementalCursorInvalidCoercion,
    IncrementalCursorPathHasValueNone,
    IncrementalCursorPathMissing,
)
from lakeload.extract.incremental.transform import Filter, RunRange

__all__ = ["RecordFilter", "RunRange"]

_MISSING = object()


class RecordFilter(Filter):
    """Filters records; `keep(record)` returns (record or None, start_out_of_range, end_out_of_range)."""

    def cursor_value(self, row: Any) -> Any:
        """The cursor value of `row`; None for a missing or None value unless `on_cursor_value_missing="raise"`."""
        found, value = self.run.cursor.find(row)
        if value is not None:
            return value
        if self.run.on_cursor_value_missing == "raise":
            error = IncrementalCursorPathHasValueNone if found else IncrementalCursorPathMissing
            raise error(self.run.resource_name, self.run.cursor.text, row)
        return None

    def keep(self, row: Any) -> tuple[Any, bool, bool]:
        if row is None:
            return None, False, False
        row_value = self.cursor_value(row)
        if row_value is None:
            return (None if self.run.on_cursor_value_missing == "exclude" else row), False, False
        self.adapt_timezone(row_value)
        if self.run.end_value is not None and self._past_end(row_value):
            return None, False, True
        self.seen_data = True
        func, last_value = self.run.last_value_func, self.last_value
        new_value = self._compare(lambda: func((row_value,) if last_value is None else (row_value, last_value)), row_value, last_value, "start value")
        if last_value != new_value:
            self.last_value = new_value
            if self.run.deduplicates:
                self.last_rows, self.unique_hashes, self.hashes_legacy = [row], set(), False
            return row, False, False
        return self._at_or_below_last(row, row_value)

    def _at_or_below_last(self, row: Any, row_value: Any) -> tuple[Any, bool, bool]:
        func, start = self.run.last_value_func, self.run.start_value
        processed = func((row_value,))
        if self.run.range_start == "open" and processed == start:
            return None, True, False
        if func((row_value,) if start is None else (row_value, start)) == start:
            if processed != start:
                return None, True, False  # "below" the start value: loaded before
            if self.run.deduplicates and self.hash_of(row, self.start_legacy) in self.run.unique_hashes:
                return None, True, False  # at the start value and loaded by the last run
        if processed == self.last_value and self.run.deduplicates:
            self.last_rows.append(row)
        return row, False, False

    def _past_end(self, row_value: Any) -> bool:
        func, end = self.run.last_value_func, self.run.end_value

        def past() -> bool:
            if func((row_value, end)) != end:
                return True
            return self.run.range_end == "open" and func((row_value,)) == end

        return bool(self._compare(past, row_value, end, "end_value"))

    def _compare(self, compute: Any, row_value: Any, bound: Any, bound_name: str) -> Any:
        try:
            return compute()
        except Exception as exc:
            raise IncrementalCursorInvalidCoercion(
                self.run.resource_name, self.run.cursor.text, bound_name, bound, row_value, str(exc)
            ) from exc

"""The incremental filter of Spark DataFrames: a Spark predicate and Spark aggregates; no row reaches the driver.

For each DataFrame item:
1. One aggregate job over the cursor column only (`select(cursor)` prunes the rest): its max (min), the
   count of None cursors and of rows before the start value. It runs as a `noop` write observed with
   `DataFrame.observe`, so only the aggregate values come back, never rows.
2. The item becomes `frame.where(<in range>)` (start and end value, open or closed; None cursors kept with
   `on_cursor_value_missing="include"`), written later by the extractor on the executors.
3. Boundary de-duplication: rows at the start value whose hash was stored by the last run are dropped by a
   Python task (`mapInArrow`) that sees only the rows at the start value; the hashes of the rows at the new
   last value are computed in tasks as well and come back as one observed set of short strings (12
   characters per row at the new last value, which is one cursor value).

Evaluation: the source frame is evaluated by the aggregate job, by the extractor's write, and (when
de-duplication is on) by the job that hashes the rows at the new last value, which reads only rows with that
cursor value (file sources push the filter down). Cache an expensive frame (`frame.cache()`) before yielding
it. Only `max` and `min` are supported as `last_value_func`; the cursor is a column or a struct field path.
"""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
from typing import TYPE_CHECKING, Any

from lakeload.errors import IncrementalCursorPathHasValueNone, IncrementalCursorPathMissing, IncrementalError
from lakeload.extract.incremental.transform import Filter, RunRange
from lakeload.kernel.spark.incremental import HASH_SCHEMA, BoundarySpec, drop_seen_rows, hash_rows
from lakeload.spark.pandas_warning import map_in_arrow

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

_names = itertools.count()
_PROCESS = uuid.uuid4().hex[:12]  # observation names stay unique on a server session other processes share
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def observed(frame: DataFrame, *metrics: Column) -> dict[str, Any]:
    """The values of aggregate `metrics` over `frame`, from one Spark job that brings back nothing else."""
    from pyspark.sql import Observation

    observation = Observation(f"lakeload_incremental_{_PROCESS}_{next(_names)}")
    frame.observe(observation, *metrics).write.format("noop").mode("overwrite").save()
    return dict(observation.get)


class SparkFilter(Filter):
    """Filters Spark DataFrames lazily (see the module docstring)."""

    def __init__(self, run: RunRange) -> None:
        super().__init__(run)
        if run.last_value_func not in (max, min):
            raise IncrementalError(
                f"Resource '{run.resource_name}': Spark DataFrames support last_value_func max or min only."
            )
        self.ascending = run.last_value_func is max

    def _column_name(self, frame: DataFrame) -> str:
        steps = self.run.cursor.steps
        if not all(isinstance(s, str) for s in steps):
            raise IncrementalCursorPathMissing(self.run.resource_name, self.run.cursor.text, "<Spark DataFrame>",
                                               "Spark DataFrames need a column or struct field path as the cursor. ")
        name = ".".join(f"`{s}`" for s in steps)
        try:
            frame.select(name).schema  # noqa: B018 - resolves the column on the driver, no job
        except Exception as exc:
            raise IncrementalCursorPathMissing(
                self.run.resource_name, self.run.cursor.text, "<Spark DataFrame>",
                f"The DataFrame has the columns {frame.columns}. ",
            ) from exc
        return name

    def _compare(self, column: Column, value: Any, closed: bool, upward: bool) -> Column:
        from pyspark.sql import functions as F  # noqa: N812

        bound = F.lit(_spark_value(value))
        if upward:
            return column >= bound if closed else column > bound
        return column <= bound if closed else column < bound

    def _conditions(self, column: Column) -> tuple[Column | None, Column]:
        """(in range of the start value or None, in range of start and end) for `column`."""
        from pyspark.sql import functions as F  # noqa: N812

        start, end = self.run.start_value, self.run.end_value
        in_start = self._compare(column, start, self.run.range_start == "closed", self.ascending) if start is not None else None
        in_end = self._compare(column, end, self.run.range_end == "closed", not self.ascending) if end is not None else None
        in_range = F.lit(True)
        for condition in (in_start, in_end):
            in_range = in_range & condition if condition is not None else in_range
        return in_start, in_range

    def _facts(self, frame: DataFrame, name: str) -> dict[str, Any]:
        """One aggregate job over the cursor column alone: its edge (max/min), None count, kept and early rows."""
        from pyspark.sql import functions as F  # noqa: N812
        from pyspark.sql.types import TimestampType

        pruned = frame.select(F.col(name).alias("cursor"))
        cursor = F.col("cursor")
        in_start, in_range = self._conditions(cursor)
        edge = (F.max if self.ascending else F.min)(cursor)
        instant = isinstance(pruned.schema["cursor"].dataType, TimestampType)
        metrics = [(F.unix_micros(edge) if instant else edge).alias("edge"),
                   F.count(F.when(cursor.isNull(), 1)).alias("nulls"), F.count(F.when(in_range, 1)).alias("kept")]
        if in_start is not None:
            at_start = cursor == F.lit(_spark_value(self.run.start_value))
            metrics += [F.count(F.when(~in_start, 1)).alias("before_start"), F.count(F.when(at_start, 1)).alias("at_start")]
        facts = observed(pruned, *metrics)
        if instant and facts["edge"] is not None:  # a Spark timestamp is an instant: aware, in UTC
            facts["edge"] = _EPOCH + dt.timedelta(microseconds=facts["edge"])
        return facts

    def keep(self, frame: DataFrame) -> tuple[Any, bool, bool]:
        from pyspark.sql import functions as F  # noqa: N812

        name = self._column_name(frame)
        facts = self._facts(frame, name)
        include_nulls = self.run.on_cursor_value_missing == "include"
        if facts["nulls"] and self.run.on_cursor_value_missing == "raise":
            raise IncrementalCursorPathHasValueNone(self.run.resource_name, self.run.cursor.text, "<Spark DataFrame>")
        edge = facts["edge"]
        self.adapt_timezone(edge)
        self.seen_data = True
        cursor = F.col(name)
        _, in_range = self._conditions(cursor)  # after adapt_timezone: the bounds follow the data
        start, end, func = self.run.start_value, self.run.end_value, self.run.last_value_func
        end_out = end is not None and edge is not None and (
            func((edge, end)) != end or (self.run.range_end == "open" and edge == end))
        start_out = bool(facts.get("before_start"))
        filtered = frame.where(in_range | cursor.isNull() if include_nulls else in_range)
        kept = facts["kept"] + (facts["nulls"] if include_nulls else 0)
        if start is not None and self.run.deduplicates and self.run.unique_hashes:
            filtered = self._drop_seen(filtered, cursor, start)
            if kept and facts["kept"] == facts["at_start"]:  # only boundary rows in range: are any new?
                kept = observed(filtered, F.count(F.lit(1)).alias("rows"))["rows"]
        self._track_last_value(filtered, cursor, edge)
        if not kept:
            return None, start_out, end_out
        return filtered, start_out, end_out

    def _spec(self, frame: DataFrame, legacy: bool, hashes: frozenset[str] = frozenset()) -> BoundarySpec:
        key = self.run.primary_key
        if callable(key):
            raise IncrementalError(f"Resource '{self.run.resource_name}': Spark DataFrames need a primary key of column names, not a function.")
        columns = [key] if isinstance(key, str) else list(key) if key is not None else list(frame.columns)
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            from lakeload.errors import IncrementalPrimaryKeyMissing

            raise IncrementalPrimaryKeyMissing(self.run.resource_name, missing[0], "<Spark DataFrame>")
        spec_key = key if isinstance(key, str) or key is None else tuple(key)
        return BoundarySpec(spec_key, hashes, legacy)

    def _drop_seen(self, frame: DataFrame, cursor: Column, start: Any) -> DataFrame:
        at_start = cursor == _spark_value(start)
        spec = self._spec(frame, self.start_legacy, frozenset(self.run.unique_hashes))
        kept_at_start = map_in_arrow(frame.where(at_start), drop_seen_rows(spec), frame.schema)
        return frame.where(~at_start | cursor.isNull()).unionByName(kept_at_start)

    def _track_last_value(self, filtered: DataFrame, cursor: Column, edge: Any) -> None:
        if edge is None:
            return
        advanced = self.last_value is None or self.run.last_value_func((edge, self.last_value)) != self.last_value
        if not advanced and not (edge == self.last_value and self.run.deduplicates):
            return
        if advanced:
            self.last_value = edge
        if not self.run.deduplicates:
            return
        from pyspark.sql import functions as F  # noqa: N812

        spec = self._spec(filtered, False if advanced else self.hashes_legacy)
        hashed = map_in_arrow(filtered.where(cursor == _spark_value(edge)), hash_rows(spec), HASH_SCHEMA)
        hashes = set(observed(hashed, F.collect_set("hash").alias("hashes"))["hashes"] or ())
        if advanced:
            self.unique_hashes, self.hashes_legacy = hashes, False
        else:
            self.unique_hashes.update(hashes)


def _spark_value(value: Any) -> Any:
    """A bound as Spark compares it: aware datetimes in UTC (the session's time zone is UTC in lakeload)."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc)
    return value

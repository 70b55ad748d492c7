"""One item through a live incremental: pick the filter for its kind, keep what is in range, write the state.

A page (a list) is filtered record by record (an emptied page is dropped; an empty page passes as it is);
Arrow tables, record batches and pandas frames go through `arrow.ArrowFilter`, Spark DataFrames through
`spark.SparkFilter`, anything else through `records.RecordFilter`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lakeload.extract.incremental.arrow import ArrowFilter
from lakeload.extract.incremental.records import RecordFilter
from lakeload.extract.incremental.transform import Filter

if TYPE_CHECKING:
    from lakeload.extract.incremental.incremental import Incremental


def filter_kind(item: Any) -> type[Filter]:
    """The filter class for `item` (a list is judged by its first element, as dlt does)."""
    sample = item[0] if isinstance(item, list) and item else item
    module = type(sample).__module__
    if module.startswith("pyspark"):
        from lakeload.extract.incremental.spark import SparkFilter

        return SparkFilter
    if module.startswith(("pyarrow", "pandas")):
        return ArrowFilter
    return RecordFilter


def filter_item(live: Incremental[Any], item: Any) -> Any:
    """`item` with only the rows in range (None when none is), the state updated as dlt does after each item."""
    if item is None or (isinstance(item, list) and not item):
        return item
    found = live.filter_for(filter_kind(item))
    if isinstance(item, list):  # the whole page is filtered; a row out of range marks it (row_order closes after it)
        rows, start_out, end_out = [], False, False
        for row in item:
            kept, row_start_out, row_end_out = found.keep(row)
            start_out, end_out = start_out or row_start_out, end_out or row_end_out
            if kept is not None:
                rows.append(kept)
        result: Any = rows or None
        found.start_out_of_range, found.end_out_of_range = start_out, end_out
    else:
        result, found.start_out_of_range, found.end_out_of_range = found.keep(item)
    live.record(found, result is not None)
    return result

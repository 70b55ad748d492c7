"""Custom sink destinations: a function `(items, table) -> None` that receives normalized rows.

Example (`run()` normalizes on Spark)::

    @lakeload.destination(batch_size=100)
    def my_sink(items, table):
        post_to_api(table["name"], items)
    lakeload.pipeline("to_api", destination=my_sink).run(data, table_name="events")

By default the function runs in the driver process, where the script's objects live: a sink that appends to a
list or writes through an open connection of the script works as in dlt. It is fed file by file and batch by
batch from the load package (never a whole table in memory). `run_on="executors"` runs it on Spark executors
instead, one task per normalized file: for sinks that write to an external system at Spark's scale; such a
function must be picklable, and what it changes in the script's objects stays in the executors' processes.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

from lakeload.destinations.reference import (
    Destination,
    DestinationCapabilities,
    dlt_destination_type,
    normalized_type,
)
from lakeload.errors import ConfigurationError
from lakeload.spark.shipping import ship_by_value

SinkFunction = Callable[[Any, dict[str, Any]], Any]
RunOn = Literal["driver", "executors"]
RUN_ON = ("driver", "executors")


class sink(Destination):  # noqa: N801 - mirrors `lakeload.destinations.filesystem`
    """A destination that calls `func(items, table)` for each batch of normalized rows of a table.

    `items` is a list of dicts (rows) by default; `table` is the table's schema (dlt's dict).
    """

    type_name = "sink"

    def __init__(
        self,
        func: SinkFunction,
        destination_name: str | None = None,
        batch_size: int = 10,
        loader_file_format: str = "jsonl",
        naming_convention: str = "direct",
        skip_dlt_columns_and_tables: bool = True,
        max_table_nesting: int = 0,
        run_on: RunOn = "driver",
    ) -> None:
        if not callable(func):
            raise ConfigurationError(f"A sink destination needs a function (items, table) -> None, got {func!r}.")
        params = [p for p in inspect.signature(func).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(params) < 2 and not any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(func).parameters.values()):
            raise ConfigurationError(f"Sink function {func.__name__} must take (items, table); it takes {len(params)} argument(s).")
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be 1 or more, got {batch_size}.")
        if run_on not in RUN_ON:
            raise ConfigurationError(
                f"Sink {getattr(func, '__name__', func)!r}: run_on must be 'driver' (the default: the function runs in "
                f"this process) or 'executors' (on Spark executors), got {run_on!r}."
            )
        if run_on == "executors":
            ship_by_value(func)
        self.run_on: RunOn = run_on
        self.func = func
        self.destination_name: str = destination_name or str(getattr(func, "__name__", "sink"))
        self.batch_size = batch_size
        self.loader_file_format = loader_file_format
        self.naming_convention = naming_convention
        self.skip_dlt_columns_and_tables = skip_dlt_columns_and_tables
        self.max_table_nesting = max_table_nesting

    @property
    def name(self) -> str:
        return self.destination_name

    @property
    def destination_type(self) -> str:
        """dlt's: a class named after the function, in the function's module (`my_sink` of `app.py`:
        "app.MySinkDestination"); "dlt.destinations.destination" for a function of the script run (`__main__`)."""
        module = getattr(self.func, "__module__", None) or "__main__"
        if module == "__main__":
            return dlt_destination_type(self.type_name)
        qualname = str(getattr(self.func, "__qualname__", self.destination_name)).replace("<locals>.", "")
        words = re.findall(r"[^.^_]+", qualname)
        return normalized_type(f"{module}.{''.join(w[0].upper() + w[1:] for w in words)}Destination")

    def capabilities(self) -> DestinationCapabilities:
        return replace(
            DestinationCapabilities(),
            preferred_loader_file_format=self.loader_file_format,
            supported_loader_file_formats=("jsonl", "parquet"),
            supported_table_formats=(),
            naming_convention=self.naming_convention,
            supported_merge_strategies=(),
            supported_replace_strategies=(),
        )

    def __call__(self, items: Any, table: dict[str, Any]) -> Any:
        """The sink stays callable as the function it wraps."""
        return self.func(items, table)

    def __repr__(self) -> str:
        return f"sink(destination_name={self.name!r}, batch_size={self.batch_size}, run_on={self.run_on!r})"

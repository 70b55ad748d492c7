# An incremental cursor started at a pendulum datetime (the style of dlt's incremental loading pages)
from _show import pipeline_for, show

import lakeload as dlt
from lakeload.common.pendulum import pendulum
from lakeload.common.time import ensure_pendulum_datetime
from lakeload.common.typing import TDataItems

TICKETS = [{"id": n, "updated_at": f"2023-12-{30 + n}T08:00:00+01:00" if n < 2 else f"2024-01-0{n - 1}T08:00:00Z"}
           for n in range(5)]


@dlt.resource(primary_key="id")
def tickets(
    updated_at=dlt.sources.incremental("updated_at", initial_value=pendulum.datetime(2024, 1, 1)),  # noqa: B008
) -> TDataItems:
    for ticket in TICKETS:
        yield {**ticket, "updated_at": ensure_pendulum_datetime(ticket["updated_at"])}


pipeline = pipeline_for("incremental_cursor")
pipeline.run(tickets(), loader_file_format="parquet")
pipeline.run(tickets(), loader_file_format="parquet")  # nothing new
show(pipeline, "tickets")

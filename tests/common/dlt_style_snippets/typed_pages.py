# Type hints and pendulum in a paginated resource (the style of dlt's "resource" and "incremental" pages)
from _show import pipeline_for, show

import lakeload as dlt
from lakeload.common import pendulum
from lakeload.common.time import ensure_pendulum_datetime
from lakeload.common.typing import TAnyDateTime, TDataItems


@dlt.resource(table_name="events", write_disposition="append", primary_key="id")
def events(start: TAnyDateTime = "2024-05-01T00:00:00Z") -> TDataItems:
    begin = ensure_pendulum_datetime(start)
    for page in range(2):
        yield [
            {"id": page * 3 + i, "at": begin.add(hours=page * 3 + i), "day": begin.add(days=i).date(),
             "label": f"page {page}"}
            for i in range(3)
        ]


pipeline = pipeline_for("typed_pages")
pipeline.run(events(start=pendulum.datetime(2024, 5, 1, 2, tz="Europe/Berlin")), loader_file_format="parquet")
show(pipeline, "events")

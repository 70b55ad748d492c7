# Schema types as hints and a transformer typed with DltResource (the style of dlt's schema and transformer pages)
from collections.abc import Iterator

from _show import pipeline_for, show

import lakeload as dlt
from lakeload.common import Decimal
from lakeload.common.schema import TColumnSchema
from lakeload.common.schema.typing import TTableSchemaColumns, TWriteDisposition
from lakeload.common.typing import TDataItem, TDataItems
from lakeload.extract import DltResource

AMOUNT: TColumnSchema = {"name": "amount", "data_type": "decimal", "precision": 10, "scale": 2}
COLUMNS: TTableSchemaColumns = {"amount": AMOUNT}
DISPOSITION: TWriteDisposition = "replace"


@dlt.resource(primary_key="id", write_disposition=DISPOSITION, columns=COLUMNS)
def orders() -> Iterator[TDataItem]:
    yield [{"id": 1, "amount": Decimal("10.50")}, {"id": 2, "amount": Decimal("3.25")}]


@dlt.transformer(write_disposition="append")
def order_lines(page: TDataItems) -> Iterator[TDataItem]:
    for order in page:
        yield [{"order_id": order["id"], "line": n} for n in range(2)]


def renamed(resource: DltResource) -> DltResource:
    resource.apply_hints(table_name="orders_v2")
    return resource


pipeline = pipeline_for("schema_hints")
orders_v2 = renamed(orders())
pipeline.run([orders_v2, orders_v2 | order_lines], loader_file_format="parquet")
show(pipeline, "orders_v2", "order_lines")

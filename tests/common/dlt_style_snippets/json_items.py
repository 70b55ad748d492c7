# dlt's json and Decimal in a resource that parses an API's raw response (the style of dlt's REST walkthroughs)
from _show import pipeline_for, show

import lakeload as dlt
from lakeload.common import Decimal, json
from lakeload.common.typing import DictStrAny, StrAny, TDataItem

RAW = b'[{"sku": "a-1", "price": "1.10", "meta": {"color": "red", "tags": ["x"]}},' \
      b' {"sku": "b-2", "price": "20.05", "meta": {"color": "blue", "tags": []}}]'


def to_row(item: StrAny) -> DictStrAny:
    return {"sku": item["sku"], "price": Decimal(item["price"]), "meta_json": json.dumps(item["meta"], sort_keys=True)}


@dlt.resource(name="products", write_disposition="replace")
def products() -> TDataItem:
    yield from (to_row(item) for item in json.loadb(RAW))


pipeline = pipeline_for("json_items")
pipeline.run(products(), loader_file_format="parquet")
state_blob = json.typed_dumps({"price": Decimal("1.10"), "when": pipeline.pipeline_name})
assert json.typed_loads(state_blob) == {"price": Decimal("1.10"), "when": "json_items"}
show(pipeline, "products")

"""An asset graph where a lakeload pipeline loads raw data as Delta tables and downstream assets read them
through the Delta Lake I/O manager: `<bucket>/<dataset>/<table>` is `<root_uri>/<schema>/<table>`."""

# no `from __future__ import annotations`: Dagster reads the assets' type annotations at definition time

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
from dagster import AssetIn, AssetKey, Definitions, MaterializeResult, asset
from deltalake import DeltaTable

import lakeload
from lakeload.dagster import DeltaLakeIOManager

ORDERS = [
    {"id": 1, "customer": "ann", "items": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 1}]},
    {"id": 2, "customer": "bob", "items": [{"sku": "a", "qty": 5}]},
    {"id": 3, "customer": "ann", "items": []},
]


def _definitions(bucket: Path, pipelines_dir: Path, seen: dict[str, Any]) -> Definitions:
    from pyspark.sql import DataFrame

    @asset(key=["raw", "orders"])
    def raw_orders() -> MaterializeResult:
        """Loaded by a lakeload pipeline (Spark normalizes; nested items become raw.orders__items)."""
        pipeline = lakeload.pipeline("shop", destination=lakeload.destinations.filesystem(bucket_url=str(bucket)),
                                     dataset_name="raw", pipelines_dir=str(pipelines_dir))
        info = pipeline.run(ORDERS, table_name="orders", table_format="delta", write_disposition="merge",
                            primary_key="id")
        return MaterializeResult(metadata={"load_ids": str(info.loads_ids)})

    @asset(key=["raw", "orders__items"], deps=[raw_orders])
    def raw_order_items() -> None:
        """The nested table the same load wrote."""

    @asset(key_prefix="marts", ins={
        "orders": AssetIn(key=["raw", "orders"], metadata={"columns": ["id", "customer", "_dlt_id"]}),
        "items": AssetIn(key=["raw", "orders__items"]),
    })
    def quantities(orders: DataFrame, items: pd.DataFrame) -> pa.Table:
        seen["order_columns"] = orders.columns
        by_order = orders.toPandas().rename(columns={"_dlt_id": "_dlt_parent_id"})
        joined = items.merge(by_order, on="_dlt_parent_id")
        totals = joined.groupby("customer", as_index=False)["qty"].sum().sort_values("customer")
        return pa.Table.from_pandas(totals, preserve_index=False)

    @asset(key_prefix="marts")
    def top_customer(quantities: pd.DataFrame) -> None:
        seen["top"] = quantities.sort_values("qty").iloc[-1]["customer"]

    return Definitions(
        assets=[raw_orders, raw_order_items, quantities, top_customer],
        resources={"io_manager": DeltaLakeIOManager(root_uri=str(bucket))},
    )


def test_lakeload_pipeline_feeds_downstream_assets(tmp_path: Path, spark: Any) -> None:
    seen: dict[str, Any] = {}
    bucket = tmp_path / "bucket"
    defs = _definitions(bucket, tmp_path / "pipelines", seen)
    job = defs.resolve_implicit_global_asset_job_def()
    assert job.execute_in_process().success
    assert seen["order_columns"] == ["id", "customer", "_dlt_id"]
    assert seen["top"] == "bob"
    totals = DeltaTable(str(bucket / "marts" / "quantities")).to_pyarrow_table().to_pydict()
    assert totals == {"customer": ["ann", "bob"], "qty": [3, 5]}
    # the pipeline's own files sit beside the assets' tables, in dlt's layout
    assert (bucket / "raw" / "_dlt_loads").is_dir() and (bucket / "raw" / "orders" / "_delta_log").is_dir()

    # a second run merges by primary key; the downstream assets see the new snapshot
    ORDERS_V2 = [{"id": 2, "customer": "bob", "items": [{"sku": "a", "qty": 1}]}]
    pipeline = lakeload.pipeline("shop", destination=lakeload.destinations.filesystem(bucket_url=str(bucket)),
                                 dataset_name="raw", pipelines_dir=str(tmp_path / "pipelines"))
    pipeline.run(ORDERS_V2, table_name="orders", table_format="delta", write_disposition="merge", primary_key="id")
    selection = [AssetKey(["marts", "quantities"]), AssetKey(["marts", "top_customer"])]
    assert defs.resolve_implicit_global_asset_job_def().execute_in_process(asset_selection=selection).success
    assert DeltaTable(str(bucket / "marts" / "quantities")).to_pyarrow_table().to_pydict() == {
        "customer": ["ann", "bob"], "qty": [3, 1]}
    assert seen["top"] == "ann"

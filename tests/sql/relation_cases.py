"""Data and relation chains of tests/sql/test_dataset_relations.py, shared with the dlt 1.31 oracle process.

This module imports neither lakeload nor pytest: `python relation_cases.py <out.json> <folder>` runs in a process
whose `PYTHONPATH` puts an older sqlglot and DuckDB first (dlt 1.31's typed relations need sqlglot < 28), loads
the same data with dlt into its own DuckDB database and writes the result of every chain as JSON.
"""

from __future__ import annotations

import datetime
import decimal
import json
import sys
from pathlib import Path
from typing import Any

UTC = datetime.timezone.utc
DATASET = "rel"
KINDS = ("parquet", "delta", "iceberg", "duckdb")

USERS = [
    {"id": 1, "name": "Alice", "city": "berlin", "score": 1.5, "joined": datetime.datetime(2024, 1, 1, tzinfo=UTC),
     "orders": [{"order_id": 101, "total": 42, "items": [{"sku": "a"}, {"sku": "b"}]}, {"order_id": 102, "total": 14}]},
    {"id": 2, "name": "Bob", "city": "london", "score": 2.5, "joined": datetime.datetime(2024, 2, 1, tzinfo=UTC),
     "orders": [{"order_id": 103, "total": 20, "items": [{"sku": "c"}]}]},
    {"id": 3, "name": "O'Hara", "city": None, "score": None, "joined": datetime.datetime(2024, 3, 1, tzinfo=UTC),
     "orders": []},
    {"id": 4, "name": "Dana", "city": "berlin", "score": 0.5, "joined": datetime.datetime(2024, 4, 1, tzinfo=UTC),
     "orders": [{"order_id": 104, "total": 7}]},
]
PURCHASES = [
    {"purchase_id": 1, "user_id": 1, "quantity": 2},
    {"purchase_id": 2, "user_id": 2, "quantity": 1},
    {"purchase_id": 3, "user_id": 1, "quantity": 5},
]
PURCHASE_REFERENCES = [{"columns": ["user_id"], "referenced_table": "users", "referenced_columns": ["id"]}]

# name -> a Python expression over `ds` (the dataset), `sge` (sqlglot.expressions) and `datetime`; each runs on
# lakeload's dataset of every kind and on dlt 1.31's DuckDB dataset
CHAINS = {
    "where_in": 'ds.users.where("id", "in", [3, 1]).select("id", "name").order_by("id").fetchall()',
    "where_not_in": 'ds.users.where("id", "not_in", [3, 1]).select("id").order_by("id").fetchall()',
    "where_ops": '[ds.users.where("id", op, 2).select("id").order_by("id").fetchall() '
                 'for op in ("eq", "ne", "gt", "lt", "gte", "lte")]',
    "filter": 'ds.users.filter("city", "eq", "berlin").select("name").order_by("name").fetchall()',
    "where_sql": 'ds.users.where("score > 1 AND city IS NOT NULL").select("name").order_by("name").fetchall()',
    "where_sqlglot": 'ds.users.where(sge.EQ(this=sge.Column(this=sge.to_identifier("id", quoted=True)), '
                     'expression=sge.Literal.number("4"))).select("name").fetchall()',
    "where_quote": 'ds.users.where("name", "eq", "O\'Hara").select("id").fetchall()',
    "where_timestamp": 'ds.users.where("joined", "gte", datetime.datetime(2024, 2, 1, tzinfo=datetime.timezone.utc))'
                       '.select("id").order_by("id").fetchall()',
    "order_two_keys": 'ds.users.order_by("city", "desc").order_by("id").select("id").fetchall()',
    "limit_then_select": 'ds.users.order_by("id").limit(2).select("id", "name").fetchall()',
    "select_then_limit": 'ds.users.order_by("id").select("id", "name").limit(2).fetchall()',
    "head": 'len(ds.users.head().fetchall())',
    "brackets": 'ds.users[["id", "name"]].order_by("id").fetchall()',
    "bracket_one": 'ds.users[["name"]].order_by("name").fetchall()',
    "limit_then_where": 'ds.users.order_by("id").limit(2).where("id", "gt", 1).select("id").fetchall()',
    "select_columns": 'ds.users.select("name", "id").columns',
    "max": 'ds.users.select("id").max().fetchscalar()',
    "min": 'ds.users.select("score").min().fetchscalar()',
    "max_where": 'ds.users.where("city", "eq", "berlin").select("score").max().fetchscalar()',
    "join_child": 'ds.users.join("users__orders", alias="orders").select("name", "orders__order_id", "orders__total")'
                  '.order_by("orders__order_id").fetchall()',
    "join_columns": 'ds.users.join("users__orders", alias="orders").columns',
    "join_left": 'ds.users.join("users__orders", kind="left").select("id", "users__orders__order_id").order_by("id")'
                 '.order_by("users__orders__order_id").fetchall()',
    "join_parent": 'ds.users__orders.join("users").select("order_id", "users__name").order_by("order_id").fetchall()',
    "join_grandparent": 'ds.users__orders__items.join("users").select("sku", "users__name").order_by("sku").fetchall()',
    "join_grandchild": 'ds.users.join("users__orders__items", alias="item").select("name", "item__sku")'
                       '.order_by("item__sku").fetchall()',
    "join_references": 'ds.purchases.join("users").select("purchase_id", "users__name").order_by("purchase_id").fetchall()',
    "join_on": 'ds.users.join("purchases", on="users.id = purchases.user_id").select("name", "purchases__quantity")'
               '.order_by("purchases__quantity").fetchall()',
    "join_on_relation": 'ds.users.join(ds.purchases.where("quantity", "gt", 1), on="users.id = purchases.user_id", '
                        'alias="big").select("name", "big__quantity").order_by("big__quantity").fetchall()',
    "join_then_where": 'ds.users.join("users__orders", alias="o").where("o__total", "gt", 15).select("name", "o__total")'
                       '.order_by("o__total").fetchall()',
    "where_then_join": 'ds.users.where("id", "eq", 1).join("users__orders", alias="o").select("o__order_id")'
                       '.order_by("o__order_id").fetchall()',
    "two_joins": 'ds.users.join("users__orders", alias="o").join("purchases", on="users.id = purchases.user_id", '
                 'alias="p").select("o__order_id", "p__purchase_id").order_by("o__order_id").order_by("p__purchase_id")'
                 '.fetchall()',
    "sql_join_on": 'ds("SELECT * FROM purchases").join("users", on="purchases.user_id = users.id")'
                   '.select("purchase_id", "users__name").order_by("purchase_id").fetchall()',
    "join_max": 'ds.users.join("users__orders", alias="o").select("o__total").max().fetchscalar()',
    "sql_then_where": 'ds("SELECT id, name FROM users").where("id", "gt", 2).order_by("id").fetchall()',
    "from_loads": 'ds.users__orders.from_loads(ds.load_ids()).select("order_id").order_by("order_id").fetchall()',
    "table_load_ids": 'len(ds.table("users__orders", load_ids=ds.load_ids()).fetchall())',
    "iter_arrow": '[t.num_rows for t in ds.users.where("id", "gt", 1).order_by("id").iter_arrow(chunk_size=2)]',
    "fetchmany": 'ds.users.order_by("id").select("id").fetchmany(2)',
    "fetchone": 'ds.users.order_by("id", "desc").select("id").fetchone()',
    "df": 'ds.users.order_by("id").select("id", "name").df().to_dict("list")',
    # Ibis expressions of the dataset's tables (dlt's `to_ibis()`), run back through `ds(expression)`
    "ibis_join": '(lambda c, p: ds(c.join(p, c.id == p.user_id).filter(p.quantity > 1).select("name", "quantity")'
                 '.order_by("quantity")).fetchall())(ds.users.to_ibis(), ds.purchases.to_ibis())',
    "ibis_isin": '(lambda u: ds(u.filter(u.city.isin(["berlin", "london"])).select("name").order_by("name"))'
                 '.fetchall())(ds.users.to_ibis())',
    "ibis_limit_offset": '(lambda u: ds(u.order_by("id").limit(2, offset=1).select("id").order_by("id")).fetchall())'
                         '(ds.users.to_ibis())',
    "ibis_mutate": '(lambda u: ds(u.mutate(new_id=u.id * 10).select("new_id").order_by("new_id")).fetchall())'
                   '(ds.users.to_ibis())',
    "ibis_timestamp": '(lambda u: ds(u.filter(u.joined >= datetime.datetime(2024, 3, 1, tzinfo=datetime.timezone.utc))'
                      '.select("id").order_by("id")).fetchall())(ds.users.to_ibis())',
    "ibis_of_relation": '(lambda r: ds(r.select("id").order_by("id")).fetchall())(ds.users.where("id", "gt", 2).to_ibis())',
    "ibis_aggregate": '(lambda o: ds(o.aggregate(top=o.total.max())).fetchall())(ds.users__orders.to_ibis())',
}


def plain(value: Any) -> Any:
    """`value` as JSON-able data (tuples as lists, datetimes as ISO text, decimals as text), to compare results."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def run_chains(ds: Any) -> dict[str, Any]:
    """Every chain's result on `ds`, as plain data."""
    import sqlglot.expressions as sge

    scope = {"ds": ds, "sge": sge, "datetime": datetime}
    return {name: plain(eval(chain, scope)) for name, chain in CHAINS.items()}  # noqa: S307 - the test's own chains


def load(dlt: Any, destination: Any, kind: str, pipelines_dir: Path) -> Any:
    """Load USERS and PURCHASES with dlt into `destination` (`kind`: parquet files, delta, iceberg or duckdb)."""
    hints: dict[str, Any] = {"table_format": kind} if kind in ("delta", "iceberg") else {}
    if kind == "parquet":
        hints["file_format"] = "parquet"
    users = dlt.resource(USERS, name="users", **hints)
    purchases = dlt.resource(PURCHASES, name="purchases", references=PURCHASE_REFERENCES, **hints)
    pipeline = dlt.pipeline(pipeline_name=f"rel_{kind}", destination=destination, dataset_name=DATASET,
                            pipelines_dir=str(pipelines_dir))
    pipeline.run([users, purchases])
    return pipeline


def oracle_main(out: str, folder: str) -> None:
    """dlt 1.31 runs every chain on its own DuckDB destination; the results go to `out` as JSON."""
    import os

    os.environ.update({"DLT_PROJECT_DIR": folder, "DLT_DATA_DIR": folder + "/data", "RUNTIME__DLTHUB_TELEMETRY": "false"})
    os.chdir(folder)
    import dlt

    ds = load(dlt, dlt.destinations.duckdb(folder + "/oracle.duckdb"), "duckdb", Path(folder) / "pipelines").dataset()
    Path(out).write_text(json.dumps(run_chains(ds)))


if __name__ == "__main__":
    oracle_main(sys.argv[1], sys.argv[2])

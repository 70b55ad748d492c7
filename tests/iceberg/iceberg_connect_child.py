"""Child process: Iceberg loads with every merge strategy on a Spark Connect server (or, imported, in process).

usage: iceberg_connect_child.py BUCKET PIPELINES_DIR; prints one JSON line: the session kind and the tables' rows.
"""

from __future__ import annotations

import json
import sys
from typing import Any

STRATEGIES: dict[str, dict[str, Any]] = {
    "upserted": {"strategy": "upsert"},
    "versioned": {"strategy": "scd2"},
    "captured": {"strategy": "cdc", "source_filter": "id < 6"},
    "kept": {"strategy": "insert-only"},
}


def loads() -> list[list[dict[str, Any]]]:
    def row(i: int, v: int) -> dict[str, Any]:
        return {"id": i, "name": f"n{i}.v{v}", "tags": [f"t{i}.{k}.v{v}" for k in range(1 + (i + v) % 2)]}

    return [[row(i, 0) for i in range(5)], [row(i, 1) for i in range(3, 8)] + [{"id": 1, "deleted": True}]]


def run_all(bucket: str, pipelines_dir: str) -> dict[str, Any]:
    import lakeload
    from lakeload.spark.session_kind import is_connect

    pipeline = lakeload.pipeline("iceberg_connect", destination=lakeload.destinations.filesystem(bucket),
                                 dataset_name="ds", pipelines_dir=pipelines_dir)
    for data in loads():
        pipeline.run(lakeload.resource(data, name="appended", table_format="iceberg"))
        for name, disposition in STRATEGIES.items():
            columns = {"deleted": {"hard_delete": True, "data_type": "bool"}} if name == "upserted" else None
            rows = [r for r in data if "deleted" not in r] if name != "upserted" else data
            pipeline.run(lakeload.resource(rows, name=name, table_format="iceberg", primary_key="id", columns=columns,
                                           write_disposition={"disposition": "merge", **disposition}))
    tables: dict[str, Any] = {}
    with pipeline.sql_client() as client:
        for name in ["appended", *STRATEGIES]:
            tables[name] = sorted(map(list, client.execute_sql(f"SELECT id, name FROM {name}")), key=str)
            tables[f"{name}__tags"] = sorted(map(list, client.execute_sql(
                f"SELECT t.value, r.id FROM {name}__tags t JOIN {name} r ON t._dlt_parent_id = r._dlt_id")), key=str)
    return {"connect": is_connect(pipeline.spark), "tables": tables}


if __name__ == "__main__":
    print(json.dumps(run_all(sys.argv[1], sys.argv[2])))

"""The scripts `lakeload init <source> <destination>` writes: one runnable pipeline per source kind.

Each template is a complete script (`python <source>_pipeline.py` runs it as written on the embedded local
Spark); `{destination}` is `filesystem` or `duckdb`, `{where}` says where the data goes, and `{table_format_arg}`
becomes `, table_format="delta"` with `--table-format delta`.
"""

from __future__ import annotations

GENERATOR = '''"""A Python generator loaded with lakeload (made by `lakeload init generator {destination}`).

Run it: python generator_pipeline.py   ({where})
"""

import lakeload


@lakeload.resource(primary_key="id", write_disposition="append"{table_format_arg})
def orders(updated_at=lakeload.sources.incremental("updated_at", initial_value=0)):
    """Yield pages of records; the incremental cursor keeps only what is new since the last run."""
    for page in range(3):
        yield [
            {{"id": page * 10 + i, "updated_at": page * 10 + i, "customer": {{"name": f"c{{i}}"}}, "lines": [{{"sku": "a", "qty": i}}]}}
            for i in range(10)
        ]


@lakeload.source
def shop():
    return orders


if __name__ == "__main__":
    pipeline = lakeload.pipeline("generator_pipeline", destination="{destination}", dataset_name="shop_data")
    info = pipeline.run(shop())
    print(info)
    with pipeline.sql_client() as client:
        print(client.execute_sql("SELECT count(*) FROM orders"))
'''

FILESYSTEM = '''"""Files in a folder or bucket loaded with lakeload (made by `lakeload init filesystem {destination}`).

Run it: python filesystem_pipeline.py   (reads the files of [sources.filesystem] bucket_url in .lakeload/config.toml;
writes a sample file there first when it is a local folder without JSONL files; {where})
"""

import json
import os

import lakeload
from lakeload.sources.filesystem import filesystem, read_jsonl

SOURCE_FOLDER = lakeload.config["sources.filesystem.bucket_url"]


def write_sample(folder: str) -> None:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "events.jsonl"), "w") as f:
        for i in range(100):
            f.write(json.dumps({{"id": i, "kind": "click" if i % 2 else "view", "tags": [{{"t": "x"}}]}}) + "\\n")


if __name__ == "__main__":
    if "://" not in SOURCE_FOLDER and (
        not os.path.isdir(SOURCE_FOLDER) or not any(n.endswith(".jsonl") for n in os.listdir(SOURCE_FOLDER))
    ):
        write_sample(SOURCE_FOLDER)
    files = filesystem(file_glob="*.jsonl", incremental=True)  # bucket_url from [sources.filesystem]
    pipeline = lakeload.pipeline("filesystem_pipeline", destination="{destination}", dataset_name="files_data")
    info = pipeline.run((files | read_jsonl()).with_name("events"){run_table_format_arg})
    print(info)
    with pipeline.sql_client() as client:
        print(client.execute_sql("SELECT count(*) FROM events"))
'''

SPARK = '''"""A Spark DataFrame loaded with lakeload (made by `lakeload init spark {destination}`).

Run it: python spark_pipeline.py   (the DataFrame is normalized by Spark's executors; {where})
"""

import lakeload
from pyspark.sql import functions as F


if __name__ == "__main__":
    pipeline = lakeload.pipeline("spark_pipeline", destination="{destination}", dataset_name="spark_data")
    frame = pipeline.spark.range(1000).select(F.col("id"), (F.col("id") % 7).alias("bucket"), F.current_timestamp().alias("at"))
    info = pipeline.run(lakeload.resource(frame, name="numbers"){run_table_format_arg})
    print(info)
    with pipeline.sql_client() as client:
        print(client.execute_sql("SELECT count(*) FROM numbers"))
'''

DEMO = '''"""lakeload's demo events (GitHub-like, nested) loaded with lakeload (made by `lakeload init demo {destination}`).

Run it: python demo_pipeline.py   ({where})
"""

import lakeload
from lakeload.demo.events import generate_events


if __name__ == "__main__":
    pipeline = lakeload.pipeline("demo_pipeline", destination="{destination}", dataset_name="github_events")
    info = pipeline.run(lakeload.resource(generate_events(5000), name="events"), write_disposition="replace"{run_table_format_arg})
    print(info)
    with pipeline.sql_client() as client:
        print(client.execute_sql("SELECT count(*) FROM events"))
'''

SCRIPTS = {"generator": GENERATOR, "filesystem": FILESYSTEM, "spark": SPARK, "demo": DEMO}

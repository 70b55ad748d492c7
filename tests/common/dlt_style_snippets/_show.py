"""Shared by the snippets: a pipeline loading Parquet to a local folder, and the loaded rows printed as JSON."""
import glob
import os

import pyarrow.parquet as pq

import lakeload as dlt
from lakeload.common import json

ROOT = os.environ["SNIPPETS_ROOT"]
BUCKET = os.path.join(ROOT, "bucket")


def pipeline_for(name: str) -> dlt.Pipeline:
    return dlt.pipeline(name, destination=dlt.destinations.filesystem(BUCKET), dataset_name=name,
                        pipelines_dir=os.path.join(ROOT, "pipelines"))


def show(pipeline: dlt.Pipeline, *tables: str) -> None:
    """Every loaded row of `tables` (without dlt's columns), read from the Parquet files in the bucket."""
    found = {}
    for table in tables:
        files = glob.glob(os.path.join(BUCKET, pipeline.dataset_name, table, "**", "*.parquet"), recursive=True)
        rows = [row for path in files for row in pq.read_table(path).to_pylist()]
        found[table] = sorted(json.dumps({k: v for k, v in row.items() if not k.startswith("_dlt")}, sort_keys=True)
                              for row in rows)
    print("RESULT " + json.dumps(found, sort_keys=True))

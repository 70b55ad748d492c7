"""pandas >= 3 with PySpark 4.3: lakeload's paths work, and PySpark's "does not yet fully support pandas" warning
is silenced only where lakeload's own Arrow-only calls raise it (README: Dependencies).

The subprocess test runs a fresh interpreter, so pytest's own `filterwarnings` (which ignores FutureWarning)
plays no part in it.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

import lakeload
from lakeload.spark.pandas_warning import PANDAS_WARNING

PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3
MARKER = "---- the user's own pandas conversion ----"
FRESH_RUN = textwrap.dedent(f"""
    import sys
    import pandas as pd
    import lakeload
    from lakeload.spark.session import get_spark

    pipeline = lakeload.pipeline("pandas3", destination=lakeload.destinations.filesystem(sys.argv[1]),
                                 pipelines_dir=sys.argv[2])
    pipeline.run([{{"id": 1, "nested": {{"tags": ["a", "b"]}}}}], table_name="rows")
    pipeline.run(pd.DataFrame({{"id": [1, 2], "name": ["x", None]}}), table_name="frames")
    spark = get_spark()
    pipeline.run(spark.createDataFrame([(1, "x")], "id long, name string"), table_name="spark_rows",
                 loader_file_format="parquet")
    dataset = pipeline.dataset()
    assert dataset.frames.df()["id"].tolist() == [1, 2]
    assert dataset.rows__nested__tags.spark().count() == 2
    assert dataset("SELECT count(*) AS n FROM spark_rows").spark().collect()[0]["n"] == 1
    print("{MARKER}", file=sys.stderr, flush=True)
    spark.createDataFrame([(1,)], "id long").toPandas()
""")


def test_fresh_process_run_prints_no_pandas_warning(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONWARNINGS", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    args = [sys.executable, "-c", FRESH_RUN, str(tmp_path / "bucket"), str(tmp_path / "pipelines")]
    result = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    lakeload_part, _, user_part = result.stderr.partition(MARKER)
    assert user_part, result.stderr[-3000:]
    assert PANDAS_WARNING not in lakeload_part, lakeload_part
    # not a blanket filter: PySpark still warns about the user's own pandas conversion
    assert (PANDAS_WARNING in user_part) is PANDAS_3, user_part


def test_pandas3_frames_load_exactly(spark: object, bucket: Path, pipelines_dir: Path) -> None:
    """pandas 3's defaults (the `str` dtype, microsecond datetimes) and nullable dtypes, through extract and Spark."""
    frame = pd.DataFrame({
        "name": ["a", None, "ü"],
        "amount": pd.array([1, None, 3], dtype="Int64"),
        "ratio": [0.5, float("nan"), 2.0],
        "flag": pd.array([True, None, False], dtype="boolean"),
        "at": pd.to_datetime(["2024-01-01T00:00:00.000001Z", "2024-06-30T12:00:00Z", None], format="ISO8601", utc=True),
    })
    if PANDAS_3:
        assert str(frame["name"].dtype) == "str"
    for fmt in ("jsonl", "parquet"):
        pipeline = lakeload.pipeline(f"pandas3_{fmt}", destination=lakeload.destinations.filesystem(str(bucket)),
                                     pipelines_dir=str(pipelines_dir), dataset_name=f"ds_{fmt}")
        pipeline.run(frame, table_name="items", loader_file_format=fmt)
        table = pipeline.dataset().items.arrow().select(["name", "amount", "ratio", "flag", "at"]).sort_by("amount")
        assert _rows(table) == [
            {"name": "a", "amount": 1, "ratio": 0.5, "flag": True,
             "at": dt.datetime(2024, 1, 1, 0, 0, 0, 1, tzinfo=dt.timezone.utc)},
            {"name": "ü", "amount": 3, "ratio": 2.0, "flag": False, "at": None},
            {"name": None, "amount": None, "ratio": None, "flag": None,
             "at": dt.datetime(2024, 6, 30, 12, tzinfo=dt.timezone.utc)},
        ], fmt
        back = pipeline.dataset().items.df()
        assert sorted(back["amount"].dropna().astype(int).tolist()) == [1, 3]


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    rows = table.to_pylist()
    for row in rows:
        if isinstance(row["ratio"], float) and row["ratio"] != row["ratio"]:
            row["ratio"] = None
        if row["at"] is not None:
            row["at"] = row["at"].astimezone(dt.timezone.utc)
    return rows

"""A session lakeload starts in its process makes its SQL side only when something uses it (`deferred_session`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHILD = """
import json, sys
import lakeload
from lakeload.spark.session import get_spark
from pyspark.sql import SparkSession
p = lakeload.pipeline("lazy", destination=lakeload.destinations.filesystem(sys.argv[1] + "/bucket"),
                      dataset_name="ds", pipelines_dir=sys.argv[1] + "/pipelines")
p.run([{"id": i, "tags": ["a", "b"], "address": {"city": "x"}} for i in range(10)], table_name="t")
spark = get_spark()
facts = {"made_after_run": spark.made, "same_twice": get_spark() is spark}
user = SparkSession.builder.getOrCreate()  # the user's own session, after lakeload's run
facts.update(users_is_ours=user is spark, made_after_users=spark.made,
             time_zone=user.conf.get("spark.sql.session.timeZone"), active_is_ours=SparkSession.getActiveSession() is spark,
             rows=user.range(3).count(), tags=p.dataset()("SELECT count(*) FROM t__tags").fetchall()[0][0])
print(json.dumps(facts))
"""


@pytest.mark.slow  # a fresh process starting its own Spark
def test_a_small_run_never_makes_the_sql_session_and_the_users_builder_gets_lakeloads(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARK__") and k != "SPARK_REMOTE"}
    env.update(PYTHONPATH=str(REPO), HOME=str(tmp_path / "home"), SPARK__MASTER="local[1]", SPARK__WARM="false")
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts == {"made_after_run": False, "same_twice": True, "users_is_ours": True, "made_after_users": True,
                     "time_zone": "UTC", "active_is_ours": True, "rows": 3, "tags": 20}
    assert done.stderr == ""


SETTINGS_CHILD = """
import json, threading
from lakeload.spark.session import get_spark
from lakeload.spark.session_kind import ignored_settings
from lakeload.spark.settings import SparkSettings
first = threading.Thread(target=get_spark)  # lakeload's session, started in another thread (as a pipeline's)
first.start()
first.join()
spark = get_spark(conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"})
wanted = SparkSettings(conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"})
print(json.dumps({"made": spark.made, "ignored": ignored_settings(spark, wanted)}))
"""


@pytest.mark.slow  # a fresh process starting its own Spark
def test_settings_given_to_get_spark_apply_to_a_session_not_made_yet(tmp_path: Path) -> None:
    """As pyspark's builder applies a call's SQL settings to the session it returns, so does `get_spark(conf=...)`
    to lakeload's session that another thread started and nothing has made yet."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARK__") and k != "SPARK_REMOTE"}
    env.update(PYTHONPATH=str(REPO), HOME=str(tmp_path / "home"), SPARK__MASTER="local[1]", SPARK__WARM="false")
    done = subprocess.run([sys.executable, "-c", SETTINGS_CHILD], env=env, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"made": True, "ignored": []}

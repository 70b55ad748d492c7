"""The dashboard's data layer (`lakeload.dashboard.data`) on a pipeline whose bucket was passed in code: it reads
the bucket the pipeline last loaded to, with credentials from configuration only."""

from __future__ import annotations

from pathlib import Path

import pytest
from servers.buckets import Bucket

import lakeload
from lakeload.dashboard.data import PipelineView

pytestmark = pytest.mark.usefixtures("spark")


@pytest.mark.parametrize("bucket_kind", ["local", pytest.param("s3", marks=pytest.mark.slow)], indirect=True)
def test_the_data_layer_reads_the_bucket_given_in_code(
    tmp_path: Path, bucket_kind: Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipelines = str(tmp_path / "pipelines")
    p = lakeload.pipeline("dash_code", destination=bucket_kind.destination(), dataset_name="ds", pipelines_dir=pipelines)
    p.run([{"id": 1, "tags": ["a", "b"]}, {"id": 2, "tags": []}], table_name="users")
    for name, value in bucket_kind.env.items():  # credentials in configuration, the bucket in none
        if not name.endswith("BUCKET_URL"):
            monkeypatch.setenv(name, value)

    view = PipelineView.open("dash_code", pipelines)

    loads = p.list_completed_load_packages()
    assert [row["load_id"] for row in view.load_history()] == loads
    assert view.rows_per_load() == [{"load_id": loads[0], "table": "users", "rows": 2}]
    assert view.query("SELECT count(*) FROM users__tags") == (["count_star()"], [(2,)])
    assert view.bucket_url().rstrip("/").endswith(bucket_kind.url.rstrip("/").split("://")[-1])

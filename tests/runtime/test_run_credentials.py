"""run(credentials=...) and load(credentials=...): credentials for this pipeline's destination, never stored."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.config.credentials import Credentials

pytestmark = pytest.mark.usefixtures("spark")


def _files_text(folder: Path) -> str:
    texts = []
    for dirpath, _, names in os.walk(folder):
        for name in names:
            texts.append(Path(dirpath, name).read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


@pytest.mark.parametrize("as_object", [False, True])
def test_run_credentials_override_the_configured_ones(as_object: bool, tmp_path: Path, s3_server: Any,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    from servers.fixtures import fresh_prefix

    right = s3_server.credentials()
    wrong = dict(right, aws_secret_access_key="not-the-secret")
    destination = lakeload.destinations.filesystem(s3_server.url(fresh_prefix("creds")), credentials=wrong)
    p = lakeload.pipeline("creds", destination=destination, dataset_name="ds", pipelines_dir=str(tmp_path))
    with pytest.raises(lakeload.LakeloadError):
        p.run([{"id": 1}], table_name="t")
    caplog.set_level("DEBUG")
    info = p.run([{"id": 2}], table_name="t", credentials=Credentials(right) if as_object else right)
    assert info.row_counts == {"t": 1}
    assert p.dataset().t.df()["id"].tolist() == [2]  # the pipeline keeps using them, as dlt's
    assert s3_server.secret_key not in _files_text(tmp_path) and s3_server.secret_key not in caplog.text


def test_credentials_need_a_filesystem_destination(tmp_path: Path) -> None:
    p = lakeload.pipeline("creds_sink", destination=lakeload.destination(lambda items, table: None),
                          pipelines_dir=str(tmp_path))
    with pytest.raises(lakeload.LakeloadError, match="filesystem destination"):
        p.run([{"id": 1}], table_name="t", credentials={"aws_access_key_id": "x"})
